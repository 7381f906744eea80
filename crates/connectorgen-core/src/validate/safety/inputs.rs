//! What an agent's call carries besides the person's words: `args` (the argument names
//! an MCP client sees), `fixed` (values the connector supplies) and `probe` (the
//! example call a sandbox run makes).
//!
//! Takes: the raw keys of one operation. Returns (through `Validator`): them checked.
//! Must never: accept an argument name some MCP client refuses, or a fixed value with
//! no single source.

use crate::diagnostics::Diagnostic;
use crate::manifest::{RawOperation, span};
use crate::model::{ArgName, Fixed, FixedSource, ProbeInput};
use crate::validate::context::Validator;

/// `probe: { input: {…} }`: the example call must be a mapping of arguments.
pub(in crate::validate) fn probe(v: &mut Validator, raw: &RawOperation) -> Option<ProbeInput> {
    let probe = raw.probe.as_ref()?;
    let Some(input) = &probe.value.input else {
        v.findings.push(Diagnostic::InvalidProbe {
            problem: "it has no `input`".to_string(),
            span: span(probe),
        });
        return None;
    };
    match &input.value {
        serde_json::Value::Object(map) => Some(ProbeInput {
            input: map.clone(),
            span: span(input),
        }),
        other => {
            v.findings.push(Diagnostic::InvalidProbe {
                problem: format!(
                    "`input` is {}, not a mapping of argument names to values",
                    match other {
                        serde_json::Value::Null => "empty",
                        serde_json::Value::Array(_) => "a list",
                        serde_json::Value::String(_) => "a string",
                        _ => "a scalar",
                    }
                ),
                span: span(input),
            });
            None
        }
    }
}

/// `args:`: each chosen name must be one every MCP client accepts. Whether each key
/// names an input is known only with the operation's HTTP shape: the mcp target
/// checks that (`unknown-mcp-input`).
pub(in crate::validate) fn args(v: &mut Validator, raw: &RawOperation) -> Vec<ArgName> {
    let mut out = Vec::new();
    for (input, name) in raw.args.iter().flatten() {
        if !crate::arguments::is_safe(&name.value) {
            v.findings.push(Diagnostic::InvalidArgumentName {
                name: name.value.clone(),
                span: span(name),
                help: format!(
                    "use 1 to 64 letters, digits, `_`, `.` or `-`, e.g. `{}`",
                    crate::arguments::safe_name(&name.value)
                ),
            });
            continue;
        }
        out.push(ArgName {
            input: input.value.clone(),
            name: name.value.clone(),
            input_span: span(input),
            span: span(name),
        });
    }
    out
}

/// `fixed:`: each entry gives its value by exactly one of `env` and `value`.
pub(in crate::validate) fn fixed(v: &mut Validator, raw: &RawOperation) -> Vec<Fixed> {
    let mut out = Vec::new();
    for (name, entry) in raw.fixed.iter().flatten() {
        let source = match (&entry.value.env, &entry.value.value) {
            (Some(env), None) if is_env_name(&env.value) => FixedSource::Env(env.value.clone()),
            (None, Some(value)) => FixedSource::Value(value.value.clone()),
            (Some(env), None) => {
                v.findings.push(Diagnostic::InvalidFixed {
                    name: name.value.clone(),
                    problem: format!("`{}` is not an environment variable name", env.value),
                    span: span(env),
                });
                continue;
            }
            (env, value) => {
                v.findings.push(Diagnostic::InvalidFixed {
                    name: name.value.clone(),
                    problem: if env.is_some() && value.is_some() {
                        "it gives both `env` and `value`".to_string()
                    } else {
                        "it gives neither `env` nor `value`".to_string()
                    },
                    span: span(entry),
                });
                continue;
            }
        };
        out.push(Fixed {
            name: name.value.clone(),
            source,
            span: span(name),
        });
    }
    out
}

/// An environment variable name a shell can set: a letter or `_`, then letters, digits
/// or `_`.
pub(in crate::validate) fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
