//! The values of `checkpoint run`'s options: durations, budgets, windows and `--since`, each
//! refused with a sentence that says how to write it.

use checkpoint_core::run::window::Window;
use chrono::{DateTime, Duration, Utc};

/// Parses `90s`, `30m`, `5h`, `1h30m`, `2d` or a number of seconds; `0` is no wait.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let error =
        || format!("`{text}` is not a duration: write it like `90s`, `30m`, `5h` or `1h30m`");
    let too_long = || format!("`{text}` is too long a duration: write at most `10000d`");
    let mut total = Duration::zero();
    let mut number = String::new();
    let add = |total: &mut Duration, number: &mut String, unit: char| {
        let value: i64 = number.parse().map_err(|_| {
            if number.is_empty() {
                error()
            } else {
                too_long()
            }
        })?;
        number.clear();
        let part = match unit {
            's' => Duration::try_seconds(value),
            'm' => Duration::try_minutes(value),
            'h' => Duration::try_hours(value),
            'd' => Duration::try_days(value),
            _ => return Err(error()),
        }
        .ok_or_else(too_long)?;
        *total = total
            .checked_add(&part)
            .filter(|total| *total <= Duration::days(10_000))
            .ok_or_else(too_long)?;
        Ok(())
    };
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            add(&mut total, &mut number, c)?;
        }
    }
    if !number.is_empty() {
        add(&mut total, &mut number, 's')?;
    }
    if total <= Duration::zero() && text.trim() != "0" {
        return Err(error());
    }
    Ok(total)
}

/// A percentage of a rate-limit window (`--max-usage`): a number from 0 up, `%` allowed.
pub(crate) fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(value) if (0.0..=1000.0).contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not a percentage: write a number from 0 to 1000, like `80`"
        )),
    }
}

/// An amount of dollars (`--max-cost`): a number from 0 up, `$` allowed.
pub(crate) fn parse_dollars(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_start_matches('$').trim();
    match number.parse::<f64>() {
        Ok(value) if (0.0..=1e9).contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not an amount of dollars: write a number from 0, like `20` or `7.50`"
        )),
    }
}

/// A window of local time (`--window 22:00-07:00`).
pub(crate) fn parse_window(text: &str) -> Result<Window, String> {
    text.parse()
}

/// `--since`: a time, or a duration back from now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Since {
    At(DateTime<Utc>),
    Ago(Duration),
}

impl Since {
    /// The time it names, at `now`.
    pub(crate) fn at(self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Since::At(at) => at,
            Since::Ago(ago) => now
                .checked_sub_signed(ago)
                .unwrap_or(DateTime::<Utc>::MIN_UTC),
        }
    }
}

/// An RFC 3339 time (`2026-03-01T22:00:00+01:00`) or a duration back from now (`24h`).
pub(crate) fn parse_since(text: &str) -> Result<Since, String> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(Since::At(at.with_timezone(&Utc)));
    }
    parse_duration(text).map(Since::Ago).map_err(|_| {
        format!(
            "`{text}` is not a time: write an RFC 3339 time like `2026-03-01T22:00:00+01:00`, or a duration back from now like `24h`"
        )
    })
}
