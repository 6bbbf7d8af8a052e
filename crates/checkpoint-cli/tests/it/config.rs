//! `config.toml`: an unknown key is a warning, and everything keeps working.

use std::fs;

use crate::support::{TestEnv, hook_with_open_stdin, render};

#[test]
fn an_unknown_config_key_is_a_warning_and_everything_keeps_working() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    fs::write(
        env.store().join("config.toml"),
        "stale_after_days = 3\nmax_in_progres = 1\n",
    )
    .unwrap();
    let output = env.run(&["start", "a"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("warning: unknown key `max_in_progres` in `")
            && rendered
                .contains("config.toml` line 2 (did you mean `max_in_progress`?): it is ignored"),
        "{rendered}"
    );
    // Hooks keep recording.
    let payload = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": env.project(),
        "hook_event_name": "Stop", "stop_hook_active": false,
    });
    let (mut child, stdin) = hook_with_open_stdin(&env, "Stop", payload.to_string().as_bytes());
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(env.state("w")["last_activity"]["source"], "Stop");
}
