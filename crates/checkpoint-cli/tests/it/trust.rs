//! Trust under hostile input (issue 15): secrets of every common kind stay out of the store and
//! out of git, names the store uses are refused, control characters are escaped, exit codes
//! follow the documented table, and hooks act on a complete payload without waiting for EOF.

use std::fs;

use crate::support::TestEnv;

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
