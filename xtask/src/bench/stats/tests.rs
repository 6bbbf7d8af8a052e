//! Tests of the statistics: medians, p90, ratios paired by round, and strides.

use super::*;

#[test]
fn median_of_odd_and_even_counts() {
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[3.0]), Some(3.0));
    assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
}

#[test]
fn p90_interpolates_between_ranks() {
    let values: Vec<f64> = (1..=10).map(f64::from).collect();
    // Rank 0.9 * 9 = 8.1: between the 9th (9.0) and 10th (10.0) values.
    let p90 = quantile(&values, 0.9).unwrap();
    assert!((p90 - 9.1).abs() < 1e-9, "{p90}");
    assert_eq!(quantile(&values, 1.0), Some(10.0));
    assert_eq!(quantile(&values, 0.0), Some(1.0));
    assert_eq!(quantile(&[7.0], 0.9), Some(7.0));
}

#[test]
fn paired_ratio_pairs_runs_of_the_same_round() {
    // Round 2 is slow for both (drift); pairing cancels it. Round 3 ran only one of them.
    let case = [Some(2.0), Some(2.2), Some(20.0), Some(9.0), None];
    let floor = [Some(1.0), Some(1.0), Some(10.0), None, Some(1.0)];
    assert_eq!(paired_ratio(&case, &floor), Some(2.0));
    // The ratio of the medians would be 5.6: the slow round and the unpaired ones skew it.
    assert_eq!(paired_ratio(&[None, Some(1.0)], &[Some(1.0), None]), None);
    assert_eq!(paired_ratio(&[Some(1.0)], &[Some(0.0)]), None);
}

#[test]
fn stride_keeps_slow_cases_within_the_budget() {
    // Fast: every round.
    assert_eq!(stride(200, 0.001, 10.0, 10), 1);
    // 0.1 s a run and a 10 s budget: 100 runs, every other round.
    assert_eq!(stride(200, 0.1, 10.0, 10), 2);
    // 0.06 s: 166 runs would fit, but strides are powers of two: 100 runs.
    assert_eq!(stride(200, 0.06, 10.0, 10), 2);
    // Very slow: still at least 10 runs (every 16th of 200 rounds is 13 runs).
    assert_eq!(stride(200, 5.0, 10.0, 10), 16);
    // Fewer rounds than the minimum: every round.
    assert_eq!(stride(4, 5.0, 1.0, 10), 1);
    for (rounds, mean) in [(200, 0.3), (40, 0.7), (7, 0.2), (1, 9.0)] {
        let stride = stride(rounds, mean, 2.0, 5);
        assert!(stride.is_power_of_two());
        assert!(
            rounds.div_ceil(stride) >= 5.min(rounds),
            "{rounds} {mean} {stride}"
        );
    }
}
