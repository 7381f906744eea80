//! `spends:`: what one call costs the person (or their customer).
//!
//! Takes: the raw `spends` mapping. Returns (through `Validator`): `Spends`, checked,
//! with `payer` defaulted to the person. Must never: accept "irreversible" as a kind
//! (that is `confirm`), or a cost without a note saying what it is.

use serde_saphyr::Spanned;

use crate::diagnostics::{Diagnostic, suggest};
use crate::manifest::{RawSpends, span};
use crate::model::{Names as _, Payer, SpendKind, Spends};
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
    Some(Spends {
        kind: kind?,
        note: note?,
        when: when?,
        payer: payer?,
    })
}

/// Text as a YAML double-quoted scalar (a JSON string is one), for hints that show YAML.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
