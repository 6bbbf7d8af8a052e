//! Tests of running the `checkpoint` binary: the typed error a command writes to its error file,
//! and the error of a command that dies without writing one, with a stand-in `checkpoint`.

use std::{fs, os::unix::fs::PermissionsExt as _};

use checkpoint_contract::diagnostic;

use super::*;

/// A stand-in `checkpoint`: a shell script with this body, in a directory of its own.
fn fake_cli(body: &str) -> (tempfile::TempDir, Cli) {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("checkpoint");
    fs::write(&program, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    (dir, Cli::new(program, None))
}

fn run(cli: &Cli) -> Result<Printed, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(cli.run("json", None, &["status".into()]))
}

/// The error is the report in the file, whatever stderr says (a last line that looks like
/// another report included), with the command's exit status.
#[test]
fn the_error_is_the_report_in_the_file_not_stderr() {
    let (_dir, cli) = fake_cli(&format!(
        r#"printf '%s' '{{"message": "timed out", "code": "{}", "help": "raise it"}}' > "${}"
echo 'warning: waiting for the lock' >&2
echo '{{"message": "a decoy", "code": "checkpoint::decoy"}}' >&2
exit {}"#,
        diagnostic::STORE_LOCKED,
        env::CHECKPOINT_ERROR_FILE,
        exit_code::LOCKED,
    ));
    let error = run(&cli).unwrap_err();
    assert_eq!(
        error,
        CliError {
            message: "timed out".into(),
            code: Some(diagnostic::STORE_LOCKED.into()),
            hint: Some("raise it".into()),
            exit_code: Some(exit_code::LOCKED.into()),
        }
    );
    assert_eq!(
        error.to_text(),
        format!(
            "error [{}]: timed out\nhint: raise it",
            diagnostic::STORE_LOCKED
        )
    );
}

/// The error file is empty and private for each call, and gone after it.
#[test]
fn each_call_gets_an_empty_private_error_file() {
    let (dir, cli) = fake_cli(&format!(
        r#"f="${}"; test -f "$f" && test ! -s "$f" || exit 1
ls -ld "$(dirname "$f")" | cut -c1-10 > "{}/mode"
echo "$f" >> "{}/seen"; printf '{{}}'"#,
        env::CHECKPOINT_ERROR_FILE,
        "$(dirname \"$0\")",
        "$(dirname \"$0\")",
    ));
    for _ in 0..2 {
        assert_eq!(run(&cli).unwrap().stdout, "{}");
    }
    let seen = fs::read_to_string(dir.path().join("seen")).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0], seen[1], "each call has its own file");
    assert!(
        seen.iter().all(|file| !Path::new(file).exists()),
        "{seen:?}"
    );
    let mode = fs::read_to_string(dir.path().join("mode")).unwrap();
    assert_eq!(mode.trim(), "drwx------");
}

/// A command that dies without writing its error (a crash, a signal, an older `checkpoint`) is
/// an error that names its exit status and shows the end of its stderr; one that writes a
/// report this server cannot read says so.
#[test]
fn a_command_that_writes_no_report_is_named_by_its_exit_status() {
    let (_dir, cli) = fake_cli("echo 'thread main panicked at src/x.rs' >&2; exit 101");
    let error = run(&cli).unwrap_err();
    assert_eq!(error.code.as_deref(), Some(mcp::NO_REPORT));
    assert_eq!(error.exit_code, Some(101));
    assert!(error.message.contains("exit status: 101"), "{error:?}");
    assert!(
        error.message.contains("without writing its error"),
        "{error:?}"
    );
    assert!(error.message.contains("panicked at src/x.rs"), "{error:?}");

    let (_dir, cli) = fake_cli("kill -9 $$");
    let error = run(&cli).unwrap_err();
    assert_eq!(error.code.as_deref(), Some(mcp::NO_REPORT));
    assert_eq!(error.exit_code, None);
    assert!(error.message.contains("signal: 9"), "{error:?}");

    let (_dir, cli) = fake_cli(&format!(
        "echo 'error: usage' > \"${}\"; exit 2",
        env::CHECKPOINT_ERROR_FILE
    ));
    let error = run(&cli).unwrap_err();
    assert_eq!(error.code.as_deref(), Some(mcp::NO_REPORT));
    assert_eq!(error.exit_code, Some(exit_code::USAGE.into()));
    assert!(error.message.contains("cannot read"), "{error:?}");
}

/// A successful command's stderr is its warnings, whatever it holds.
#[test]
fn stderr_of_a_success_is_warnings() {
    let (_dir, cli) = fake_cli("echo '{\"message\": \"m\"}' >&2; printf '{}'");
    let printed = run(&cli).unwrap();
    assert_eq!(printed.warnings, "{\"message\": \"m\"}");
}
