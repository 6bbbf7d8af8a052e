//! Order statistics over run times, and ratios paired by round.
//!
//! Samples are indexed by round: `Some(seconds)` when the case ran in that round. Pairing the
//! runs of one round before taking a median cancels drift that affects a whole round (another
//! process waking up, the CPU changing frequency).

/// The median (the mean of the two middle values for an even count); `None` when empty.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// The `q` quantile (`q` in `0.0..=1.0`), interpolating linearly between the closest ranks.
pub(crate) fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = rank.ceil() as usize;
    Some(sorted[low] + (sorted[high] - sorted[low]) * (rank - low as f64))
}

/// The values of the rounds a case ran in.
pub(crate) fn present(samples: &[Option<f64>]) -> Vec<f64> {
    samples.iter().flatten().copied().collect()
}

/// The median over the rounds both ran in of `numerator[round] / denominator[round]`.
pub(crate) fn paired_ratio(numerator: &[Option<f64>], denominator: &[Option<f64>]) -> Option<f64> {
    let ratios: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .filter_map(|(num, den)| match (num, den) {
            (Some(num), Some(den)) if *den > 0.0 => Some(num / den),
            _ => None,
        })
        .collect();
    median(&ratios)
}

/// Every how many rounds a case runs: a power of two, so that a slower case's rounds are a
/// subset of a faster one's and every pair of cases shares rounds.
///
/// A case runs in every round unless that would take longer than `budget_secs`; then it runs
/// as often as the budget allows, but at least `min_runs` times (or in every round, when there
/// are fewer rounds than that).
pub(crate) fn stride(rounds: usize, mean_secs: f64, budget_secs: f64, min_runs: usize) -> usize {
    let rounds = rounds.max(1);
    let min_runs = min_runs.clamp(1, rounds);
    let affordable = if mean_secs > 0.0 {
        (budget_secs / mean_secs).floor() as usize
    } else {
        rounds
    };
    let wanted = affordable.clamp(min_runs, rounds);
    let mut stride = 1;
    while rounds.div_ceil(stride) > wanted {
        stride *= 2;
    }
    if rounds.div_ceil(stride) < min_runs {
        stride /= 2;
    }
    stride
}

#[cfg(test)]
mod tests;
