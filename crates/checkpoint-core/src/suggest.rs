//! "Did you mean …?": the closest of the names there are to a name that matched none (phase,
//! task and workflow ids, effect numbers, config keys), as git and cargo suggest.

/// The candidate closest to `word` by edit distance (a swap of two neighbours counts as one
/// edit), when it is close enough to be a typo (at most a third of the longer name, plus one);
/// ties go to the candidate of `word`'s length, then to the first. A word of one or two
/// characters gets none: every other short name is as close.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.chars().count() < 3 {
        return None;
    }
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(word, candidate), candidate))
        .filter(|(distance, candidate)| {
            *distance > 0 && *distance <= candidate.len().max(word.len()) / 3 + 1
        })
        .min_by_key(|(distance, candidate)| (*distance, candidate.len().abs_diff(word.len())))
        .map(|(_, candidate)| candidate)
}

/// ` (did you mean `x`?)` after a name that matched none, or nothing when none is close.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|closest| format!(" (did you mean `{closest}`?)"))
        .unwrap_or_default()
}

/// The edit distance between two short strings, a swap of two neighbours counting as one edit
/// (the optimal string alignment distance).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
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
        assert_eq!(closest("122", ["1", "12"]), Some("12"));
        assert_eq!(closest("7", ["1", "2"]), None, "too short to guess");
        assert_eq!(edit_distance("desgin", "design"), 1, "a swap is one edit");
        assert_eq!(closest("900", ["12"]), None);
    }
}
