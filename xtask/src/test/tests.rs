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
