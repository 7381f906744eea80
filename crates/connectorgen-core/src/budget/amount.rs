//! Exact amounts: a decimal number as written (`12.50`, `0.05`, a JSON number) and an
//! amount in millionths of its unit, with the ISO 4217 currencies a money amount is in.
//!
//! Takes: decimal text (a manifest's `amount` or `scale`, a budget's limit, the text of a
//! JSON number an argument holds). Returns: `Decimal`, `Amount` (rounded up to the
//! millionth when a product has more digits), and how an amount reads to a person
//! ("3 credits", "12.50 USD").
//! Must never: go through floating point (0.1 × 3 must be 0.3), or round an amount down:
//! a budget that summed rounded-down amounts would let through more than it says.

use std::fmt;

/// A decimal number as written: `mantissa × 10^exponent`, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    mantissa: i128,
    exponent: i32,
}

/// The most digits a written number may have: their product must fit an `i128`.
const MAX_DIGITS: usize = 18;

impl Decimal {
    /// `12`, `-3.5`, `0.05`, `1e3`, `2.5E-2` (a JSON number's text); `None` for anything
    /// else, or for more than 18 significant digits.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (number, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty()
            || !whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > MAX_DIGITS {
            return None;
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let places = i32::try_from(fraction.len()).ok()?;
        Some(Decimal {
            mantissa: if negative { -mantissa } else { mantissa },
            exponent: exponent.checked_sub(places)?,
        })
    }

    /// The number a JSON value holds, exactly as its text says.
    pub fn of_json(value: &serde_json::Value) -> Option<Decimal> {
        match value {
            serde_json::Value::Number(n) => Decimal::parse(&n.to_string()),
            _ => None,
        }
    }

    pub fn is_positive(self) -> bool {
        self.mantissa > 0
    }

    pub fn is_negative(self) -> bool {
        self.mantissa < 0
    }

    /// Whether it is a whole number.
    pub fn is_whole(self) -> bool {
        self.exponent >= 0 || self.mantissa % pow10(-self.exponent).unwrap_or(i128::MAX) == 0
    }

    /// The product, exactly (`None` when it is too large to hold).
    pub fn times(self, other: Decimal) -> Option<Decimal> {
        Some(Decimal {
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            exponent: self.exponent.checked_add(other.exponent)?,
        })
    }

    /// In millionths of the unit, rounded up (towards more) when it has more than six
    /// decimals; `None` when it does not fit.
    pub fn amount(self) -> Option<Amount> {
        let shift = self.exponent.checked_add(6)?;
        let micros = if shift >= 0 {
            self.mantissa.checked_mul(pow10(shift)?)?
        } else {
            match pow10(-shift) {
                // Ceiling: a positive remainder adds one; Rust's division already rounds a
                // negative quotient up (towards zero).
                Some(divisor) => {
                    let quotient = self.mantissa / divisor;
                    quotient + i128::from(self.mantissa % divisor > 0)
                }
                // Far below a millionth.
                None => i128::from(self.mantissa > 0),
            }
        };
        i64::try_from(micros).ok().map(Amount)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.mantissa.unsigned_abs().to_string();
        let sign = if self.mantissa < 0 { "-" } else { "" };
        if self.exponent >= 0 {
            let zeros = "0".repeat(usize::try_from(self.exponent).unwrap_or(0));
            return write!(f, "{sign}{digits}{zeros}");
        }
        let places = usize::try_from(-self.exponent).unwrap_or(0);
        let padded = format!("{digits:0>width$}", width = places + 1);
        let (whole, fraction) = padded.split_at(padded.len() - places);
        let fraction = fraction.trim_end_matches('0');
        if fraction.is_empty() {
            write!(f, "{sign}{whole}")
        } else {
            write!(f, "{sign}{whole}.{fraction}")
        }
    }
}

fn pow10(n: i32) -> Option<i128> {
    10_i128.checked_pow(u32::try_from(n).ok()?)
}

/// An amount of credits or money, in millionths of its unit: exact, summed as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Amount(i64);

/// Millionths in one unit.
const ONE: i64 = 1_000_000;

impl Amount {
    pub const ZERO: Amount = Amount(0);

    /// `text` as an amount: a decimal number (`20`, `12.50`), rounded up to the millionth.
    pub fn parse(text: &str) -> Option<Amount> {
        Decimal::parse(text)?.amount()
    }

    pub fn from_micros(micros: i64) -> Amount {
        Amount(micros)
    }

    /// A whole number of units (a count of calls).
    pub fn units(n: i64) -> Amount {
        Amount(n.saturating_mul(ONE))
    }

    pub fn micros(self) -> i64 {
        self.0
    }

    /// The whole units it holds (a count of calls), rounded down.
    pub fn whole(self) -> i64 {
        self.0 / ONE
    }

    pub fn checked_add(self, other: Amount) -> Option<Amount> {
        self.0.checked_add(other.0).map(Amount)
    }

    pub fn saturating_sub(self, other: Amount) -> Amount {
        Amount(self.0.saturating_sub(other.0))
    }

    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// The number, as few decimals as it needs (`3`, `0.5`, `12.345678`).
    pub fn number(self) -> String {
        self.padded(0)
    }

    /// The number with at least `places` decimals (`12.50` for money in cents).
    fn padded(self, places: usize) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let micros = self.0.unsigned_abs();
        let whole = micros / ONE.unsigned_abs();
        let fraction = format!("{:06}", micros % ONE.unsigned_abs());
        let mut fraction = fraction.trim_end_matches('0').to_string();
        while fraction.len() < places {
            fraction.push('0');
        }
        if fraction.is_empty() {
            format!("{sign}{whole}")
        } else {
            format!("{sign}{whole}.{fraction}")
        }
    }

    /// The number as `shown` writes it, without the unit (`12.50` for dollars).
    pub fn figure(self, unit: AmountUnit<'_>) -> String {
        match unit {
            AmountUnit::Money(Some(currency)) => self.padded(minor_units(currency)),
            AmountUnit::Money(None) => self.padded(2),
            AmountUnit::Credits | AmountUnit::Calls => self.number(),
        }
    }

    /// As a person reads it: `3 credits`, `1 credit`, `12.50 USD`, `500 JPY` (money with
    /// its currency's usual decimals; `money` alone when the currency is not known).
    pub fn shown(self, unit: AmountUnit<'_>) -> String {
        match unit {
            AmountUnit::Credits if self == Amount::units(1) => "1 credit".to_string(),
            AmountUnit::Credits => format!("{} credits", self.number()),
            AmountUnit::Money(Some(currency)) => {
                format!("{} {currency}", self.padded(minor_units(currency)))
            }
            AmountUnit::Money(None) => format!("{} (money)", self.padded(2)),
            AmountUnit::Calls if self == Amount::units(1) => "1 paid call".to_string(),
            AmountUnit::Calls => format!("{} paid calls", self.number()),
        }
    }
}

/// What an amount counts, for `Amount::shown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountUnit<'a> {
    Credits,
    /// In this ISO 4217 currency, when known.
    Money(Option<&'a str>),
    Calls,
}

/// The active ISO 4217 codes (the iso-codes list of 2023, 4.15, with the codes added
/// since: `XCG`, `ZWG`), `XXX` ("no currency") left out.
const CURRENCIES: &[&str] = &[
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD",
    "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CUC", "CUP",
    "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP",
    "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HRK", "HTG", "HUF", "IDR",
    "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW",
    "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA",
    "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD",
    "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG",
    "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE",
    "SLL", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP",
    "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "USN", "UYI", "UYU", "UYW", "UZS", "VED",
    "VES", "VND", "VUV", "WST", "XAF", "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XCD", "XCG",
    "XDR", "XOF", "XPD", "XPF", "XPT", "XSU", "XTS", "XUA", "YER", "ZAR", "ZMW", "ZWG", "ZWL",
];

/// Whether `code` is an active ISO 4217 currency code (upper case, as the standard
/// writes it).
pub fn is_currency(code: &str) -> bool {
    CURRENCIES.binary_search(&code).is_ok()
}

/// The ISO 4217 codes, for a did-you-mean.
pub fn currencies() -> &'static [&'static str] {
    CURRENCIES
}

/// The decimals a currency's amounts are usually written with (ISO 4217's minor unit):
/// 0 for the yen and its kind, 3 for the dinars, 2 for the rest.
fn minor_units(currency: &str) -> usize {
    const NONE: &[&str] = &[
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
        "VUV", "XAF", "XOF", "XPF",
    ];
    const THREE: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
    if NONE.contains(&currency) {
        0
    } else if THREE.contains(&currency) {
        3
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amount(text: &str) -> i64 {
        Amount::parse(text).unwrap().micros()
    }

    #[test]
    fn decimals_are_exact_and_products_round_up() {
        assert_eq!(amount("20"), 20_000_000);
        assert_eq!(amount("12.50"), 12_500_000);
        assert_eq!(amount("1e3"), 1_000_000_000);
        assert_eq!(amount("2.5E-2"), 25_000);
        assert_eq!(amount("0.0000001"), 1, "a ten-millionth rounds up");
        let cents = Decimal::parse("1999").unwrap();
        let scale = Decimal::parse("0.01").unwrap();
        assert_eq!(
            cents.times(scale).unwrap().amount().unwrap().micros(),
            19_990_000
        );
        // 0.1 × 3 is 0.3, not 0.30000000000000004.
        let third = Decimal::parse("0.1")
            .unwrap()
            .times(Decimal::parse("3").unwrap());
        assert_eq!(third.unwrap().to_string(), "0.3");
        // A rate: 7 seconds at 0.0000003 credits each is 0.0000021, rounded up.
        let rate = Decimal::parse("7")
            .unwrap()
            .times(Decimal::parse("3e-7").unwrap());
        assert_eq!(rate.unwrap().amount().unwrap().micros(), 3);
        for bad in ["", ".", "1.2.3", "abc", "1e", "--1", "12345678901234567890"] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
        assert!(Decimal::parse("3").unwrap().is_whole());
        assert!(!Decimal::parse("2.5").unwrap().is_whole());
        assert!(Decimal::parse("2.0").unwrap().is_whole());
    }

    #[test]
    fn amounts_read_as_a_person_writes_them() {
        let at = |t: &str| Amount::parse(t).unwrap();
        assert_eq!(at("3").shown(AmountUnit::Credits), "3 credits");
        assert_eq!(at("1").shown(AmountUnit::Credits), "1 credit");
        assert_eq!(at("0.5").shown(AmountUnit::Credits), "0.5 credits");
        assert_eq!(
            at("12.5").shown(AmountUnit::Money(Some("USD"))),
            "12.50 USD"
        );
        assert_eq!(at("500").shown(AmountUnit::Money(Some("JPY"))), "500 JPY");
        assert_eq!(
            at("0.005").shown(AmountUnit::Money(Some("USD"))),
            "0.005 USD"
        );
        assert_eq!(at("4").shown(AmountUnit::Calls), "4 paid calls");
        assert!(is_currency("EUR") && !is_currency("eur") && !is_currency("EURO"));
        assert!(
            CURRENCIES.windows(2).all(|w| w[0] < w[1]),
            "sorted, for the search"
        );
    }
}
