//! Tests of the helpers every task shares.

use crate::workspace::shell_quote;

#[test]
fn echoed_arguments_paste_back_as_the_same_words() {
    assert_eq!(shell_quote("design"), "design");
    assert_eq!(shell_quote("build:design"), "build:design");
    assert_eq!(shell_quote("Payments refactor"), "'Payments refactor'");
    assert_eq!(shell_quote(""), "''");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(shell_quote("$HOME"), "'$HOME'");
}
