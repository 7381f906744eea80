//! The windows a budget counts in, on the UTC calendar: the clock hour, the day from
//! 00:00 UTC, the ISO week from Monday 00:00 UTC, the month from its first day.
//!
//! Takes: an instant (seconds since 1970, UTC). Returns: the start and end of the window
//! that holds it, and the end written for a person ("2026-12-08 00:00 UTC").
//! Must never: read a clock (the caller passes `now`, so tests move time themselves), or
//! depend on the machine's time zone.

/// Seconds in a day.
const DAY: u64 = 86_400;

/// Days since 1970-01-01 of the first day of `month` (1–12) of `year` (the proleptic
/// Gregorian calendar; Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The year, month (1–12) and day (1–31) of day `days` since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days(now: u64) -> i64 {
    i64::try_from(now / DAY).unwrap_or(i64::MAX)
}

fn seconds(days: i64) -> u64 {
    u64::try_from(days).unwrap_or(0).saturating_mul(DAY)
}

/// The start of the window of `length` that holds `now`.
pub(super) fn start(window: super::Window, now: u64) -> u64 {
    use super::Window;
    match window {
        Window::Hour => now - now % 3_600,
        Window::Day => now - now % DAY,
        Window::Week => {
            let d = days(now);
            // 1970-01-01 was a Thursday: Monday is 3 days earlier in the cycle.
            seconds(d - (d + 3).rem_euclid(7))
        }
        Window::Month => {
            let (year, month, _) = civil_from_days(days(now));
            seconds(days_from_civil(year, month, 1))
        }
    }
}

/// The end of the window that holds `now` (the start of the next one).
pub(super) fn end(window: super::Window, now: u64) -> u64 {
    use super::Window;
    let start = start(window, now);
    match window {
        Window::Hour => start + 3_600,
        Window::Day => start + DAY,
        Window::Week => start + 7 * DAY,
        Window::Month => {
            let (year, month, _) = civil_from_days(days(start));
            let (year, month) = if month == 12 {
                (year + 1, 1)
            } else {
                (year, month + 1)
            };
            seconds(days_from_civil(year, month, 1))
        }
    }
}

/// `at` as a person reads it: `2026-12-08 00:00 UTC`.
pub fn utc(at: u64) -> String {
    let (year, month, day) = civil_from_days(days(at));
    let minutes = (at % DAY) / 60;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minutes / 60,
        minutes % 60
    )
}

#[cfg(test)]
mod tests {
    use super::super::Window;
    use super::*;

    /// 2026-12-09 15:42:07 UTC, a Wednesday.
    const NOW: u64 = 1_796_830_927;

    #[test]
    fn windows_are_calendar_windows_in_utc() {
        assert_eq!(utc(NOW), "2026-12-09 15:42 UTC");
        let shown = |w| (utc(start(w, NOW)), utc(end(w, NOW)));
        assert_eq!(
            shown(Window::Hour),
            ("2026-12-09 15:00 UTC".into(), "2026-12-09 16:00 UTC".into())
        );
        assert_eq!(
            shown(Window::Day),
            ("2026-12-09 00:00 UTC".into(), "2026-12-10 00:00 UTC".into())
        );
        assert_eq!(
            shown(Window::Week),
            ("2026-12-07 00:00 UTC".into(), "2026-12-14 00:00 UTC".into())
        );
        assert_eq!(
            shown(Window::Month),
            ("2026-12-01 00:00 UTC".into(), "2027-01-01 00:00 UTC".into())
        );
        // A leap February, and the last second of a window belongs to it.
        let feb = 1_709_251_199; // 2024-02-29 23:59:59 UTC
        assert_eq!(utc(end(Window::Month, feb)), "2024-03-01 00:00 UTC");
        assert_eq!(utc(start(Window::Month, feb)), "2024-02-01 00:00 UTC");
        assert_eq!(end(Window::Day, feb), feb + 1);
        assert_eq!(start(Window::Day, feb + 1), feb + 1);
        for d in [-1_000_000, -1, 0, 1, 19_000, 2_000_000] {
            let (y, m, day) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, day), d);
        }
    }
}
