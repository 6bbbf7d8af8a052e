//! Tests of the Claude Code version choice.

use crate::test::{LATEST_CLAUDE_CODE, OLDEST_CLAUDE_CODE, claude_code_version};

#[test]
fn the_variable_chooses_oldest_latest_or_a_version() {
    assert_eq!(claude_code_version(None).unwrap(), OLDEST_CLAUDE_CODE);
    assert_eq!(claude_code_version(Some("")).unwrap(), OLDEST_CLAUDE_CODE);
    assert_eq!(
        claude_code_version(Some("oldest")).unwrap(),
        OLDEST_CLAUDE_CODE
    );
    assert_eq!(
        claude_code_version(Some("latest")).unwrap(),
        LATEST_CLAUDE_CODE
    );
    assert_eq!(claude_code_version(Some("2.1.250")).unwrap(), "2.1.250");
    for bad in ["newest", "2.1", "2.1.x", "^2.1.0", "2..1"] {
        let err = claude_code_version(Some(bad)).unwrap_err();
        assert!(err.contains("CHECKPOINT_CLAUDE_CODE"), "{err}");
    }
}

#[test]
fn the_other_clients_versions_are_chosen_like_claude_codes() {
    use crate::test::clients::{CODEX, GEMINI};
    for client in [CODEX, GEMINI] {
        assert_eq!(client.version(None).unwrap(), client.pinned);
        assert_eq!(client.version(Some("pinned")).unwrap(), client.pinned);
        assert_eq!(client.version(Some("latest")).unwrap(), client.latest);
        assert_eq!(client.version(Some(" 1.2.3 ")).unwrap(), "1.2.3");
        for bad in ["1.2", "x.y.z", "1..3", "newest"] {
            let err = client.version(Some(bad)).unwrap_err();
            assert!(err.contains(client.choice_env), "{err}");
        }
    }
    assert_eq!(CODEX.pinned, "0.169.0");
    assert_eq!(GEMINI.pinned, "0.61.0");
}
