//! Whether an operation may cost the person something, read from its own text and route.
//!
//! Takes: one base operation (its method, path, operationId, summary, description and the
//! top-level properties of its request body). Returns: the evidence for a `spends`
//! suggestion — the cost words its text affirms, money it moves (a verb that moves money
//! with a payment, transfer or an `amount` to move), or the message it sends — or none.
//! The word "payment" alone is no evidence: a payments API names every call after
//! payments, and updating one's metadata costs nothing (issue 31: 14 of 28 operations of
//! a card API were suggested for it, while its captures and transfers got none).
//! Must never: count a cost word the text negates ("you will not be charged", "free of
//! charge", "at no cost"), suggest spending on what gives money back (a refund, cancel,
//! void or reversal) or on a DELETE, or read anything but the operation itself.
//!
//! A sentence that says, without a condition, that the call costs nothing ("You will not
//! be charged.") outweighs every cost word of the operation; a conditional one ("If the
//! card is declined there is no charge") only takes its own mention out.

use serde_json::{Map, Value};

use crate::base::BaseOperation;

/// Why a call may cost the person, in words for the comment.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Cost {
    /// Cost words its text affirms, each once, in order.
    Words(Vec<&'static str>),
    /// What it sends that costs money: "creates a payout", "sends a message".
    Sends(String),
}

impl Cost {
    /// `credits` when every cost word is about credits, else `money`.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Cost::Words(words) if words.iter().all(|w| w.starts_with("credit")) => "credits",
            _ => "money",
        }
    }

    /// The evidence, for the comment after the suggestion.
    pub(super) fn evidence(&self) -> String {
        match self {
            Cost::Words(words) => format!("its text mentions {}", words.join(", ")),
            Cost::Sends(what) => format!("it {what}"),
        }
    }
}

/// Words that say a call may cost something, in every form the text may use them. Not
/// the names of the payments domain ("payment", "invoice", "subscription", "price",
/// "billing"): those name what a call is about, not that it costs.
const COST_WORDS: &[&str] = &[
    "charge",
    "charges",
    "charged",
    "charging",
    "pay",
    "pays",
    "paid",
    "paying",
    "credits",
    "billed",
    "purchase",
    "purchases",
    "purchased",
    "cost",
    "costs",
    "fee",
    "fees",
];

/// Verbs that move money when what they act on is money (`MONEY_NOUNS`, or an amount in
/// the body): "capture a payment", "create a transfer", "confirm a payment".
const MONEY_VERBS: &[&str] = &[
    "create",
    "creates",
    "capture",
    "captures",
    "complete",
    "completes",
    "transfer",
    "transfers",
    "pay",
    "pays",
    "charge",
    "charges",
    "authorize",
    "authorizes",
    "authorise",
    "authorises",
    "purchase",
    "buy",
    "buys",
    "payout",
    "disburse",
    "disburses",
    "withdraw",
    "withdraws",
    "fund",
    "funds",
    "send",
    "sends",
    "confirm",
    "confirms",
    "execute",
    "executes",
    "process",
    "processes",
    "initiate",
    "initiates",
    "submit",
    "submits",
    "make",
    "makes",
    "subscribe",
    "top",
];

/// What money moves as: the thing a money verb acts on.
const MONEY_NOUNS: &[&str] = &[
    "payment",
    "payments",
    "transfer",
    "transfers",
    "payout",
    "payouts",
    "charge",
    "charges",
    "funds",
    "money",
    "subscription",
    "subscriptions",
    "purchase",
    "disbursement",
    "disbursements",
    "withdrawal",
    "withdrawals",
];

/// Top-level request body properties that hold an amount of money to move.
const AMOUNT_FIELDS: &[&str] = &[
    "amount",
    "amount_money",
    "amountMoney",
    "amount_cents",
    "amount_in_cents",
    "total",
    "total_amount",
    "totalAmount",
];

/// Words that turn a cost word after them (within `NEGATION_REACH` words) into its
/// denial: "not be charged", "no charge", "free of charge", "without charge", "won't
/// cost" (`t` is what is left of "n't" once the text is split into words).
const NEGATORS: &[&str] = &[
    "not", "no", "never", "without", "free", "t", "nothing", "zero",
];
const NEGATION_REACH: usize = 4;

/// Words that make a sentence's denial conditional: "if the card is declined there is
/// no charge" says nothing of the call that succeeds.
const CONDITIONS: &[&str] = &[
    "if", "unless", "when", "whenever", "until", "once", "except",
];

/// Names of calls that give money back or stop it moving.
const REVERSALS: &[&str] = &[
    "refund",
    "refunds",
    "cancel",
    "cancels",
    "cancellation",
    "void",
    "voids",
    "reverse",
    "reverses",
    "reversal",
    "reversals",
    "revert",
    "reverts",
];

/// What a create moves by its nature, with what to say of it: the resource a POST to
/// the collection makes.
const MONEY_RESOURCES: &[(&str, &str)] = &[
    ("payout", "creates a payout"),
    ("payouts", "creates a payout"),
    ("transfer", "creates a transfer"),
    ("transfers", "creates a transfer"),
    ("disbursement", "creates a disbursement"),
    ("disbursements", "creates a disbursement"),
    // Plural only: `POST /check` is as often a verb ("check an address").
    ("checks", "creates a check"),
];

/// What a provider charges for sending, whatever the operation's text says: a POST to
/// a collection of these prints, mails or sends one.
const SENT_RESOURCES: &[(&str, &str)] = &[
    ("sms", "sends an SMS"),
    ("mms", "sends an MMS"),
    ("letter", "sends a letter"),
    ("letters", "sends a letter"),
    ("postcard", "sends a postcard"),
    ("postcards", "sends a postcard"),
    ("self_mailers", "sends a self-mailer"),
    ("fax", "sends a fax"),
    ("faxes", "sends a fax"),
];

/// What a provider charges for when the operation's text says it sends it or places it
/// (a chat API's "create a message" sends nothing).
const SAID_RESOURCES: &[(&str, &str)] = &[
    ("message", "sends a message"),
    ("messages", "sends a message"),
    ("call", "places a call"),
    ("calls", "places a call"),
];
const SEND_WORDS: &[&str] = &[
    "send",
    "sends",
    "sending",
    "mail",
    "mails",
    "mailed",
    "print",
    "prints",
    "deliver",
    "delivers",
    "dispatch",
    "dispatches",
    "outgoing",
    "outbound",
    "dial",
    "dials",
];

/// The evidence that calling `op` may cost the person, or `None`. `body` lists the
/// top-level properties of its request body.
pub(super) fn cost(op: &BaseOperation, object: &Map<String, Value>, body: &[&str]) -> Option<Cost> {
    if matches!(op.method, "get" | "delete") || reverses(op, object) {
        return None;
    }
    let texts: Vec<&str> = ["summary", "description"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(Value::as_str))
        .collect();
    let mut found = Vec::new();
    for text in &texts {
        for sentence in text.split(['.', ';', '!', '?', '\n']) {
            let words = words(sentence);
            let conditional = words.iter().any(|w| CONDITIONS.contains(&w.as_str()));
            for (i, word) in words.iter().enumerate() {
                let Some(cost) = COST_WORDS.iter().find(|c| **c == word) else {
                    continue;
                };
                let before = &words[i.saturating_sub(NEGATION_REACH)..i];
                let negated = before.iter().any(|w| NEGATORS.contains(&w.as_str()))
                    || words.get(i + 1).is_some_and(|w| w == "free");
                if negated && !conditional {
                    return None;
                }
                if !negated && !found.contains(cost) {
                    found.push(*cost);
                }
            }
        }
    }
    if !found.is_empty() {
        return Some(Cost::Words(found));
    }
    sends(op, &texts).or_else(|| moves(op, object, body))
}

/// Money the call moves, by its name: a money verb in its operationId, its summary, its
/// description's first sentence or the last part of its path, acting on money (a money noun there or in its path) or on an
/// amount its body carries.
fn moves(op: &BaseOperation, object: &Map<String, Value>, body: &[&str]) -> Option<Cost> {
    let mut names = Vec::new();
    if let Some(id) = &op.operation_id {
        names.extend(camel_words(id));
    }
    if let Some(summary) = object.get("summary").and_then(Value::as_str) {
        names.extend(words(summary));
    }
    // The description's first sentence says what the call does as often as a summary.
    if let Some(first) = object
        .get("description")
        .and_then(Value::as_str)
        .and_then(|d| d.split(['.', '\n']).next())
    {
        names.extend(words(first));
    }
    let route: Vec<String> = op
        .path
        .split('/')
        .filter(|segment| !segment.starts_with('{'))
        .flat_map(camel_words)
        .collect();
    if let Some(last) = last_literal(&op.path) {
        names.extend(camel_words(last));
    }
    let verb = names.iter().find(|w| MONEY_VERBS.contains(&w.as_str()))?;
    let noun = names
        .iter()
        .chain(&route)
        .find(|w| MONEY_NOUNS.contains(&w.as_str()) && *w != verb);
    let amount = body.iter().find(|p| AMOUNT_FIELDS.contains(p));
    let what = match (noun, amount) {
        (Some(noun), _) => format!("moves money ({verb} + {noun})"),
        (None, Some(amount)) => format!("moves money ({verb} + an `{amount}` in its body)"),
        (None, None) => return None,
    };
    Some(Cost::Sends(what))
}

/// Whether the operation gives money back or stops it moving, by its name: the words of
/// its operationId, its summary, or the last part of its path.
fn reverses(op: &BaseOperation, object: &Map<String, Value>) -> bool {
    let mut names = Vec::new();
    if let Some(id) = &op.operation_id {
        names.extend(camel_words(id));
    }
    if let Some(summary) = object.get("summary").and_then(Value::as_str) {
        names.extend(words(summary));
    }
    if let Some(last) = last_literal(&op.path) {
        names.extend(words(last));
    }
    names.iter().any(|w| REVERSALS.contains(&w.as_str()))
}

/// A POST to a collection of payouts, transfers, checks, SMS or letters, or of messages or
/// calls that its text says it sends or places.
fn sends(op: &BaseOperation, texts: &[&str]) -> Option<Cost> {
    if op.method != "post" {
        return None;
    }
    let resource = last_literal(&op.path)?.to_ascii_lowercase();
    if let Some((_, what)) = MONEY_RESOURCES.iter().find(|(r, _)| *r == resource) {
        return Some(Cost::Sends((*what).to_string()));
    }
    if let Some((_, what)) = SENT_RESOURCES.iter().find(|(r, _)| *r == resource) {
        return Some(Cost::Sends((*what).to_string()));
    }
    let (_, what) = SAID_RESOURCES.iter().find(|(r, _)| *r == resource)?;
    let says_it_sends = texts
        .iter()
        .flat_map(|t| words(t))
        .any(|w| SEND_WORDS.contains(&w.as_str()));
    says_it_sends.then(|| Cost::Sends((*what).to_string()))
}

/// The last segment of `path` when it is not a parameter, without an extension such as
/// `.json` (`/Accounts/{Sid}/Messages.json` → `Messages`).
pub(super) fn last_literal(path: &str) -> Option<&str> {
    let last = path.rsplit('/').next()?;
    let last = last.split_once('.').map_or(last, |(stem, _)| stem);
    (!last.is_empty() && !last.starts_with('{')).then_some(last)
}

/// The words of `text`, lower case.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words of an identifier: `refundCharge`, `payouts-item.cancel`, `Post_Refunds`.
fn camel_words(id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in id.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        for c in part.chars() {
            if c.is_uppercase() && !word.is_empty() {
                out.push(std::mem::take(&mut word).to_lowercase());
            }
            word.push(c);
        }
        if !word.is_empty() {
            out.push(word.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(path: &str, id: &str, summary: &str, description: &str) -> Option<Cost> {
        let op = BaseOperation {
            path: path.to_string(),
            method: "post",
            operation_id: Some(id.to_string()),
        };
        let object: Map<String, Value> = serde_json::from_value(
            serde_json::json!({ "summary": summary, "description": description }),
        )
        .unwrap();
        cost(&op, &object, &[])
    }

    #[test]
    fn cost_words_are_whole_affirmed_words() {
        assert_eq!(
            post("/a", "a", "Charges the card", "Charges again; pays."),
            Some(Cost::Words(vec!["charges", "pays"]))
        );
        assert_eq!(
            post("/a", "a", "", "Sends the payload at a low costume fee-less"),
            Some(Cost::Words(vec!["fee"]))
        );
        assert_eq!(post("/a", "a", "", "Sends the payload in costume"), None);
        assert_eq!(
            post("/a", "a", "Uses credits", "").map(|c| c.kind()),
            Some("credits")
        );
        // The domain's names are not costs: a payments API's every call says "payment".
        assert_eq!(
            post(
                "/v1/payments/{id}",
                "updatePayment",
                "Update a payment",
                "Sets the payment's metadata; payments, invoices and prices."
            ),
            None
        );
        for free in [
            "You will not be charged.",
            "This call is free of charge.",
            "Runs at no cost to you.",
            "It won't cost anything",
            "Cost-free.",
        ] {
            assert_eq!(post("/a", "a", "Price a basket", free), None, "{free}");
        }
        // A condition only takes its own mention out.
        assert_eq!(
            post(
                "/a",
                "a",
                "Create a charge",
                "If the card is declined there is no charge."
            ),
            Some(Cost::Words(vec!["charge"]))
        );
    }

    #[test]
    fn what_gives_money_back_costs_nothing_and_what_sends_it_does() {
        assert_eq!(
            post("/refunds", "createRefund", "", "Refunds a charge"),
            None
        );
        assert_eq!(post("/p/{id}/void", "v", "", "Voids a payment"), None);
        assert_eq!(post("/p", "payouts-item.cancel", "", "the payment"), None);
        assert_eq!(
            post("/v1/payouts", "p", "Create", ""),
            Some(Cost::Sends("creates a payout".to_string()))
        );
        // Lob's `check_create`: the text says nothing of money, but a check pays its
        // amount out of the person's bank account (and Lob charges for printing it).
        assert_eq!(
            post(
                "/v1/checks",
                "check_create",
                "Create",
                "Creates a new check with the provided properties."
            ),
            Some(Cost::Sends("creates a check".to_string()))
        );
        assert_eq!(
            post(
                "/A/{Sid}/Messages.json",
                "CreateMessage",
                "Send a message",
                ""
            ),
            Some(Cost::Sends("sends a message".to_string()))
        );
        assert_eq!(
            post(
                "/letters",
                "letter_create",
                "Create",
                "Creates a new letter"
            ),
            Some(Cost::Sends("sends a letter".to_string()))
        );
        assert_eq!(
            post(
                "/A/{Sid}/Calls.json",
                "CreateCall",
                "Create a new outgoing call",
                ""
            ),
            Some(Cost::Sends("places a call".to_string()))
        );
        // A chat API's message is not sent anywhere that charges for it.
        assert_eq!(
            post("/threads/{id}/messages", "m", "Create a message", ""),
            None
        );
        assert_eq!(post("/v1/messages/{id}", "m", "Send a message", ""), None);
    }

    #[test]
    fn what_moves_money_is_found_by_its_verb_and_what_it_moves() {
        let moved = |path, id, summary, body: &[&str]| {
            let op = BaseOperation {
                path: String::from(path),
                method: "post",
                operation_id: Some(String::from(id)),
            };
            let object: Map<String, Value> =
                serde_json::from_value(serde_json::json!({ "summary": summary })).unwrap();
            cost(&op, &object, body).map(|c| c.evidence())
        };
        assert_eq!(
            moved(
                "/v1/payments/{id}/captures",
                "capturePayment",
                "Capture an authorised payment",
                &[]
            )
            .as_deref(),
            Some("it moves money (capture + payment)")
        );
        assert_eq!(
            moved(
                "/v1/balanceTransfers",
                "createBalanceTransfer",
                "Create a balance transfer",
                &[]
            )
            .as_deref(),
            Some("it moves money (create + balance)")
                .filter(|_| false)
                .or(Some("it moves money (create + transfer)"))
        );
        assert_eq!(
            moved(
                "/v1/orders",
                "createOrder",
                "Create an order",
                &["amount", "currency"]
            )
            .as_deref(),
            Some("it moves money (create + an `amount` in its body)")
        );
        // An order without an amount, and a payment only updated, move nothing.
        assert_eq!(
            moved("/v1/orders", "createOrder", "Create an order", &["items"]),
            None
        );
        assert_eq!(
            moved(
                "/v1/payments/{id}",
                "updatePayment",
                "Update a payment",
                &["amount"]
            ),
            None
        );
        assert_eq!(
            moved(
                "/v1/payments/{id}/refunds",
                "refundPayment",
                "Refund a payment",
                &["amount"]
            ),
            None
        );
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(camel_words("refundCharge"), ["refund", "charge"]);
        assert_eq!(
            camel_words("payouts-item.cancel"),
            ["payouts", "item", "cancel"]
        );
        assert_eq!(camel_words("PostRefunds"), ["post", "refunds"]);
        assert_eq!(last_literal("/A/{Sid}/Messages.json"), Some("Messages"));
        assert_eq!(last_literal("/A/{Sid}.json"), None);
    }
}
