//! Secrets of every common kind stay out of the store and out of git (issue 15): redacted
//! before the journal, and checkpoint commits leave out the files that look like secrets.

use std::fs;

use crate::support::{TestEnv, git, render, repo};

/// The secrets the issue found stored verbatim, one of each kind, made up.
const ISSUE_SECRETS: &[&str] = &[
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "AIzaSyD-1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_51H8x2Lj3kQ9mN4pR7sT0uV",
    "postgres://app:Pa55w0rd-db@db.internal:5432/prod",
    "mongodb+srv://admin:Mong0Pass@cluster0.example.net/db",
    "https://deploy:HttpsPass9@git.example.com/repo.git",
    "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn",
    "--password FlagPass42",
    "APP_SECRET=AppSecret42",
    "SIGNING_PRIVATE_KEY=PrivKey42",
    "GPG_PASSPHRASE=Phrase42",
    "MYSQL_PWD=MyPwd42",
    "SMTP_PASS=SmtpPass42",
    "AWS_CREDENTIALS=Creds42",
    "SSHPASS=SshPass42",
    "AccountKey=QWNjb3VudEtleTQy;",
];

/// The part of each of [`ISSUE_SECRETS`] that must never reach the disk.
fn sensitive(secret: &str) -> &str {
    if let Some(rest) = secret.split_once("://").map(|(_, rest)| rest) {
        let userinfo = rest.split('@').next().unwrap();
        return userinfo.split_once(':').unwrap().1;
    }
    match secret.split_once(['=', ' ']) {
        Some((_, value)) => value.trim_end_matches(';'),
        None => secret,
    }
}

#[test]
fn secrets_of_every_kind_in_the_issue_never_reach_the_disk() {
    let env = TestEnv::new();
    let all = ISSUE_SECRETS.join(" ; ");
    env.ok(&["init", "w", "--phase", "a", "--title", &format!("t {all}")]);
    env.ok(&["start", "a"]);
    env.ok(&["note", &all]);
    env.ok(&["decide", &all]);
    env.ok(&["progress", "a", &all]);
    env.ok(&["complete", "a", "--artifact", ISSUE_SECRETS[0]]);
    let dir = env.workflow_dir("w");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let text = String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned();
        for secret in ISSUE_SECRETS {
            let value = sensitive(secret);
            assert!(!text.contains(value), "{value} reached {}", path.display());
        }
    }
}

#[test]
fn checkpoint_commits_leave_out_secret_files_and_say_why() {
    let env = repo();
    let project = env.project();
    let outside = env.dir.path().join("outside.txt");
    fs::write(&outside, "not the project's").unwrap();
    fs::write(project.join("work.txt"), "the phase's work\n").unwrap();
    fs::write(project.join(".env"), "DEBUG=1\n").unwrap();
    fs::write(project.join(".env.example"), "API_URL=http://localhost\n").unwrap();
    fs::create_dir_all(project.join("certs")).unwrap();
    fs::write(project.join("certs/server.pem"), "not even a key\n").unwrap();
    fs::write(project.join("id_rsa.pub"), "ssh-rsa AAAA\n").unwrap();
    fs::write(
        project.join("config.js"),
        "const key = \"AIzaSyD-1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6\";\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, project.join("escape")).unwrap();
    std::os::unix::fs::symlink("work.txt", project.join("inside")).unwrap();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let output = env.run(&["--format", "json", "complete", "a", "--commit"]);
    assert!(output.status.success(), "{}", render(&env, &output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for line in [
        "warning: left `.env` out of the checkpoint commit: its name matches `.env`",
        "warning: left `certs/server.pem` out of the checkpoint commit: its name matches `*.pem`",
        "warning: left `id_rsa.pub` out of the checkpoint commit: its name matches `id_rsa*`",
        "warning: left `config.js` out of the checkpoint commit: it holds a secret (gcp-api-key)",
        "warning: left `escape` out of the checkpoint commit: it is a symbolic link to",
    ] {
        assert!(stderr.contains(line), "{line}\n{stderr}");
    }
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let commit = &report["checkpoint_commit"];
    let head = git(&project, &["rev-parse", "HEAD"]);
    assert_eq!(commit["sha"], head.trim());
    let left_out: Vec<(&str, &str)> = commit["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| {
            (
                file["path"].as_str().unwrap(),
                file["reason"]["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        left_out,
        [
            (".env", "secret_name"),
            ("certs/server.pem", "secret_name"),
            ("config.js", "secret_content"),
            ("escape", "symlink_outside"),
            ("id_rsa.pub", "secret_name"),
        ]
    );
    let committed = git(&project, &["show", "--name-only", "--format=", "HEAD"]);
    let committed: Vec<&str> = committed.lines().collect();
    for wanted in ["work.txt", ".env.example", "inside"] {
        assert!(committed.contains(&wanted), "{wanted}: {committed:?}");
    }
    for unwanted in [
        ".env",
        "certs/server.pem",
        "config.js",
        "escape",
        "id_rsa.pub",
        ".claude/checkpoints/w/state.json",
    ] {
        assert!(!committed.contains(&unwanted), "{unwanted}: {committed:?}");
    }
    // What was left out is still there, untracked, for the user to decide.
    let status = git(&project, &["status", "--porcelain"]);
    assert!(
        status.contains("?? .env\n") && status.contains("?? config.js\n"),
        "{status}"
    );
}
