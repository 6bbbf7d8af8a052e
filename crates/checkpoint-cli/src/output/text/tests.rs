//! Tests of the text helpers: free text cut on a character boundary as people see it, lines
//! cut to a terminal's columns, and escapes.

use super::{
    TEXT_COLUMNS, WHOLE_IN_LOG, cut, cut_point, escape, has_unsafe_bytes, is_unsafe, shorten,
};

/// `text` of `n` repetitions of `unit`, shortened: the part kept, and how many characters were
/// said to be left out.
fn check(unit: &str, n: usize) -> (String, usize) {
    let text = unit.repeat(n);
    let short = shorten(&text, WHOLE_IN_LOG).into_owned();
    let (kept, rest) = short.split_once('…').expect("an ellipsis");
    let left: usize = rest
        .trim_start_matches(" (")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        rest.ends_with("more characters: `checkpoint log --full`)"),
        "{rest}"
    );
    assert_eq!(
        kept.chars().count() + left,
        text.chars().count(),
        "what is kept and what is left out make the whole"
    );
    assert!(text.starts_with(kept));
    (kept.to_owned(), left)
}

#[test]
fn text_that_fits_is_whole() {
    for text in [
        "",
        "a",
        &"a".repeat(TEXT_COLUMNS),
        &"漢".repeat(TEXT_COLUMNS / 2),
    ] {
        assert_eq!(shorten(text, WHOLE_IN_LOG), text);
        assert_eq!(cut_point(text, TEXT_COLUMNS), None);
    }
}

#[test]
fn long_text_is_cut_to_its_columns_with_an_ellipsis() {
    let (kept, left) = check("a", TEXT_COLUMNS + 1);
    assert_eq!((kept.len(), left), (TEXT_COLUMNS - 1, 2));
    let (kept, left) = check("a", 100_000);
    assert_eq!(
        (kept.len(), left),
        (TEXT_COLUMNS - 1, 100_000 - TEXT_COLUMNS + 1)
    );
    // Wide characters take two columns: 99 of them and the ellipsis fit in 200.
    let (kept, _) = check("漢", 150);
    assert_eq!(kept.chars().count(), TEXT_COLUMNS / 2 - 1);
    let (kept, _) = check("a漢", 1000);
    assert!(kept.chars().count() < TEXT_COLUMNS, "{kept}");
}

/// Never inside a character as people see it: an accent, a family, a skin tone, a flag.
#[test]
fn long_text_is_cut_between_characters_as_people_see_them() {
    for (unit, ends) in [
        ("e\u{301}", "e\u{301}"),
        ("\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}", "\u{1f467}"),
        ("\u{1f44d}\u{1f3fd}", "\u{1f44d}\u{1f3fd}"),
        ("\u{2764}\u{fe0f}", "\u{2764}\u{fe0f}"),
        ("\u{1f1eb}\u{1f1f7}", "\u{1f1eb}\u{1f1f7}"),
        ("漢", "漢"),
    ] {
        let (kept, _) = check(unit, 500);
        assert!(kept.ends_with(ends), "{unit:?}: {kept:?}");
        assert_eq!(
            kept.matches(unit).count() * unit.len(),
            kept.len(),
            "{unit:?}"
        );
    }
}

#[test]
fn a_screen_line_is_cut_to_its_columns_counting_wide_characters() {
    assert_eq!(cut("abcdef", 4, false), "abcd");
    assert_eq!(cut("漢字漢字", 5, false), "漢字");
    assert_eq!(
        cut("e\u{301}e\u{301}e\u{301}", 2, false),
        "e\u{301}e\u{301}"
    );
    assert_eq!(cut("\u{1b}[1mab\u{1b}[0m", 1, true), "\u{1b}[1ma\u{1b}[0m");
}

#[test]
fn bidirectional_and_other_controls_are_escaped() {
    for c in [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}', '\u{1b}', '\u{7}', '\r',
        '\u{9b}', '\u{7f}',
    ] {
        let text = format!("a{c}b");
        let escaped = escape(&text);
        assert!(!escaped.contains(c), "{c:?}");
        assert_eq!(escaped, format!("a{}b", c.escape_default()));
    }
    for kept in ["a\nb\tc", "漢字 e\u{301} \u{1f468}\u{200d}\u{1f469}"] {
        assert_eq!(escape(kept), kept);
    }
}

/// The byte-wise check agrees with the rule on every character, alone and amid others.
#[test]
fn the_byte_check_finds_exactly_the_characters_to_escape() {
    for c in (0..=0x10ffff).filter_map(char::from_u32) {
        let alone = c.to_string();
        let amid = format!("a·{c}✓");
        assert_eq!(has_unsafe_bytes(alone.as_bytes()), is_unsafe(c), "{c:?}");
        assert_eq!(has_unsafe_bytes(amid.as_bytes()), is_unsafe(c), "{c:?}");
    }
}
