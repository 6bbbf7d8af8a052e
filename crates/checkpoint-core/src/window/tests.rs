//! Tests of the runner's windows on a fixed clock, in UTC and in a zone with daylight saving
//! time written out here (Paris in 2026: +01:00, and +02:00 from 29 March 01:00 UTC to
//! 25 October 01:00 UTC), so no time zone database is needed.

use chrono::{DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, TimeZone, Utc};

use super::{Window, closing, is_open, next_opening};

/// Paris in 2026, with its two clock changes.
#[derive(Debug, Clone, Copy)]
struct Paris;

fn hours(n: i32) -> FixedOffset {
    FixedOffset::east_opt(n * 3600).unwrap()
}

impl TimeZone for Paris {
    type Offset = FixedOffset;

    fn from_offset(_: &FixedOffset) -> Paris {
        Paris
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
        self.offset_from_local_datetime(&local.and_hms_opt(0, 0, 0).unwrap())
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
        // The offsets under which `local` is shown, the earlier instant (the larger offset) first.
        let shown: Vec<FixedOffset> = [2, 1]
            .into_iter()
            .map(hours)
            .filter(|offset| {
                let utc = *local - chrono::Duration::seconds(offset.local_minus_utc().into());
                self.offset_from_utc_datetime(&utc) == *offset
            })
            .collect();
        match shown.as_slice() {
            [] => LocalResult::None,
            [one] => LocalResult::Single(*one),
            [earlier, later, ..] => LocalResult::Ambiguous(*earlier, *later),
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
        self.offset_from_utc_datetime(&utc.and_hms_opt(0, 0, 0).unwrap())
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
        let summer_from = NaiveDate::from_ymd_opt(2026, 3, 29)
            .unwrap()
            .and_hms_opt(1, 0, 0)
            .unwrap();
        let summer_to = NaiveDate::from_ymd_opt(2026, 10, 25)
            .unwrap()
            .and_hms_opt(1, 0, 0)
            .unwrap();
        if (summer_from..summer_to).contains(utc) {
            hours(2)
        } else {
            hours(1)
        }
    }
}

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

fn windows(specs: &[&str]) -> Vec<Window> {
    specs.iter().map(|spec| spec.parse().unwrap()).collect()
}

fn show(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(|| "none".to_owned(), |at| at.to_rfc3339())
}

#[test]
fn windows_parse_and_bad_ones_say_how_to_write_them() {
    assert_eq!(windows(&["22:00-07:00"])[0].to_string(), "22:00-07:00");
    assert_eq!(windows(&[" 9:05-17:30 "])[0].to_string(), "09:05-17:30");
    assert_eq!(windows(&["18:00-24:00"])[0].to_string(), "18:00-00:00");
    for bad in [
        "",
        "22:00",
        "22-07",
        "22:00-7",
        "25:00-07:00",
        "22:60-07:00",
        "-1:00-07:00",
        "22:00:00-07:00",
        "aa:bb-cc:dd",
        "22:00-07:00-08:00",
        "２２:00-07:00",
        "999:00-07:00",
    ] {
        let err = bad.parse::<Window>().unwrap_err();
        assert!(err.contains("HH:MM-HH:MM"), "{bad}: {err}");
    }
    let err = "07:00-07:00".parse::<Window>().unwrap_err();
    assert!(err.contains("no length"), "{err}");
}

#[test]
fn a_window_across_midnight_is_open_before_and_after_it() {
    let night = windows(&["22:00-07:00"]);
    for (now, open) in [
        ("2026-01-10T21:59:59Z", false),
        ("2026-01-10T22:00:00Z", true),
        ("2026-01-10T23:59:59Z", true),
        ("2026-01-11T00:00:00Z", true),
        ("2026-01-11T06:59:59Z", true),
        ("2026-01-11T07:00:00Z", false),
        ("2026-01-11T12:00:00Z", false),
    ] {
        assert_eq!(is_open(&night, utc(now), &Utc), open, "{now}");
    }
    // No window is any time.
    assert!(is_open(&[], utc("2026-01-11T12:00:00Z"), &Utc));
    assert_eq!(next_opening(&[], utc("2026-01-11T12:00:00Z"), &Utc), None);
}

#[test]
fn the_next_opening_is_today_or_tomorrow_and_the_closing_ends_the_day_after() {
    let night = windows(&["22:00-07:00"]);
    // Before it opens today; just after it closed (tomorrow's); just before it closes.
    assert_eq!(
        show(next_opening(&night, utc("2026-01-10T12:00:00Z"), &Utc)),
        "2026-01-10T22:00:00+00:00"
    );
    assert_eq!(
        show(next_opening(&night, utc("2026-01-11T07:00:00Z"), &Utc)),
        "2026-01-11T22:00:00+00:00"
    );
    assert_eq!(
        show(closing(&night, utc("2026-01-10T23:00:00Z"), &Utc)),
        "2026-01-11T07:00:00+00:00"
    );
    assert_eq!(
        show(closing(&night, utc("2026-01-11T06:59:59Z"), &Utc)),
        "2026-01-11T07:00:00+00:00"
    );
    assert_eq!(
        show(closing(&night, utc("2026-01-11T12:00:00Z"), &Utc)),
        "none"
    );
    // Several windows: the nearest opening; two that meet close only at the end of the second.
    let two = windows(&["12:00-13:00", "22:00-02:00", "02:00-07:00"]);
    assert_eq!(
        show(next_opening(&two, utc("2026-01-10T08:00:00Z"), &Utc)),
        "2026-01-10T12:00:00+00:00"
    );
    assert_eq!(
        show(next_opening(&two, utc("2026-01-10T13:00:00Z"), &Utc)),
        "2026-01-10T22:00:00+00:00"
    );
    assert_eq!(
        show(closing(&two, utc("2026-01-10T23:00:00Z"), &Utc)),
        "2026-01-11T07:00:00+00:00"
    );
    // At the end of time there is no next opening, and no panic.
    assert_eq!(next_opening(&night, DateTime::<Utc>::MAX_UTC, &Utc), None);
    let _ = closing(&night, DateTime::<Utc>::MIN_UTC, &Utc);
}

#[test]
fn windows_follow_the_local_clock_across_daylight_saving_changes() {
    let night = windows(&["22:00-07:00"]);
    // Winter: 22:00 in Paris is 21:00 UTC; summer: 20:00 UTC.
    assert_eq!(
        show(next_opening(&night, utc("2026-01-10T12:00:00Z"), &Paris)),
        "2026-01-10T21:00:00+00:00"
    );
    assert_eq!(
        show(next_opening(&night, utc("2026-07-10T12:00:00Z"), &Paris)),
        "2026-07-10T20:00:00+00:00"
    );
    // The night the clocks go forward (29 March, 02:00 → 03:00): it closes at 07:00 summer time.
    assert_eq!(
        show(closing(&night, utc("2026-03-28T23:00:00Z"), &Paris)),
        "2026-03-29T05:00:00+00:00"
    );
    // The night they go back (25 October, 03:00 → 02:00): it closes at 07:00 winter time.
    assert_eq!(
        show(closing(&night, utc("2026-10-24T23:00:00Z"), &Paris)),
        "2026-10-25T06:00:00+00:00"
    );
    // A window opening at 02:30, a time the spring night never shows: it opens at the jump.
    let early = windows(&["02:30-05:00"]);
    assert_eq!(
        show(next_opening(&early, utc("2026-03-28T12:00:00Z"), &Paris)),
        "2026-03-29T01:00:00+00:00"
    );
    assert!(is_open(&early, utc("2026-03-29T01:00:00Z"), &Paris));
    // A window opening at 02:30 on the autumn night, shown twice: the first time.
    assert_eq!(
        show(next_opening(&early, utc("2026-10-24T12:00:00Z"), &Paris)),
        "2026-10-25T00:30:00+00:00"
    );
}

/// Paris as `chrono::Local` answers it: the same clock, but a local time shown twice is
/// answered with the later instant alone.
#[derive(Debug, Clone, Copy)]
struct LaterFirst;

impl TimeZone for LaterFirst {
    type Offset = FixedOffset;

    fn from_offset(_: &FixedOffset) -> LaterFirst {
        LaterFirst
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
        Paris.offset_from_local_date(local)
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
        match Paris.offset_from_local_datetime(local) {
            LocalResult::Ambiguous(_, later) => LocalResult::Single(later),
            other => other,
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
        Paris.offset_from_utc_date(utc)
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
        Paris.offset_from_utc_datetime(utc)
    }
}

/// The autumn night (25 October, 03:00 → 02:00): a window opening at a time shown twice opens
/// at its first showing, whatever the zone answers for that local time; it is open through
/// both showings, and closes at its end.
#[test]
fn the_autumn_night_opens_at_the_first_of_a_time_shown_twice_in_every_zone() {
    for (name, opening_at) in [
        ("02:00-05:00", "2026-10-25T00:00:00+00:00"),
        ("02:30-05:00", "2026-10-25T00:30:00+00:00"),
    ] {
        let window = windows(&[name]);
        for now in ["2026-10-24T12:00:00Z", "2026-10-24T23:30:00Z"] {
            assert_eq!(
                show(next_opening(&window, utc(now), &Paris)),
                opening_at,
                "{name} {now}"
            );
            assert_eq!(
                show(next_opening(&window, utc(now), &LaterFirst)),
                opening_at,
                "{name} {now}"
            );
        }
        for open in [
            opening_at,
            "2026-10-25T01:10:00+00:00",
            "2026-10-25T03:59:00+00:00",
        ] {
            let at = DateTime::parse_from_rfc3339(open)
                .unwrap()
                .with_timezone(&Utc);
            assert!(is_open(&window, at, &LaterFirst), "{name} {open}");
            assert!(is_open(&window, at, &Paris), "{name} {open}");
        }
        assert_eq!(
            show(closing(&window, utc("2026-10-25T00:45:00Z"), &LaterFirst)),
            "2026-10-25T04:00:00+00:00"
        );
    }
}
