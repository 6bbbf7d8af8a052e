//! Tests of `cargo xtask install`'s layout.

use std::{fs, path::Path};

use crate::install::install_into;

/// A bundle laid out as `cargo xtask dist` writes it, each file holding its own name.
fn fake_bundle(dir: &Path) {
    for file in [
        "bin/checkpoint",
        "bin/checkpoint-mcp",
        "man/checkpoint.1",
        "man/checkpoint-status.1",
        "man/checkpoint-task-add.1",
        "completions/checkpoint.bash",
        "completions/_checkpoint",
        "completions/checkpoint.fish",
    ] {
        let path = dir.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, file).unwrap();
    }
}

#[test]
fn binaries_man_page_and_completions_land_where_shells_look() {
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("bundle");
    fake_bundle(&bundle);
    let prefix = work.path().join("prefix");

    let installed = install_into(&bundle, &prefix).unwrap();

    assert_eq!(installed.len(), 8);
    let read = |path: &str| fs::read_to_string(prefix.join(path)).unwrap();
    assert_eq!(read("bin/checkpoint"), "bin/checkpoint");
    // `checkpoint mcp` runs the MCP server beside `checkpoint`.
    assert_eq!(read("bin/checkpoint-mcp"), "bin/checkpoint-mcp");
    assert_eq!(read("share/man/man1/checkpoint.1"), "man/checkpoint.1");
    // A page per subcommand: `man checkpoint-status`.
    assert_eq!(
        read("share/man/man1/checkpoint-status.1"),
        "man/checkpoint-status.1"
    );
    assert_eq!(
        read("share/man/man1/checkpoint-task-add.1"),
        "man/checkpoint-task-add.1"
    );
    assert_eq!(
        read("share/bash-completion/completions/checkpoint"),
        "completions/checkpoint.bash"
    );
    assert_eq!(
        read("share/zsh/site-functions/_checkpoint"),
        "completions/_checkpoint"
    );
    assert_eq!(
        read("share/fish/vendor_completions.d/checkpoint.fish"),
        "completions/checkpoint.fish"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &str| {
            fs::metadata(prefix.join(path))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("bin/checkpoint"), 0o755);
        assert_eq!(mode("bin/checkpoint-mcp"), 0o755);
        assert_eq!(mode("share/man/man1/checkpoint.1"), 0o644);
    }
    // Nothing is left behind but the installed files.
    let mut leftovers: Vec<_> = fs::read_dir(prefix.join("bin"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    leftovers.sort();
    assert_eq!(leftovers, ["checkpoint", "checkpoint-mcp"]);
}

#[test]
fn installing_again_replaces_the_files() {
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("bundle");
    fake_bundle(&bundle);
    let prefix = work.path().join("prefix");
    install_into(&bundle, &prefix).unwrap();
    fs::write(bundle.join("bin/checkpoint"), "newer").unwrap();

    install_into(&bundle, &prefix).unwrap();

    assert_eq!(
        fs::read_to_string(prefix.join("bin/checkpoint")).unwrap(),
        "newer"
    );
}

#[test]
fn a_missing_bundle_file_is_an_error_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let err = install_into(&work.path().join("nothing"), &work.path().join("prefix")).unwrap_err();
    assert!(err.contains("nothing/bin/checkpoint"), "{err}");
}

/// The bundle's man pages: the main one, and one per subcommand it lists, each naming itself.
#[test]
fn every_subcommand_has_its_man_page() {
    let work = tempfile::tempdir().unwrap();
    crate::dist::man_pages(work.path()).unwrap();
    let command = checkpoint_cli::command();
    let mut wanted = vec!["checkpoint.1".to_owned()];
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        wanted.push(format!("checkpoint-{}.1", sub.get_name()));
        for nested in sub.get_subcommands().filter(|nested| !nested.is_hide_set()) {
            wanted.push(format!(
                "checkpoint-{}-{}.1",
                sub.get_name(),
                nested.get_name()
            ));
        }
    }
    assert!(wanted.len() > 40, "{wanted:?}");
    for page in &wanted {
        let text = fs::read_to_string(work.path().join(page))
            .unwrap_or_else(|err| panic!("no man page `{page}`: {err}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let status = fs::read_to_string(work.path().join("checkpoint-status.1")).unwrap();
    assert!(status.contains("checkpoint\\-status"), "{status}");
}
