//! The runner's time windows (`--window 22:00-07:00`): whether a session may start now, when the
//! next window opens and when the current one closes, in a local time zone given as an input.
//!
//! Pure: the zone is any `chrono::TimeZone` (the CLI passes `chrono::Local`, the tests a zone
//! of their own with a daylight-saving change), so a crossing of midnight or of a clock change is
//! decided on a fixed clock.

#[cfg(test)]
mod tests;

use std::{fmt, str::FromStr};

use chrono::{DateTime, Duration, NaiveDateTime, NaiveTime, Offset, TimeZone, Utc};

/// A daily window of local time, `start` included, `end` excluded; it crosses midnight when
/// `end` is before `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// When it opens, local time.
    pub start: NaiveTime,
    /// When it closes, local time.
    pub end: NaiveTime,
}

impl Window {
    /// Whether the local time `time` is inside the window.
    pub fn contains(&self, time: NaiveTime) -> bool {
        if self.start < self.end {
            self.start <= time && time < self.end
        } else {
            time >= self.start || time < self.end
        }
    }
}

impl FromStr for Window {
    type Err = String;

    /// `HH:MM-HH:MM`, 24-hour local times (`22:00-07:00` crosses midnight).
    fn from_str(text: &str) -> Result<Window, String> {
        let error = || {
            format!(
                "`{text}` is not a window: write it as `HH:MM-HH:MM` in local 24-hour time, like `22:00-07:00`"
            )
        };
        let (start, end) = text.trim().split_once('-').ok_or_else(error)?;
        let time = |part: &str| {
            // Exactly `H:MM` or `HH:MM`: no seconds, no stray text.
            let part = part.trim();
            let (hours, minutes) = part.split_once(':')?;
            let number = |s: &str, lengths: &[usize]| {
                (lengths.contains(&s.len()) && s.chars().all(|c| c.is_ascii_digit()))
                    .then(|| s.parse::<u32>().ok())
                    .flatten()
            };
            let (hours, minutes) = (number(hours, &[1, 2])?, number(minutes, &[2])?);
            // `24:00` is the end of the day, as midnight.
            match (hours, minutes) {
                (24, 0) => NaiveTime::from_hms_opt(0, 0, 0),
                _ => NaiveTime::from_hms_opt(hours, minutes, 0),
            }
        };
        let window = Window {
            start: time(start).ok_or_else(error)?,
            end: time(end).ok_or_else(error)?,
        };
        if window.start == window.end {
            return Err(format!(
                "`{text}` is a window of no length: to allow any time, leave `--window` out"
            ));
        }
        Ok(window)
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}",
            self.start.format("%H:%M"),
            self.end.format("%H:%M")
        )
    }
}

/// Whether `now` is inside one of `windows` in the zone `zone`; no window at all is always open.
///
/// Decided on instants, as [`next_opening`] and [`closing`] are: a window is open from its
/// opening (the first showing of a time the clock shows twice, the jump for a time it never
/// shows) to its end, so the hour the autumn night repeats neither closes nor reopens it.
pub(crate) fn is_open<Tz: TimeZone>(windows: &[Window], now: DateTime<Utc>, zone: &Tz) -> bool {
    let today = now.with_timezone(zone).date_naive();
    windows.is_empty()
        || windows.iter().any(|window| {
            (-2..=1).any(|days| {
                let Some(day) = today.checked_add_signed(Duration::days(days)) else {
                    return false;
                };
                let end_day = if window.start < window.end {
                    Some(day)
                } else {
                    day.succ_opt()
                };
                let start = instant(zone, day.and_time(window.start));
                let end = end_day.and_then(|end_day| instant(zone, end_day.and_time(window.end)));
                matches!((start, end), (Some(start), Some(end)) if start <= now && now < end)
            })
        })
}

/// The first time after `now` at which one of `windows` opens; `None` with no window.
pub(crate) fn next_opening<Tz: TimeZone>(
    windows: &[Window],
    now: DateTime<Utc>,
    zone: &Tz,
) -> Option<DateTime<Utc>> {
    windows
        .iter()
        .flat_map(|window| around(now, zone, window.start))
        .filter(|at| *at > now)
        .min()
}

/// When the window `now` is in closes (the first time after `now` outside every window); `None`
/// when `now` is outside them, or with no window.
pub fn closing<Tz: TimeZone>(
    windows: &[Window],
    now: DateTime<Utc>,
    zone: &Tz,
) -> Option<DateTime<Utc>> {
    if windows.is_empty() || !is_open(windows, now, zone) {
        return None;
    }
    let mut ends: Vec<DateTime<Utc>> = windows
        .iter()
        .flat_map(|window| around(now, zone, window.end))
        .filter(|at| *at > now)
        .collect();
    ends.sort();
    // Two windows that meet (`22:00-02:00`, `02:00-07:00`) do not close between them.
    ends.into_iter().find(|at| !is_open(windows, *at, zone))
}

/// The instants at the local time `time` on the days around `now` (from the day before to two
/// days after, enough for any window and any clock change).
fn around<Tz: TimeZone>(now: DateTime<Utc>, zone: &Tz, time: NaiveTime) -> Vec<DateTime<Utc>> {
    let today = now.with_timezone(zone).date_naive();
    (-1..=2)
        .filter_map(|days| today.checked_add_signed(Duration::days(days)))
        .filter_map(|day| instant(zone, day.and_time(time)))
        .collect()
}

/// The instant a local clock shows `local`: the earlier one when it shows it twice (the clock
/// goes back), the moment the clock jumps past it when it never shows it (the clock goes
/// forward).
///
/// Found from the zone's UTC-to-local mapping alone (each offset the zone has within a day of
/// `local`, kept when the clock shows `local` under it), never from its local-to-UTC answer:
/// `chrono::Local` answers the later instant for a time shown twice.
fn instant<Tz: TimeZone>(zone: &Tz, local: NaiveDateTime) -> Option<DateTime<Utc>> {
    let shown = |local: NaiveDateTime| {
        [-1, 0, 1]
            .into_iter()
            .filter_map(|days| {
                let probe = local.checked_add_signed(Duration::days(days))?;
                let offset = zone.offset_from_utc_datetime(&probe).fix();
                let utc =
                    local.checked_sub_signed(Duration::seconds(offset.local_minus_utc().into()))?;
                (zone.offset_from_utc_datetime(&utc).fix() == offset)
                    .then(|| Utc.from_utc_datetime(&utc))
            })
            .min()
    };
    // Clocks jump on whole minutes: the first minute shown after the gap is the jump.
    shown(local).or_else(|| {
        (1..=24 * 60)
            .find_map(|minutes| shown(local.checked_add_signed(Duration::minutes(minutes))?))
    })
}
