//! `spends:`: what one call costs the person (or their customer).
//!
//! Takes: the raw `spends` mapping. Returns (through `Validator`): `Spends`, checked,
//! with `payer` defaulted to the person, and its `amount` (a positive number, or an input
//! times a scale, whose input `amounts.rs` finds) and `currency` (ISO 4217; required with
//! an amount of money, refused on credits). Must never: accept "irreversible" as a kind
//! (that is `confirm`), a cost without a note saying what it is, or an amount that is not
//! more than zero.

use serde_json::Value;
use serde_saphyr::Spanned;

use crate::budget::{Decimal, currencies, is_currency};
use crate::diagnostics::{Diagnostic, suggest};
use crate::manifest::{RawSpends, span};
use crate::model::{
    AmountArgument, KeyLocation, Names as _, Payer, SpendAmount, SpendKind, Spends,
};
use crate::validate::context::Validator;
use crate::validate::context::{missing, non_empty, text};

pub(in crate::validate) fn spends(v: &mut Validator, s: &Spanned<RawSpends>) -> Option<Spends> {
    let at = span(s);
    let ctx = "`spends`";
    let kind = match &s.value.kind {
        None => {
            missing(v, "kind", ctx, at, "add `kind: credits` (or money)");
            None
        }
        Some(k) => match SpendKind::named(k.value.trim()) {
            Some(kind) => Some(kind),
            None if k.value.trim() == "irreversible" => {
                let note = s
                    .value
                    .note
                    .as_ref()
                    .map_or("…".to_string(), |n| quoted(n.value.trim()));
                v.findings.push(Diagnostic::SpendKindIrreversible {
                    span: span(k),
                    help: format!(
                        "`spends` is for costs, and `confirm: true` on the operation for what cannot be undone. \
                         If the call costs nothing, replace `spends` with `confirm: true`. If it costs and cannot \
                         be undone, write both: `spends: {{ kind: money, note: {note} }}` (or `kind: credits`) \
                         and `confirm: true`"
                    ),
                });
                None
            }
            None => {
                v.findings.push(Diagnostic::UnknownSpendKind {
                    kind: k.value.clone(),
                    span: span(k),
                    help: suggest(k.value.trim(), SpendKind::names()),
                });
                None
            }
        },
    };
    let note = text(
        v,
        s.value.note.as_ref(),
        "note",
        ctx,
        at,
        "say what one call costs, e.g. \"Costs 1 generation credit.\"",
    );
    let when = match &s.value.when {
        None => Some(None),
        Some(w) => non_empty(
            v,
            w,
            "when",
            "name the condition under which a call costs, e.g. `when: confirm is true`, or remove `when`",
        )
        .map(Some),
    };
    let payer = match &s.value.payer {
        None => Some(Payer::Person),
        Some(p) => {
            if let Some(payer) = Payer::named(p.value.trim()) {
                Some(payer)
            } else {
                v.findings.push(Diagnostic::UnknownPayer {
                payer: p.value.clone(),
                span: span(p),
                help: "write `payer: person` (the default) when the call spends the person's own money, or `payer: customer` when it moves the money of their customer, a third party".to_string(),
            });
                None
            }
        }
    };
    let amount = match &s.value.amount {
        None => Some(None),
        Some(a) => amount(v, a).map(Some),
    };
    let currency = currency(v, s, kind);
    Some(Spends {
        kind: kind?,
        note: note?,
        when: when?,
        payer: payer?,
        amount: amount?,
        currency: currency?,
    })
}

/// `spends.amount`: a positive number, or `{ argument, scale }` (the argument's place is
/// found once the operation's inputs are known: `validate/safety/amounts.rs`).
fn amount(v: &mut Validator, a: &Spanned<Value>) -> Option<SpendAmount> {
    let at = span(a);
    let mut refuse = |problem: String| {
        v.findings
            .push(Diagnostic::InvalidAmount { problem, span: at });
        None
    };
    match &a.value {
        Value::Number(_) => match Decimal::of_json(&a.value) {
            Some(d) if d.is_positive() => match d.amount() {
                Some(amount) => Some(SpendAmount::Fixed(amount)),
                None => refuse(format!("`{d}` is too large")),
            },
            Some(d) => refuse(format!("`{d}` is not more than zero")),
            None => refuse(format!("`{}` has too many digits", a.value)),
        },
        Value::Object(map) => {
            if let Some(key) = map
                .keys()
                .find(|k| !["argument", "scale"].contains(&k.as_str()))
            {
                return refuse(format!("`{key}` is not a key of it (`argument`, `scale`)"));
            }
            let input = match map.get("argument") {
                Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_string(),
                Some(_) => return refuse("`argument` is not an input's name".to_string()),
                None => return refuse("`argument` is missing".to_string()),
            };
            let scale = match map.get("scale") {
                None => Decimal::parse("1"),
                Some(value) => Decimal::of_json(value),
            };
            match scale {
                Some(scale) if scale.is_positive() => {
                    Some(SpendAmount::Argument(AmountArgument {
                        input,
                        // Found by `amounts::arguments` once the inputs are known.
                        location: KeyLocation::Body,
                        scale,
                    }))
                }
                _ => refuse("`scale` is not a positive number".to_string()),
            }
        }
        other => refuse(format!(
            "it is {}",
            match other {
                Value::String(_) => "a string (write the number without quotes)",
                Value::Array(_) => "a list",
                Value::Bool(_) => "a boolean",
                _ => "empty",
            }
        )),
    }
}

/// `spends.currency`: an ISO 4217 code, required beside an `amount` of money and refused
/// on credits. `None` when reported.
#[expect(
    clippy::option_option,
    reason = "absent (`Some(None)`), written but invalid (reported: `None`), or a code"
)]
fn currency(
    v: &mut Validator,
    s: &Spanned<RawSpends>,
    kind: Option<SpendKind>,
) -> Option<Option<String>> {
    let written = s.value.currency.as_ref();
    match (kind, written) {
        (Some(SpendKind::Credits), Some(c)) => {
            v.findings.push(Diagnostic::InvalidCurrency {
                problem: "credits have no currency".to_string(),
                span: span(c),
                help: "remove `currency`, or write `kind: money` if the call spends money"
                    .to_string(),
            });
            None
        }
        (Some(SpendKind::Money), None) if s.value.amount.is_some() => {
            v.findings.push(Diagnostic::InvalidCurrency {
                problem: "an amount of money needs its currency".to_string(),
                span: span(s),
                help: "add the ISO 4217 code of the amount, e.g. `currency: USD`".to_string(),
            });
            None
        }
        (_, Some(c)) if !is_currency(c.value.trim()) => {
            let code = c.value.trim();
            let upper = code.to_ascii_uppercase();
            v.findings.push(Diagnostic::InvalidCurrency {
                problem: format!("`{code}` is not an ISO 4217 currency code"),
                span: span(c),
                help: if is_currency(&upper) {
                    format!("write it in capitals: `{upper}`")
                } else {
                    let close = suggest(&upper, currencies().iter().copied());
                    let codes =
                        "ISO 4217 codes are three capital letters, e.g. `USD`, `EUR`, `JPY`";
                    if close.starts_with("did you mean") {
                        format!("{close} ({codes})")
                    } else {
                        codes.to_string()
                    }
                },
            });
            None
        }
        (_, c) => Some(c.map(|c| c.value.trim().to_string())),
    }
}

/// Text as a YAML double-quoted scalar (a JSON string is one), for hints that show YAML.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
