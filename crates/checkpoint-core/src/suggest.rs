//! "Did you mean …?": the closest of the names there are to a name that matched none (phase,
//! task and workflow ids, effect numbers, config keys), as git and cargo suggest.

/// The candidate closest to `word` by edit distance, when it is close enough to be a typo (at
/// most a third of the longer name, plus one), ties going to the first.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(word, candidate), candidate))
        .filter(|(distance, candidate)| {
            *distance > 0 && *distance <= candidate.len().max(word.len()) / 3 + 1
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// ` (did you mean `x`?)` after a name that matched none, or nothing when none is close.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|closest| format!(" (did you mean `{closest}`?)"))
        .unwrap_or_default()
}

/// The Levenshtein distance between two short strings.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_gets_the_closest_name_and_a_stranger_gets_none() {
        let phases = ["design", "build", "review"];
        assert_eq!(closest("desing", phases), Some("design"));
        assert_eq!(closest("buidl", phases), Some("build"));
        assert_eq!(closest("deploy-to-production", phases), None);
        assert_eq!(closest("design", phases), None, "an exact name is no typo");
        assert_eq!(closest("x", []), None);
        assert_eq!(did_you_mean("revew", phases), " (did you mean `review`?)");
        // Numbers too: effect 21 for 12 is a typo, 900 for 12 is not.
        assert_eq!(closest("21", ["1", "12"]), Some("12"));
        assert_eq!(closest("900", ["12"]), None);
    }
}
