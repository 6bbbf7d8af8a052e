//! The effect rules: the shell reader, the built-in list, patterns, the ledger and the guard.

use chrono::{TimeZone, Utc};
use proptest::prelude::*;

use crate::{
    effects::{
        Call, EffectsConfig, Ledger, Matcher, Observed, allow, commands_run, excerpt, key,
        mcp_input, normalized, outstanding, record,
    },
    journal::Entry,
    model::PhaseStatus,
    plan::{PhasePlan, Plan},
    testing::phase,
    transition::{EffectSource, Transition},
};

fn builtin() -> Matcher {
    Matcher::new(&EffectsConfig::default())
}

#[track_caller]
fn effect(command: &str) {
    assert!(
        builtin().is_effect(Call::Bash(command)),
        "`{command}` should be an effect"
    );
}

#[track_caller]
fn not_effect(command: &str) {
    assert!(
        !builtin().is_effect(Call::Bash(command)),
        "`{command}` should not be an effect"
    );
}

#[test]
fn the_builtin_list_is_effects() {
    for command in [
        "git push",
        "git push origin release",
        "git push -u origin HEAD",
        "git push --force-with-lease",
        "gh pr create --fill",
        "gh pr merge 42 --squash",
        "gh pr comment 42 -b hi",
        "gh pr review 42 --approve",
        "gh issue create -t x",
        "gh issue comment 3 -b x",
        "gh issue close 3",
        "gh release create v1.0.0",
        "gh -R owner/repo pr create",
        "gh pr --repo owner/repo create",
        "gh api -X POST repos/o/r/issues",
        "gh api repos/o/r/issues -f title=x",
        "npm publish",
        "npm publish --access public",
        "pnpm publish",
        "yarn npm publish",
        "cargo publish",
        "cargo +nightly publish -p core",
        "docker push registry/image:1",
        "docker image push registry/image:1",
        "kubectl apply -f deploy.yaml",
        "kubectl -n prod apply -f deploy.yaml",
        "kubectl --context prod delete pod x",
        "kubectl create ns x",
        "kubectl patch deploy x -p {}",
        "kubectl rollout restart deploy/x",
        "helm install x chart",
        "helm upgrade --install x chart",
        "helm uninstall x",
        "terraform apply",
        "terraform -chdir=infra apply -auto-approve",
        "terraform destroy",
        "curl -X POST https://example.com",
        "curl -XPOST https://example.com",
        "curl -X post https://example.com",
        "curl --request=POST https://example.com",
        "curl --request PUT https://example.com",
        "curl -X PATCH https://example.com",
        "curl -X DELETE https://example.com/1",
        "curl -sSfXPOST https://example.com",
        "curl -d a=b https://example.com",
        "curl -sd a=b https://example.com",
        "curl --data a=b https://example.com",
        "curl --data-raw a https://example.com",
        "curl --data-binary @f https://example.com",
        "curl --data-urlencode a=b https://example.com",
        "curl --json {} https://example.com",
        "curl -F f=@x https://example.com",
        "curl --form f=@x https://example.com",
        "curl -T file https://example.com",
        "wget --post-data a=b https://example.com",
        "wget --post-file=f https://example.com",
        "wget --method=PUT https://example.com",
        "wget --method DELETE https://example.com",
        "http POST example.com a=b",
        "http post example.com",
        "http PUT example.com",
        "http example.com a=b",
        "http example.com a:=1",
        "http example.com file@f.txt",
        "https DELETE example.com/1",
        "xh POST example.com",
    ] {
        effect(command);
    }
}

#[test]
fn reads_and_dry_runs_are_not_effects() {
    for command in [
        "git status",
        "git pull",
        "git fetch origin",
        "git push --dry-run",
        "git push -n origin main",
        "git log --grep push",
        "gh pr view 42",
        "gh pr list",
        "gh issue list",
        "gh api repos/o/r",
        "npm install",
        "npm publish --dry-run",
        "npm run publish",
        "cargo build",
        "cargo publish --dry-run",
        "cargo publish -n",
        "docker build .",
        "docker pull x",
        "kubectl get pods",
        "kubectl apply --dry-run=client -f x",
        "kubectl rollout status deploy/x",
        "kubectl rollout history deploy/x",
        "helm list",
        "helm install --dry-run x chart",
        "terraform plan",
        "terraform init",
        "curl https://example.com",
        "curl -X GET https://example.com",
        "curl -I https://example.com",
        "curl -G -d q=1 https://example.com",
        "curl -sSL https://example.com -o out",
        "curl -H 'X-Data: 1' https://example.com",
        "wget https://example.com",
        "http example.com",
        "http GET example.com",
        "http localhost",
        "http example.com q==1 X-Header:v",
        "http --offline POST example.com",
        "echo git push",
        "echo 'git push origin main'",
        "grep 'npm publish' README.md",
        "grep -r \"curl -X POST\" docs",
        "printf '%s' 'kubectl apply'",
        "cat <<EOF\ngit push\nEOF",
        "# git push\nls",
        "command -v git",
        "man git-push",
        "git-push-helper --help",
        "",
        "   ",
    ] {
        not_effect(command);
    }
}

#[test]
fn every_shell_form_is_seen_through() {
    for command in [
        "cd app && git push",
        "make test || git push",
        "make; git push",
        "ls | xargs git push",
        "sleep 1 & git push",
        "ls\ngit push",
        "(cd app; git push)",
        "{ git push; }",
        "echo $(git push)",
        "echo \"$(git push origin main)\"",
        "echo `git push`",
        "bash -c 'git push origin main'",
        "sh -c \"cd app && git push\"",
        "bash -lc 'git push'",
        "bash -o pipefail -c 'git push'",
        "zsh -c 'sh -c \"git push\"'",
        "eval 'git push'",
        "GIT_SSH_COMMAND=ssh git push",
        "A=1 B=2 git push",
        "env git push",
        "env -i PATH=/bin git push",
        "env -u HOME git push",
        "env -S 'git push origin'",
        "sudo git push",
        "sudo -u deploy git push",
        "sudo -E -u deploy git push",
        "command git push",
        "exec git push",
        "nohup git push",
        "time git push",
        "nice -n 10 git push",
        "nice git push",
        "timeout 30 git push",
        "timeout -s KILL 30 git push",
        "xargs -n 1 git push",
        "/usr/bin/git push",
        "./node_modules/.bin/npm publish",
        "git -C repo push",
        "git -c user.name=x push origin main",
        "git --git-dir=.git push",
        "git --no-pager push",
        "'git' 'push'",
        "g\\it push",
        "\"git\" push",
        "git push 2>&1 | tee log",
        "git push > out.txt",
        "if true; then git push; fi",
        "for b in a; do git push origin $b; done",
        "true && sudo env A=1 timeout 5 bash -c 'cd x && git push'",
    ] {
        effect(command);
    }
}

#[test]
fn commands_are_split_and_unquoted_as_a_shell_would() {
    assert_eq!(
        commands_run("cd 'my dir' && FOO=1 sudo -u me git -C \"a b\" push origin"),
        vec![
            vec!["cd".to_owned(), "my dir".into()],
            vec![
                "git".into(),
                "-C".into(),
                "a b".into(),
                "push".into(),
                "origin".into()
            ],
        ]
    );
    assert_eq!(
        commands_run("echo $(date) > f 2>&1; cat <<'X'\ngit push\nX\nls"),
        vec![
            vec!["date".to_owned()],
            vec!["echo".into(), "".into()],
            vec!["cat".into()],
            vec!["ls".into()],
        ]
    );
    assert_eq!(commands_run("command -v git"), Vec::<Vec<String>>::new());
}

#[test]
fn config_and_plan_patterns_add_and_remove() {
    let config = EffectsConfig {
        builtin: true,
        commands: vec![
            "./scripts/deploy.sh*".into(),
            "!git push origin scratch*".into(),
            "mcp__slack__*".into(),
            "!mcp__slack__read*".into(),
        ],
        ..EffectsConfig::default()
    };
    let matcher = Matcher::new(&config);
    assert!(matcher.is_effect(Call::Bash("./scripts/deploy.sh prod")));
    assert!(matcher.is_effect(Call::Bash("cd x && ./scripts/deploy.sh")));
    assert!(matcher.is_effect(Call::Bash("sudo ./scripts/deploy.sh   prod")));
    assert!(!matcher.is_effect(Call::Bash("./scripts/build.sh")));
    assert!(!matcher.is_effect(Call::Bash("git push origin scratch")));
    assert!(matcher.is_effect(Call::Bash("git push origin main")));
    // The removal is of that command only: the other one still counts.
    assert!(matcher.is_effect(Call::Bash("git push origin scratch && npm publish")));
    assert!(matcher.is_effect(Call::Mcp("mcp__slack__post_message")));
    assert!(!matcher.is_effect(Call::Mcp("mcp__slack__read_channel")));
    assert!(!matcher.is_effect(Call::Mcp("mcp__github__create_issue")));
    // Bash patterns never name MCP tools, and the reverse.
    assert!(!matcher.is_effect(Call::Bash("mcp__slack__post_message")));

    let off = Matcher::new(&EffectsConfig {
        builtin: false,
        commands: vec!["terraform apply*".into()],
        ..EffectsConfig::default()
    });
    assert!(!off.is_effect(Call::Bash("git push")));
    assert!(off.is_effect(Call::Bash("terraform apply -auto-approve")));

    let plan: Plan = toml::from_str(
        "[[phases]]\nid = \"deploy\"\neffects = [\"./deploy.sh*\", \"mcp__github__*\", \"!git push*\"]\n",
    )
    .unwrap();
    let workflow = plan
        .into_workflow("w".parse().unwrap(), None, now())
        .unwrap();
    let matcher = Matcher::for_workflow(&EffectsConfig::default(), &workflow);
    assert!(matcher.is_effect(Call::Bash("./deploy.sh staging")));
    assert!(matcher.is_effect(Call::Mcp("mcp__github__create_issue")));
    assert!(!matcher.is_effect(Call::Bash("git push")));
    assert!(Matcher::new(&EffectsConfig::default()).is_effect(Call::Bash("git push")));
    let json: Plan = serde_json::from_str(r#"{"phases":[{"id":"a","effects":["x*"]}]}"#).unwrap();
    assert_eq!(json.phases[0].effects, ["x*"]);
    let spec = PhasePlan::from_spec("a").unwrap();
    assert!(spec.effects.is_empty());
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 26, 14, 2, 0).unwrap()
}

#[test]
fn globs_match_the_whole_text() {
    let matcher = |pattern: &str, text: &str| {
        Matcher::new(&EffectsConfig {
            builtin: false,
            commands: vec![pattern.into()],
            ..EffectsConfig::default()
        })
        .is_effect(Call::Bash(text))
    };
    assert!(matcher("make deploy", "make   deploy"));
    assert!(!matcher("make deploy", "make deploy-docs"));
    assert!(matcher("make deploy*", "make deploy-docs"));
    assert!(matcher("make ?eploy", "make deploy"));
    assert!(matcher("*deploy*", "echo hi; ./x/deploy.sh"));
    assert!(matcher("a\\*b", "a*b"));
    assert!(!matcher("a\\*b", "axb"));
    assert!(matcher("*", "anything at all"));
}

#[test]
fn keys_are_the_call_with_its_whitespace_collapsed() {
    assert_eq!(
        normalized("  git   push\n origin\tmain "),
        "git push origin main"
    );
    let a = key(Call::Bash(""), "", "git push origin main");
    assert_eq!(a, key(Call::Bash(""), "", " git  push   origin\nmain"));
    assert_ne!(a, key(Call::Bash(""), "", "git push origin release"));
    assert_eq!(a.len(), 32);
    let tool = "mcp__slack__post";
    let one = mcp_input(&serde_json::json!({"channel": "c", "text": "hi"}));
    let other = mcp_input(&serde_json::json!({"text": "hi", "channel": "c"}));
    assert_eq!(one, other);
    assert_ne!(
        key(Call::Mcp(tool), "", &one),
        key(Call::Bash(""), "", &one)
    );
}

fn entry(seq: u64, transition: Transition) -> Entry {
    Entry {
        seq,
        at: now(),
        transition,
    }
}

fn pushed(workflow: &crate::Workflow, command: &str, ok: bool) -> Transition {
    record(
        workflow,
        None,
        Observed {
            call: Call::Bash(command),
            input: command,
            dir: None,
            place: "",
            output: Some("To origin\n * [new branch] release"),
            ok,
            session_id: Some("s1"),
            agent_id: None,
            call_id: None,
            source: EffectSource::Hook,
        },
    )
}

fn workflow() -> crate::Workflow {
    let mut workflow = Plan {
        phases: vec![
            PhasePlan::from_spec("build").unwrap(),
            PhasePlan::from_spec("deploy:build").unwrap(),
        ],
        ..Plan::default()
    }
    .into_workflow("w".parse().unwrap(), None, now())
    .unwrap();
    workflow.phases[1].status = PhaseStatus::InProgress;
    workflow.phases[1].attempts = 2;
    workflow
}

#[test]
fn a_record_is_on_the_phase_in_progress_redacted_and_cut() {
    let workflow = workflow();
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let command = format!("git push https://x:{secret}@github.com/o/r");
    let output = format!("{secret} {}", "é".repeat(3000));
    let transition = record(
        &workflow,
        None,
        Observed {
            call: Call::Bash(&command),
            input: &command,
            dir: None,
            place: "",
            output: Some(&output),
            ok: true,
            session_id: Some("s1"),
            agent_id: None,
            call_id: None,
            source: EffectSource::Hook,
        },
    );
    let Transition::Effect {
        phase: Some(phase),
        attempt,
        tool,
        command: recorded,
        output: Some(excerpt_text),
        key: recorded_key,
        ..
    } = &transition
    else {
        panic!("{transition:?}");
    };
    assert_eq!(phase.as_str(), "deploy");
    assert_eq!(*attempt, Some(2));
    assert_eq!(tool.as_deref(), Some("Bash"));
    assert!(!recorded.contains(secret), "{recorded}");
    assert!(!excerpt_text.contains(secret));
    assert!(excerpt_text.chars().count() <= 1000);
    assert_eq!(recorded_key, &key(Call::Bash(""), "", &command));
    assert_eq!(excerpt(""), "");
    assert_eq!(excerpt(&"a".repeat(1000)).chars().count(), 1000);
    assert_eq!(excerpt(&"a".repeat(1001)).chars().count(), 1000);
    assert!(excerpt(&"a".repeat(1001)).ends_with('…'));
}

#[test]
fn the_ledger_numbers_guards_and_allows_once() {
    let workflow = workflow();
    let push = "git push origin release";
    let push_key = key(Call::Bash(""), "", push);
    let mut ledger = Ledger::default();
    assert!(ledger.guard(&push_key).is_none());
    ledger.push(&entry(
        5,
        pushed(&workflow, "git push origin broken", false),
    ));
    ledger.push(&entry(6, Transition::Note { text: "x".into() }));
    ledger.push(&entry(7, pushed(&workflow, push, true)));
    assert_eq!(ledger.effects.len(), 2);
    assert_eq!(ledger.effects[1].number, 2);
    assert_eq!(ledger.guard(&push_key).map(|effect| effect.number), Some(2));
    // A failed call guards nothing, and cannot be allowed.
    assert!(
        ledger
            .guard(&key(Call::Bash(""), "", "git push origin broken"))
            .is_none()
    );
    assert!(allow(&ledger, 1, None).is_err());
    assert!(allow(&ledger, 0, None).is_err());
    assert!(allow(&ledger, 3, None).is_err());
    assert!(allow(&ledger, u64::MAX, None).is_err());
    let allowed = allow(&ledger, 2, Some("ana".into())).unwrap();
    ledger.push(&entry(8, allowed));
    assert!(ledger.guard(&push_key).is_none());
    // Twice is refused: one repeat is allowed at a time.
    assert!(allow(&ledger, 2, None).is_err());
    // A failed repeat keeps the allow; a recorded one uses it up.
    ledger.push(&entry(9, pushed(&workflow, push, false)));
    assert!(ledger.guard(&push_key).is_none());
    ledger.push(&entry(10, pushed(&workflow, push, true)));
    assert_eq!(ledger.guard(&push_key).map(|effect| effect.number), Some(4));
    assert_eq!(outstanding(&workflow, &ledger).len(), 2);
}

#[test]
fn outstanding_effects_are_those_of_unfinished_phases() {
    let mut workflow = workflow();
    let mut ledger = Ledger::default();
    ledger.push(&entry(1, pushed(&workflow, "git push a", true)));
    workflow.phases[1].status = PhaseStatus::Complete;
    ledger.push(&entry(
        2,
        record(
            &workflow,
            Some(&phase("build")),
            Observed {
                call: Call::Bash("npm publish"),
                input: "npm publish",
                dir: None,
                place: "",
                output: None,
                ok: true,
                session_id: None,
                agent_id: None,
                call_id: None,
                source: EffectSource::Manual,
            },
        ),
    ));
    let listed: Vec<u64> = outstanding(&workflow, &ledger)
        .iter()
        .map(|effect| effect.number)
        .collect();
    assert_eq!(listed, [2]);
}

/// Words a shell reads as plain text.
fn plain_word() -> impl Strategy<Value = String> {
    // Not an option: `-n` would make a push a dry run.
    "[a-z0-9_./][a-z0-9_./-]{0,7}"
}

proptest! {
    /// A builtin effect stays one behind any separator, wrapper or quoting, and a word that
    /// only mentions it (an argument of `echo`, a quoted string) never is.
    #[test]
    fn effects_are_found_in_any_shell_form(
        before in prop::collection::vec(plain_word(), 0..3),
        args in prop::collection::vec(plain_word(), 0..3),
        separator in prop::sample::select(vec!["&&", "||", ";", "|", "&", "\n"]),
        wrapper in prop::sample::select(vec!["", "sudo ", "env A=1 ", "timeout 5 ", "nohup ", "command ", "/usr/bin/env ", "A=b "]),
        form in 0usize..5,
    ) {
        let push = format!("git push {}", args.join(" "));
        let quoted = push.replace('\'', "");
        let inner = match form {
            0 => format!("{wrapper}{push}"),
            1 => format!("bash -c '{wrapper}{quoted}'"),
            2 => format!("echo $({wrapper}{push})"),
            3 => format!("( {wrapper}{push} )"),
            _ => format!("{wrapper}/usr/bin/{push}"),
        };
        let command = if before.is_empty() {
            inner
        } else {
            format!("echo {} {separator} {inner}", before.join(" "))
        };
        prop_assert!(builtin().is_effect(Call::Bash(&command)), "{}", command);
        let mentioned = format!("echo '{command}'");
        prop_assert!(!builtin().is_effect(Call::Bash(&mentioned.replace('\n', " "))) || command.contains('\''), "{}", mentioned);
    }

    /// The reader never panics, whatever the text.
    #[test]
    fn any_text_reads(text in "\\PC{0,80}") {
        let _ = builtin().is_effect(Call::Bash(&text));
    }

    /// Nesting deeper than the reader follows ends without overflowing the stack.
    #[test]
    fn deep_nesting_ends(depth in 0usize..200) {
        let command = format!("{}git push{}", "$(".repeat(depth), ")".repeat(depth));
        let _ = builtin().is_effect(Call::Bash(&command));
        let command = format!("{}git push{}", "bash -c '".repeat(depth.min(40)), "'".repeat(depth.min(40)));
        let _ = builtin().is_effect(Call::Bash(&command));
    }
}

#[test]
fn a_repeat_is_asked_only_where_a_person_sits() {
    use crate::effects::{Attendance, Refusal};
    assert_eq!(Refusal::for_session(Attendance::Attended), Refusal::Ask);
    assert_eq!(Refusal::for_session(Attendance::Unattended), Refusal::Deny);
}

#[test]
fn the_reason_names_what_ran_and_how_to_let_it_through() {
    let workflow = workflow();
    let mut ledger = Ledger::default();
    ledger.push(&entry(
        3,
        pushed(&workflow, "git push origin release", true),
    ));
    let effect = &ledger.effects[0];
    let id: crate::WorkflowId = "w".parse().unwrap();
    let reason = crate::effects::reason(effect, &id, false);
    for part in [
        "effect 1",
        "`git push origin release`",
        "2026-11-26 14:02 UTC",
        "phase `deploy` (attempt 2)",
        "session s1",
        "[new branch] release",
        "`checkpoint effects allow 1`",
    ] {
        assert!(reason.contains(part), "{part} in {reason}");
    }
    assert!(
        crate::effects::reason(effect, &id, true)
            .contains("`checkpoint effects allow 1 --workflow w`")
    );
}

#[test]
fn the_resume_prompt_lists_what_is_done_first() {
    use crate::{config::Config, resume::Briefing, testing::Files};
    let workflow = workflow();
    let mut ledger = Ledger::default();
    for i in 0..20 {
        ledger.push(&entry(
            i + 1,
            pushed(&workflow, &format!("git push origin b{i}"), true),
        ));
    }
    let briefing = Briefing::new(
        &workflow,
        &[],
        &Files(Vec::new()),
        &Config::default(),
        now(),
    )
    .with_effects(&workflow, &ledger);
    assert_eq!(briefing.plan.effects.len(), 20);
    let prompt = briefing.prompt_within(2500);
    assert!(
        prompt.contains("**Already done — do not repeat:**"),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "- 20. `git push origin b19` at 2026-11-26 14:02 UTC (phase deploy) → To origin"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("… 8 earlier (see `checkpoint effects`)"),
        "{prompt}"
    );
    assert!(
        prompt.contains("`checkpoint effects allow <n>`"),
        "{prompt}"
    );
    let without = Briefing::new(
        &workflow,
        &[],
        &Files(Vec::new()),
        &Config::default(),
        now(),
    );
    assert!(!without.prompt().contains("Already done"));
}

/// The effect commands the built-in list finds in a line, as the ledger keys them.
fn found(command: &str) -> Vec<String> {
    builtin()
        .effects(Call::Bash(command))
        .effects
        .into_iter()
        .map(|effect| effect.shown())
        .collect()
}

#[test]
fn here_documents_are_read_wherever_a_shell_reads_them() {
    let push = vec!["git push origin main".to_owned()];
    for command in [
        // Claude Code's own commit form, an apostrophe in the message.
        "git commit -m \"$(cat <<'EOF'\nFix the flow so it doesn't break\nEOF\n)\" && git push origin main",
        "git commit -m \"$(cat <<EOF\nit's done (really\nEOF\n)\" && git push origin main",
        "git commit -m \"$(cat <<\"EOF\"\nwon't ) close\nEOF\n)\"; git push origin main",
        "git commit -m \"$(cat <<-EOF\n\tdon't\n\tEOF\n)\" && git push origin main",
        "git commit -m `cat <<'EOF'\nit's\nEOF\n` && git push origin main",
        "bash -c \"git commit -m \\\"\\$(cat <<'EOF'\nit's\nEOF\n)\\\" && git push origin main\"",
        "cat <<'EOF' > notes.md\ngit push origin release\nit's\nEOF\ngit push origin main",
        "cat > notes.md <<EOF\n$(date) isn't\nEOF\ngit push origin main",
    ] {
        let read = builtin().effects(Call::Bash(command));
        assert_eq!(found(command), push, "{command}");
        assert_eq!(read.doubt, None, "{command}");
    }
}

#[test]
fn a_line_the_reader_doubts_is_searched_as_raw_text() {
    for command in [
        "git commit -m \"it's && git push origin main",
        "echo 'unclosed && git push origin main",
        "echo $(git push origin main",
        "echo `git push origin main",
        "cat <<EOF && git push origin main\nno end here",
    ] {
        let read = builtin().effects(Call::Bash(command));
        assert!(read.doubt.is_some(), "{command}");
        assert!(
            found(command).contains(&"git push origin main".to_owned()),
            "{command}: {:?}",
            found(command)
        );
    }
    // A line read to its end is not searched as raw text: a mention stays a mention.
    assert_eq!(found("echo 'git push origin main'"), Vec::<String>::new());
}

#[test]
fn an_effect_is_the_command_the_reader_extracted() {
    let plain = "gh pr create --title T --body B";
    for command in [
        plain,
        "cd . && gh pr create --title T --body B",
        "gh pr create --title T --body B && echo ok",
        "sudo gh pr create --title T --body B",
        "VAR=x gh pr create --title T --body B",
        "bash -c 'gh pr create --title T --body B'",
        "timeout 60 env A=1 gh pr create --title 'T' --body \"B\"",
        "echo start; gh  pr create   --title T --body B 2>&1 | tee log",
    ] {
        let effects = builtin().effects(Call::Bash(command)).effects;
        assert_eq!(effects.len(), 1, "{command}");
        assert_eq!(effects[0].text, plain, "{command}");
        assert_eq!(
            key(Call::Bash(command), "", &effects[0].text),
            key(Call::Bash(plain), "", plain),
            "{command}"
        );
    }
    // The directory counts: the ledger tells `cd vendor && git push` from the root's.
    let moved = builtin()
        .effects(Call::Bash("cd vendor && git push"))
        .effects;
    assert_eq!(moved[0].dir.as_deref(), Some("vendor"));
    assert_eq!(moved[0].place, crate::effects::Place::Repository);
    let folded = builtin().effects(Call::Bash("git -C vendor push")).effects;
    assert_eq!(
        (folded[0].text.as_str(), folded[0].dir.as_deref()),
        ("git push", Some("vendor"))
    );
    let nested = builtin()
        .effects(Call::Bash("cd a && cd ../b && git push"))
        .effects;
    assert_eq!(nested[0].dir.as_deref(), Some("a/../b"));
    let home = builtin()
        .effects(Call::Bash("cd vendor && cd ~ && git push"))
        .effects;
    assert_eq!(home[0].dir, None);
    // Two effects in one line are two effects.
    assert_eq!(
        found("git push origin main && npm publish --access public"),
        vec![
            "git push origin main".to_owned(),
            "npm publish --access public".into()
        ]
    );
    assert_eq!(
        found("cd pkg && npm publish"),
        vec!["cd pkg && npm publish".to_owned()]
    );
}

#[test]
fn wrappers_that_run_a_command_are_seen_through() {
    for (command, effect) in [
        ("npx npm publish", "npm publish"),
        ("npx -y --package npm npm publish", "npm publish"),
        ("npm exec -- npm publish", "npm publish"),
        ("npx -c 'npm publish'", "npm publish"),
        (
            "find . -name x -exec git push origin main \\;",
            "git push origin main",
        ),
        (
            "find . -execdir git push origin main {} +",
            "git push origin main '{}'",
        ),
        (
            "git submodule foreach git push origin main",
            "git push origin main",
        ),
        (
            "git submodule --quiet foreach --recursive 'git push origin main'",
            "git push origin main",
        ),
        ("bash <<< \"git push origin main\"", "git push origin main"),
        ("sh <<<'git push origin main'", "git push origin main"),
        (
            "echo \"git push origin main\" | bash",
            "git push origin main",
        ),
        (
            "printf 'git push origin main' | sh -s",
            "git push origin main",
        ),
        (
            "bash <<'EOF'\ncd x\ngit push origin main\nEOF",
            "cd x && git push origin main",
        ),
        (
            "cat <<EOF | sh\ngit push origin main\nEOF",
            "git push origin main",
        ),
        (
            "sudo bash <<EOF\ngit push origin main\nEOF",
            "git push origin main",
        ),
    ] {
        assert_eq!(found(command), vec![effect.to_owned()], "{command}");
    }
    // What only reads a here-document or an echo runs nothing of it.
    for command in [
        "cat <<EOF\ngit push\nEOF",
        "echo 'git push' | tee notes",
        "grep push <<< 'git push'",
        "echo 'git push' || bash",
    ] {
        assert_eq!(found(command), Vec::<String>::new(), "{command}");
    }
}

#[test]
fn asking_for_help_is_not_an_effect() {
    for command in [
        "git push --help",
        "git push -h",
        "npm publish --help",
        "gh pr create -h",
        "cargo publish --help",
        "docker push --help",
        "curl -h -X POST",
        "kubectl apply -h",
    ] {
        not_effect(command);
    }
    // An argument after `--` is not an option.
    effect("git push origin -- -h");
}

/// Text a here-document or a quoted message may hold: apostrophes, parentheses, quotes.
fn prose() -> impl Strategy<Value = String> {
    "[a-z ()'\"`;&|]{0,20}"
}

proptest! {
    /// Any line that runs a built-in effect as a command, whatever wrappers, quoting,
    /// here-documents or neighbours around it, makes that effect, extracted as its own words.
    #[test]
    fn an_effect_run_as_a_command_is_always_found(
        args in prop::collection::vec(plain_word(), 0..3),
        message in prose(),
        wrapper in prop::sample::select(vec!["", "sudo ", "env A=1 ", "timeout 5 ", "nohup ", "command ", "A=b ", "npx "]),
        before in 0usize..5,
        form in 0usize..9,
        after in 0usize..3,
    ) {
        let push = if args.is_empty() { "git push".to_owned() } else { format!("git push {}", args.join(" ")) };
        let message = message.replace("EOF", "");
        let inner = match form {
            0 => format!("{wrapper}{push}"),
            1 => format!("bash -c '{wrapper}{push}'"),
            2 => format!("echo $({wrapper}{push})"),
            3 => format!("bash <<< '{push}'"),
            4 => format!("echo '{push}' | {wrapper}bash"),
            5 => format!("bash <<'EOF'\n{push}\nEOF\n"),
            6 => format!("find . -exec {push} \\;"),
            7 => format!("git submodule foreach '{push}'"),
            _ => format!("eval '{push}'"),
        };
        let before = match before {
            0 => String::new(),
            1 => format!("git commit -m \"$(cat <<'EOF'\n{message}\nEOF\n)\" && "),
            2 => format!("cat <<-EOF > notes\n\t{message}\n\tEOF\n"),
            3 => "cd . && ".to_owned(),
            _ => "make test; ".to_owned(),
        };
        let after = match after {
            0 => "",
            1 => " && echo ok",
            _ => " 2>&1 | tee log",
        };
        let command = format!("{before}{inner}{after}");
        let texts: Vec<String> = builtin()
            .effects(Call::Bash(&command))
            .effects
            .into_iter()
            .map(|effect| effect.text)
            .collect();
        prop_assert!(texts.contains(&push), "{:?} has no `{}`: {:?}", command, push, texts);
    }
}

#[test]
fn a_secret_leaves_no_trace_in_the_effect() {
    let text = |secret: &str| -> Vec<String> {
        [
            format!("curl -u ana:'{secret}' -X POST https://x/hook"),
            format!("gh api -X POST repos/o/r/issues --password='{secret}'"),
            format!("curl -H 'Cookie: session={secret}' -X PUT https://x/b"),
        ]
        .iter()
        .map(|command| {
            builtin().effects(Call::Bash(command)).effects[0]
                .text
                .clone()
        })
        .collect()
    };
    assert_eq!(text("hunter2"), text("two words"));
    assert_eq!(text("hunter2"), text("Tr0ub4dor&3"));
}
