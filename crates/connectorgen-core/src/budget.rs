//! Spending limits: `budgets:` in the manifest and `serve --budget` on the command line,
//! in one syntax (`credits=20/day`, `money=50/month`, `calls=10/hour`), and the amounts
//! they count.
//!
//! Takes: a budget's text; an instant (seconds since 1970). Returns: a `Budget` (what it
//! counts, its limit, its window), or the problem with the text in words the hint can
//! quote; the window's start, end and name for the instant. `amount.rs` holds the exact
//! decimals (`Decimal`, `Amount`) and the ISO 4217 codes, `calendar.rs` the UTC calendar.
//! Must never: read a clock, or accept a text that could mean two limits.
//!
//! What each unit counts (docs/serve.md, "Budgets and receipts"): `credits` the amounts
//! of the operations that spend credits, `money` those of the operations that spend money
//! (in the manifest's one currency), `calls` every paid call, its amount known or not.
//! The windows are calendar windows in UTC: the clock hour, the day from 00:00 UTC, the
//! ISO week from Monday 00:00 UTC, the month from its first day at 00:00 UTC.

mod amount;
mod calendar;

use std::fmt;

pub use amount::{Amount, AmountUnit, Decimal, currencies, is_currency};
pub use calendar::utc;

/// What a budget counts.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "lowercase")]
pub enum Unit {
    /// The amounts of the operations that spend credits.
    Credits,
    /// The amounts of the operations that spend money, in the manifest's currency.
    Money,
    /// Paid calls, whatever their amount (known or not).
    Calls,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The calendar window a budget counts in (UTC).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "lowercase")]
pub enum Window {
    Hour,
    Day,
    Week,
    Month,
}

impl Window {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The start of the window that holds `now`.
    pub fn start(self, now: u64) -> u64 {
        calendar::start(self, now)
    }

    /// When the window that holds `now` ends and the next begins: when the budget resets.
    pub fn end(self, now: u64) -> u64 {
        calendar::end(self, now)
    }

    /// The current window, in words: "this hour", "today", "this week", "this month".
    pub fn current(self) -> &'static str {
        match self {
            Window::Hour => "this hour",
            Window::Day => "today",
            Window::Week => "this week",
            Window::Month => "this month",
        }
    }

    /// The longest a window of this kind lasts, in seconds (a month: 31 days): how long a
    /// paid call must be kept to be counted.
    pub fn longest(self) -> u64 {
        match self {
            Window::Hour => 3_600,
            Window::Day => 86_400,
            Window::Week => 7 * 86_400,
            Window::Month => 31 * 86_400,
        }
    }
}

/// One spending limit: at most `limit` of `unit` in each `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    pub unit: Unit,
    /// For `calls`, a whole number of calls (`Amount::units`).
    pub limit: Amount,
    pub window: Window,
}

impl Budget {
    /// `credits=20/day`: the unit, `=`, a positive number (a whole one for `calls`), `/`,
    /// the window. The error says what is wrong, in words a hint can quote.
    pub fn parse(text: &str) -> Result<Budget, String> {
        const SHAPE: &str =
            "write UNIT=LIMIT/WINDOW, e.g. `credits=20/day`, `money=50/month` or `calls=10/hour`";
        let text = text.trim();
        let Some((unit, rest)) = text.split_once('=') else {
            return Err(format!("`{text}` has no `=`: {SHAPE}"));
        };
        let Some((limit, window)) = rest.split_once('/') else {
            return Err(format!("`{text}` has no `/WINDOW`: {SHAPE}"));
        };
        let (unit, limit, window) = (unit.trim(), limit.trim(), window.trim());
        let unit: Unit = unit.parse().map_err(|_| {
            format!("`{unit}` is not a budget's unit: write `credits`, `money` or `calls`")
        })?;
        let window: Window = window.parse().map_err(|_| {
            format!("`{window}` is not a window: write `hour`, `day`, `week` or `month`")
        })?;
        let number = Decimal::parse(limit).filter(|d| d.is_positive());
        let Some(number) = number else {
            return Err(format!(
                "the limit `{limit}` is not a positive number: {SHAPE}"
            ));
        };
        if unit == Unit::Calls && !number.is_whole() {
            return Err(format!(
                "the limit `{limit}` is not a whole number: `calls` counts calls"
            ));
        }
        let limit = number
            .amount()
            .ok_or_else(|| format!("the limit `{limit}` is too large"))?;
        Ok(Budget {
            unit,
            limit,
            window,
        })
    }

    /// The limit as a person reads it: "at most 20 credits per day (UTC)".
    pub fn sentence(&self, currency: Option<&str>) -> String {
        format!(
            "at most {} per {} (UTC)",
            self.limit.shown(self.amount_unit(currency)),
            self.window.as_str()
        )
    }

    /// How its amounts read (`Amount::shown`).
    pub fn amount_unit<'a>(&self, currency: Option<&'a str>) -> AmountUnit<'a> {
        match self.unit {
            Unit::Credits => AmountUnit::Credits,
            Unit::Money => AmountUnit::Money(currency),
            Unit::Calls => AmountUnit::Calls,
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={}/{}",
            self.unit.as_str(),
            self.limit.number(),
            self.window.as_str()
        )
    }
}

/// The first budget in `budgets` that repeats an earlier one's unit and window (two
/// limits on one count in one window: which one holds would be a guess), as its index.
pub fn repeated(budgets: &[Budget]) -> Option<usize> {
    (1..budgets.len()).find(|&i| {
        budgets[..i]
            .iter()
            .any(|b| (b.unit, b.window) == (budgets[i].unit, budgets[i].window))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syntax_reads_each_unit_and_window_and_says_what_is_wrong() {
        let b = Budget::parse("credits=20/day").unwrap();
        assert_eq!(
            (b.unit, b.limit, b.window),
            (Unit::Credits, Amount::units(20), Window::Day)
        );
        assert_eq!(b.to_string(), "credits=20/day");
        assert_eq!(
            Budget::parse(" money = 12.50 / month ")
                .unwrap()
                .to_string(),
            "money=12.5/month"
        );
        assert_eq!(Budget::parse("calls=10/hour").unwrap().limit.whole(), 10);
        assert_eq!(
            Budget::parse("money=50/month")
                .unwrap()
                .sentence(Some("EUR")),
            "at most 50.00 EUR per month (UTC)"
        );
        for (bad, says) in [
            ("credits20/day", "no `=`"),
            ("credits=20", "no `/WINDOW`"),
            ("credit=20/day", "not a budget's unit"),
            ("credits=20/days", "not a window"),
            ("credits=0/day", "not a positive number"),
            ("credits=-5/day", "not a positive number"),
            ("calls=2.5/day", "not a whole number"),
            ("credits=lots/day", "not a positive number"),
        ] {
            let e = Budget::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let list: Vec<Budget> = [
            "credits=5/day",
            "calls=3/day",
            "credits=1/hour",
            "credits=9/day",
        ]
        .iter()
        .map(|t| Budget::parse(t).unwrap())
        .collect();
        assert_eq!(repeated(&list), Some(3));
        assert_eq!(repeated(&list[..3]), None);
    }
}
