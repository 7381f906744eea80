//! The provider's credential and the connector's other environment variables: which
//! variables `serve` and `probe` may read, reading them (the one place that does), and
//! the credential applied where the manifest's `auth` says it goes.
//!
//! Takes: the validated connector, its tools' mappings (`render::mcp::mapping`), the
//! variables the person allowed on the command line (`--allow-env`), and a way to read
//! one variable (the process environment; a map in tests). Returns: an `Environment` —
//! the values read, what each is for and which origins it goes to (for the start-up
//! line), and the `Redactor` of every secret among them — or, when the manifest names a
//! variable the person did not allow, one line saying which, where, and the flag that
//! allows it.
//! Must never: read a variable the person did not allow (by default only those that
//! start with the connector's own prefix, `model::env_prefix`: `VIDGEN_…`), log or echo
//! a value (`Credential`'s `Debug` is redacted), or take the credential from a tool
//! argument.

use std::collections::BTreeMap;

use connectorgen_core::Analysis;
use connectorgen_core::diagnostics::Span;
use connectorgen_core::model::{Connector, OperationCredential, env_prefix};
use connectorgen_core::render::mcp::mapping::{
    Credential as Scheme, CredentialPart as Part, Encoding, Location, RequestMapping,
};
use connectorgen_core::report::LineIndex;
use serde_json::{Value, json};

use crate::redact::{self, MIN_SECRET, Redactor};

/// Where one part of the credential goes on a request, and its text as sent.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    Header(String, String),
    Query(String, String),
    Cookie(String, String),
    /// A top-level field of the JSON or form body.
    Body(String, String),
}

/// A credential ready to apply: one placement per part.
#[derive(Clone)]
pub(crate) struct Credential {
    pub placements: Vec<Placement>,
    /// Every secret text it holds: each variable's value, each value as placed, and for
    /// basic the user, the password and their base64.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .placements
            .iter()
            .map(|p| {
                let (kind, name) = match p {
                    Placement::Header(n, _) => ("header", n),
                    Placement::Query(n, _) => ("query", n),
                    Placement::Cookie(n, _) => ("cookie", n),
                    Placement::Body(n, _) => ("body", n),
                };
                format!("{kind} {name}: [redacted]")
            })
            .collect();
        write!(f, "Credential({})", parts.join(", "))
    }
}

impl Credential {
    /// Whose calls these are, for the ledger's partition (`ledger`): the SHA-256 (hex) of
    /// every part as placed (where and what), never the credential itself.
    pub(crate) fn identity(&self) -> String {
        let mut parts = Vec::new();
        for placement in &self.placements {
            let (kind, name, value) = match placement {
                Placement::Header(n, v) => ("header", n, v),
                Placement::Query(n, v) => ("query", n, v),
                Placement::Cookie(n, v) => ("cookie", n, v),
                Placement::Body(n, v) => ("body", n, v),
            };
            parts.extend([kind, name.as_str(), value.as_str()]);
        }
        crate::digest(b"connectorgen principal 1", &parts)
    }

    /// The credential a one-part `scheme` says, from `value` (the variable's content),
    /// or `None` when the tool takes none or its credential has parts (`from_parts`).
    pub(crate) fn new(scheme: &Scheme, value: &str) -> Option<Credential> {
        let value = value.trim();
        let mut credential = Credential {
            placements: Vec::new(),
            secrets: vec![value.to_string()],
        };
        let placement = match scheme {
            Scheme::Bearer | Scheme::OAuth2 => {
                Placement::Header("Authorization".into(), format!("Bearer {value}"))
            }
            Scheme::Basic => {
                let encoded = credential.basic(value);
                Placement::Header("Authorization".into(), format!("Basic {encoded}"))
            }
            Scheme::ApiKey { location, name } => place(*location, name, value.to_string()),
            Scheme::Parts { .. } | Scheme::None => return None,
        };
        credential.push(placement);
        Some(credential)
    }

    /// The credential of parts, each from `value(part's variable)`; a part whose
    /// variable is not set is left out (start-up says so). `None`: no part is set.
    pub(crate) fn from_parts(
        parts: &[Part],
        value: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Credential> {
        let mut credential = Credential {
            placements: Vec::new(),
            secrets: Vec::new(),
        };
        for part in parts {
            let Some(raw) = value(&part.env) else {
                continue;
            };
            let raw = raw.trim().to_string();
            credential.secrets.push(raw.clone());
            let text = match part.encoding {
                Some(Encoding::Base64) => credential.basic(&raw),
                None => raw,
            };
            let text = match &part.format {
                Some(format) => format.replacen("{value}", &text, 1),
                None => text,
            };
            credential.push(place(part.location, &part.name, text));
        }
        (!credential.placements.is_empty()).then_some(credential)
    }

    /// The base64 of basic's `user:password`, its pieces registered as secrets.
    fn basic(&mut self, value: &str) -> String {
        let forms = redact::base64_forms(value);
        if let Some((user, password)) = value.split_once(':') {
            self.secrets
                .extend([user.to_string(), password.to_string()]);
        }
        let encoded = forms[0].clone();
        self.secrets.extend(forms);
        encoded
    }

    fn push(&mut self, placement: Placement) {
        let (Placement::Header(_, placed)
        | Placement::Query(_, placed)
        | Placement::Cookie(_, placed)
        | Placement::Body(_, placed)) = &placement;
        self.secrets.push(placed.clone());
        self.placements.push(placement);
    }

    /// Every secret text the credential holds, for the redactor.
    pub(crate) fn secrets(&self) -> &[String] {
        &self.secrets
    }
}

/// A value in a header (the default), the query, a cookie or the body.
fn place(location: Location, name: &str, text: String) -> Placement {
    match location {
        Location::Query => Placement::Query(name.to_string(), text),
        Location::Cookie => Placement::Cookie(name.to_string(), text),
        Location::Body => Placement::Body(name.to_string(), text),
        Location::Header | Location::Path => Placement::Header(name.to_string(), text),
    }
}

/// Reads one variable from those read at start-up (`Environment::get`), for the
/// request builder's `fixed:` inputs.
pub(crate) type ReadVariable = dyn Fn(&str) -> Option<String> + Send + Sync;

/// One variable a connector reads, for the start-up line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Use {
    pub name: String,
    /// `credential`, `fixed AccountSid (getMessage)`, …
    pub purposes: Vec<String>,
    /// The origins its value is sent to (`https://api.example.com`).
    pub origins: Vec<String>,
    pub set: bool,
}

/// The variables a connector reads, read.
#[derive(Clone, Default)]
pub(crate) struct Environment {
    values: BTreeMap<String, String>,
    pub uses: Vec<Use>,
    /// The credential's variables: `auth.env` for a one-part credential, each part's
    /// own otherwise; empty when no tool takes a credential.
    pub credential_envs: Vec<String>,
    /// Variables whose value is too short to be redacted from what the process writes.
    pub too_short: Vec<String>,
    /// The variable of a one-part credential (`auth.env`): a tool whose mapping says a
    /// one-part scheme reads it, whatever other tools' parts read.
    connection_env: String,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("uses", &self.uses)
            .finish_non_exhaustive()
    }
}

/// Where a variable is named, and what for.
struct Named {
    purpose: String,
    span: Option<Span>,
    origins: Vec<String>,
}

impl Environment {
    /// Reads every variable the tools use — the credential (`auth.env`) and each
    /// `fixed: { env }` — once every one is allowed: it starts with the service's prefix
    /// or is named in `allow`. `base_url`: where every call goes instead of the servers
    /// (`--base-url`). `read` reads one variable (`std::env::var` in the commands).
    pub(crate) fn read(
        analysis: &Analysis,
        tools: &[(Value, RequestMapping)],
        allow: &[String],
        base_url: Option<&str>,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Environment, String> {
        let connector = analysis
            .connector
            .as_ref()
            .ok_or("the manifest did not validate")?;
        let named = named(connector, tools, base_url);
        let prefix = env_prefix(&connector.service.name);
        let own = own_prefix(&prefix);
        let refused: Vec<(&String, &Vec<Named>)> = named
            .iter()
            .filter(|(name, _)| {
                !(own.is_some_and(|own| name.starts_with(own)) || allow.contains(name))
            })
            .map(|(name, places)| (name, places))
            .collect();
        if !refused.is_empty() {
            return Err(refusal(analysis, &prefix, &refused));
        }
        let mut credential_envs: Vec<String> = Vec::new();
        for (_, mapping) in tools {
            let names: Vec<String> = match &mapping.credential {
                Scheme::None => Vec::new(),
                Scheme::Parts { parts } => parts.iter().map(|p| p.env.clone()).collect(),
                _ => vec![connector.auth.env.clone()],
            };
            for name in names {
                if !credential_envs.contains(&name) {
                    credential_envs.push(name);
                }
            }
        }
        // The words a secret must not occur in: what the process writes as structure,
        // the tools' names and the service's (defect 8).
        let mut words: Vec<&str> = redact::STRUCTURAL.to_vec();
        words.push(&connector.service.name);
        words.extend(
            tools
                .iter()
                .filter_map(|(tool, _)| tool.get("name").and_then(Value::as_str)),
        );
        let mut values = BTreeMap::new();
        let mut uses = Vec::new();
        let mut too_short = Vec::new();
        for (name, places) in &named {
            let value = read(name).filter(|v| !v.trim().is_empty());
            if let Some(v) = &value {
                let length = v.trim().chars().count();
                if length < MIN_SECRET && credential_envs.contains(name) {
                    return Err(format!(
                        "{name} holds {length} character{}: a credential that short cannot be \
                         kept out of answers and logs (and is not a secret); set it to the \
                         provider's key, of {MIN_SECRET} characters or more",
                        if length == 1 { "" } else { "s" }
                    ));
                }
                if length < MIN_SECRET {
                    too_short.push(name.clone());
                } else if let Some(word) =
                    Redactor::new([v.as_str()])?.collides(words.iter().copied())
                {
                    return Err(format!(
                        "{name}'s value occurs in `{word}`, a word serve and probe write as \
                         structure (a field, a tool's name): redacting it there would break \
                         answers and log lines. A secret this short or this common cannot be \
                         kept out of them; check the variable"
                    ));
                }
            }
            let mut origins: Vec<String> = Vec::new();
            for origin in places.iter().flat_map(|p| &p.origins) {
                if !origins.contains(origin) {
                    origins.push(origin.clone());
                }
            }
            let mut purposes: Vec<String> = Vec::new();
            for place in places {
                if !purposes.contains(&place.purpose) {
                    purposes.push(place.purpose.clone());
                }
            }
            uses.push(Use {
                name: name.clone(),
                purposes,
                origins,
                set: value.is_some(),
            });
            if let Some(value) = value {
                values.insert(name.clone(), value);
            }
        }
        Ok(Environment {
            values,
            uses,
            credential_envs,
            too_short,
            connection_env: connector.auth.env.clone(),
        })
    }

    /// The value of a variable that was read (allowed, set and not blank).
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.values.get(name).cloned()
    }

    /// The credential of a tool, from its variables.
    pub(crate) fn credential(&self, mapping: &RequestMapping) -> Option<Credential> {
        match &mapping.credential {
            Scheme::Parts { parts } => Credential::from_parts(parts, &|name| self.get(name)),
            scheme => {
                // Not the first of `credential_envs`: that may be another tool's part
                // (an operation whose own `security` names another scheme).
                let value = self.get(&self.connection_env)?;
                Credential::new(scheme, &value)
            }
        }
    }

    /// Whether every variable of the credential is set (and there is a credential).
    pub(crate) fn credential_set(&self) -> bool {
        !self.credential_envs.is_empty() && self.missing_credential().is_empty()
    }

    /// The credential's variables that are not set.
    pub(crate) fn missing_credential(&self) -> Vec<&str> {
        self.credential_envs
            .iter()
            .filter(|name| !self.values.contains_key(*name))
            .map(String::as_str)
            .collect()
    }

    /// What `serve` and `probe` both start from: the process environment read as `read`
    /// does, each tool's credential from it (by the tools' order), and the redactor of
    /// them all.
    pub(crate) fn start(
        analysis: &Analysis,
        tools: &[(Value, RequestMapping)],
        allow: &[String],
        base_url: Option<&str>,
    ) -> Result<(Environment, Vec<Option<Credential>>, Redactor), String> {
        let environment = Environment::read(analysis, tools, allow, base_url, &|name| {
            std::env::var(name).ok()
        })?;
        let credentials: Vec<Option<Credential>> = tools
            .iter()
            .map(|(_, m)| environment.credential(m))
            .collect();
        let redactor = environment.redactor(&credentials)?;
        Ok((environment, credentials, redactor))
    }

    /// The redactor of every value read and every credential placed from it. Fails
    /// (and the command stops) when it cannot be built.
    pub(crate) fn redactor(&self, credentials: &[Option<Credential>]) -> Result<Redactor, String> {
        self.redactor_with(credentials, &[])
    }

    /// `redactor`, with `more` secrets read besides the tools' (serve's own credentials
    /// at the authorization server).
    pub(crate) fn redactor_with(
        &self,
        credentials: &[Option<Credential>],
        more: &[&str],
    ) -> Result<Redactor, String> {
        let mut secrets: Vec<&str> = self.values.values().map(String::as_str).collect();
        secrets.extend(more);
        for credential in credentials.iter().flatten() {
            secrets.extend(credential.secrets().iter().map(String::as_str));
        }
        Redactor::new(secrets)
    }

    /// The variables as the start-up line lists them.
    pub(crate) fn describe(&self) -> Value {
        Value::Array(
            self.uses
                .iter()
                .map(|u| {
                    json!({
                        "name": u.name,
                        "for": u.purposes,
                        "to": u.origins,
                        "set": u.set,
                    })
                })
                .collect(),
        )
    }
}

/// Every variable the tools read, in first-use order, with where and what for.
fn named(
    connector: &Connector,
    tools: &[(Value, RequestMapping)],
    base_url: Option<&str>,
) -> Vec<(String, Vec<Named>)> {
    let mut out: Vec<(String, Vec<Named>)> = Vec::new();
    let mut add = |name: &str, named: Named| match out.iter_mut().find(|(n, _)| n == name) {
        Some((_, list)) => list.push(named),
        None => out.push((name.to_string(), vec![named])),
    };
    for (tool, mapping) in tools {
        let origins = origins(mapping, base_url);
        let id = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        match &mapping.credential {
            Scheme::None => {}
            Scheme::Parts { parts } => {
                for part in parts {
                    let own = connector.auth.operations.values().flat_map(|c| match c {
                        OperationCredential::Parts(parts) => parts.as_slice(),
                        OperationCredential::None => &[],
                    });
                    let declared = connector
                        .auth
                        .parts
                        .iter()
                        .chain(own)
                        .find(|p| p.env == part.env && p.env_span.is_some())
                        .and_then(|p| p.env_span);
                    add(
                        &part.env,
                        Named {
                            purpose: format!(
                                "credential: {} {}",
                                part_place(part.location),
                                part.name
                            ),
                            span: declared,
                            origins: origins.clone(),
                        },
                    );
                }
            }
            _ => add(
                &connector.auth.env,
                Named {
                    purpose: "credential".to_string(),
                    span: connector.auth.env_span,
                    origins: origins.clone(),
                },
            ),
        }
        for fixed in &mapping.fixed {
            let Some(env) = &fixed.env else { continue };
            let span = connector
                .operations
                .iter()
                .find(|op| op.id == id)
                .and_then(|op| op.fixed.iter().find(|f| f.name == fixed.name))
                .map(|f| f.span);
            add(
                env,
                Named {
                    purpose: format!("fixed {} of {id}", fixed.name),
                    span,
                    origins: origins.clone(),
                },
            );
        }
    }
    out
}

/// How a part's place reads in a message.
fn part_place(location: Location) -> &'static str {
    match location {
        Location::Query => "query",
        Location::Cookie => "cookie",
        Location::Body => "body field",
        Location::Header | Location::Path => "header",
    }
}

/// The origins a tool's calls go to: `--base-url`'s, else its servers'.
fn origins(mapping: &RequestMapping, base_url: Option<&str>) -> Vec<String> {
    let urls: Vec<String> = match base_url {
        Some(base) => vec![base.to_string()],
        None => mapping
            .servers
            .iter()
            .map(|server| {
                let mut url = server.url.clone();
                for (name, value) in &server.variables {
                    url = url.replace(&format!("{{{name}}}"), value);
                }
                url
            })
            .collect(),
    };
    let mut out: Vec<String> = Vec::new();
    for url in urls {
        let origin = reqwest::Url::parse(&url).map_or(url, |u| u.origin().ascii_serialization());
        if !out.contains(&origin) {
            out.push(origin);
        }
    }
    out
}

/// Prefixes of variables that other software's credentials and the system's settings
/// use. The service's name is the manifest author's choice, so a service called `AWS`
/// or `GitHub` must not make `AWS_SECRET_ACCESS_KEY` or `GITHUB_TOKEN` "its own":
/// under these prefixes every variable needs `--allow-env` (review defect 2).
pub(crate) const RESERVED_PREFIXES: &[&str] = &[
    "ACTIONS_",
    "ANTHROPIC_",
    "ARM_",
    "AWS_",
    "AZURE_",
    "BITBUCKET_",
    "BUILDKITE_",
    "CARGO_",
    "CI_",
    "CIRCLE_",
    "CLAUDE_",
    "CLOUDFLARE_",
    "CLOUDSDK_",
    "CONNECTORGEN_",
    "DATABASE_",
    "DIGITALOCEAN_",
    "DOCKER_",
    "DYLD_",
    "GCLOUD_",
    "GCP_",
    "GH_",
    "GIT_",
    "GITHUB_",
    "GITLAB_",
    "GNUPG_",
    "GOOGLE_",
    "GPG_",
    "HEROKU_",
    "HF_",
    "HOME_",
    "HUGGINGFACE_",
    "JENKINS_",
    "KUBE_",
    "KUBECONFIG_",
    "LC_",
    "LD_",
    "MYSQL_",
    "NETLIFY_",
    "NODE_",
    "NPM_",
    "OPENAI_",
    "PG_",
    "PULUMI_",
    "PYPI_",
    "REDIS_",
    "RUNNER_",
    "RUSTUP_",
    "SLACK_",
    "SSH_",
    "SUDO_",
    "TF_",
    "TWINE_",
    "VAULT_",
    "VERCEL_",
    "XDG_",
];

/// The shortest service prefix (without its `_`) that makes variables the service's
/// own: a two-letter prefix (`DO_`, `GH_`) is too likely to be someone else's.
pub(crate) const MIN_OWN_PREFIX: usize = 3;

/// The prefix whose variables need no flag: the service's, unless it is reserved or
/// shorter than `MIN_OWN_PREFIX` — then none.
pub(crate) fn own_prefix(prefix: &str) -> Option<&str> {
    let short = prefix.trim_matches('_').chars().count() < MIN_OWN_PREFIX;
    let reserved = RESERVED_PREFIXES
        .iter()
        .any(|r| prefix.starts_with(r) || r.starts_with(prefix));
    (!short && !reserved).then_some(prefix)
}

/// One line: which variables the manifest names that the person did not allow, where,
/// where they would go, and the flags that allow them.
fn refusal(analysis: &Analysis, prefix: &str, refused: &[(&String, &Vec<Named>)]) -> String {
    let lines = LineIndex::new(analysis.diagnostics.text());
    let file = analysis.diagnostics.name();
    let each: Vec<String> = refused
        .iter()
        .map(|(name, places)| {
            let place = places.first();
            let at = place
                .and_then(|p| p.span)
                .map(|span| {
                    let (line, column) = lines.position(span.offset());
                    format!(", {file}:{line}:{column}")
                })
                .unwrap_or_default();
            let what = place.map_or("", |p| p.purpose.as_str());
            let to: Vec<&str> = places
                .iter()
                .flat_map(|p| &p.origins)
                .map(String::as_str)
                .collect();
            let mut seen: Vec<&str> = Vec::new();
            for origin in to {
                if !seen.contains(&origin) {
                    seen.push(origin);
                }
            }
            format!(
                "{name} ({what}{at}; it would be sent to {})",
                seen.join(", ")
            )
        })
        .collect();
    let flags: Vec<String> = refused
        .iter()
        .map(|(name, _)| format!("--allow-env {name}"))
        .collect();
    let rule = if own_prefix(prefix).is_some() {
        format!("Only variables whose names start with {prefix} are read")
    } else {
        format!(
            "The service's prefix {prefix} is one other software's credentials or the \
             system use (or shorter than {MIN_OWN_PREFIX} characters), so no variable is read"
        )
    };
    format!(
        "the manifest reads {} the person did not allow: {}. {rule} unless allowed on the \
         command line: if you mean to send {} there, add {}",
        if refused.len() == 1 {
            "an environment variable"
        } else {
            "environment variables"
        },
        each.join("; "),
        if refused.len() == 1 { "it" } else { "them" },
        flags.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use connectorgen_core::render::mcp::mapping::tools_in;

    #[test]
    fn debug_never_shows_the_value() {
        let c = Credential::new(&Scheme::Bearer, "sk_live_secret").unwrap();
        assert!(!format!("{c:?}").contains("sk_live_secret"));
        assert!(c.secrets().contains(&"Bearer sk_live_secret".to_string()));
    }

    #[test]
    fn basic_registers_the_pair_its_parts_and_its_base64() {
        let c = Credential::new(&Scheme::Basic, "sk_user:pa55word").unwrap();
        let secrets = c.secrets();
        for s in [
            "sk_user:pa55word",
            "sk_user",
            "pa55word",
            "c2tfdXNlcjpwYTU1d29yZA==",
        ] {
            assert!(secrets.contains(&s.to_string()), "{s}: {secrets:?}");
        }
    }

    fn analysis(manifest: &str) -> Analysis {
        let options = connectorgen_core::Options {
            targets: Some(vec![connectorgen_core::model::Target::Mcp]),
            ..connectorgen_core::Options::default()
        };
        let analysis = connectorgen_core::analyze_with(
            "connector.yaml",
            Arc::new(manifest.to_string()),
            &options,
        )
        .unwrap();
        assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
        analysis
    }

    const MANIFEST: &str = "version: 1
service:
  name: VidGen
  version: 1.0.0
  description: Videos.
  publicUrl: https://api.vidgen.example
  dashboardUrl: https://vidgen.example/keys
auth:
  env: GITHUB_TOKEN
operations:
  - id: getVideo
    method: get
    path: /v1/videos/{account}
    summary: Get a video
    description: Read-only.
    fixed: { account: { env: HOME } }
";

    #[test]
    fn a_variable_outside_the_prefix_is_refused_unread_until_allowed() {
        let analysis = analysis(MANIFEST);
        let tools = tools_in(analysis.outputs.as_ref()).unwrap();
        let reads = std::sync::Mutex::new(Vec::new());
        let read = |name: &str| {
            reads.lock().unwrap().push(name.to_string());
            Some(format!("value-of-{name}"))
        };
        let refused = Environment::read(&analysis, &tools, &[], None, &read).unwrap_err();
        assert_eq!(
            refused,
            "the manifest reads environment variables the person did not allow: GITHUB_TOKEN \
             (credential, connector.yaml:9:8; it would be sent to https://api.vidgen.example); \
             HOME (fixed account of getVideo, connector.yaml:16:14; it would be sent to \
             https://api.vidgen.example). Only variables whose names start with VIDGEN_ are \
             read unless allowed on the command line: if you mean to send them there, add \
             --allow-env GITHUB_TOKEN --allow-env HOME"
        );
        assert!(
            reads.lock().unwrap().is_empty(),
            "nothing read before the check"
        );

        let one = Environment::read(&analysis, &tools, &["HOME".into()], None, &read).unwrap_err();
        assert!(one.contains("add --allow-env GITHUB_TOKEN"), "{one}");
        assert!(!one.contains("HOME"), "{one}");

        let allowed = ["GITHUB_TOKEN".to_string(), "HOME".to_string()];
        let env = Environment::read(
            &analysis,
            &tools,
            &allowed,
            Some("http://127.0.0.1:9/x"),
            &read,
        )
        .unwrap();
        assert_eq!(env.get("HOME").as_deref(), Some("value-of-HOME"));
        assert_eq!(
            env.describe(),
            json!([
                { "name": "GITHUB_TOKEN", "for": ["credential"], "to": ["http://127.0.0.1:9"], "set": true },
                { "name": "HOME", "for": ["fixed account of getVideo"], "to": ["http://127.0.0.1:9"], "set": true },
            ])
        );
        assert_eq!(*reads.lock().unwrap(), ["GITHUB_TOKEN", "HOME"]);
    }

    #[test]
    fn the_services_own_variables_need_no_flag() {
        let text = MANIFEST
            .replace("env: GITHUB_TOKEN", "env: VIDGEN_KEY")
            .replace("env: HOME", "env: VIDGEN_ACCOUNT");
        let analysis = analysis(&text);
        let tools = tools_in(analysis.outputs.as_ref()).unwrap();
        let read = |name: &str| match name {
            "VIDGEN_KEY" => Some("vg_key_1".to_string()),
            _ => Some("ab".to_string()),
        };
        let env = Environment::read(&analysis, &tools, &[], None, &read).unwrap();
        assert!(env.credential_set());
        assert_eq!(env.get("VIDGEN_ACCOUNT").as_deref(), Some("ab"));
        assert_eq!(env.too_short, ["VIDGEN_ACCOUNT"]);
    }

    /// Defect 8: a credential too short to redact, or one inside a word the process
    /// writes as structure (a field, a tool's name), stops start-up, naming the variable.
    #[test]
    fn a_credential_too_short_or_structural_is_refused() {
        let text = MANIFEST
            .replace("env: GITHUB_TOKEN", "env: VIDGEN_KEY")
            .replace("env: HOME", "env: VIDGEN_ACCOUNT");
        let analysis = analysis(&text);
        let tools = tools_in(analysis.outputs.as_ref()).unwrap();
        for (key, account, expect) in [
            ("abc", "acct_1", "VIDGEN_KEY holds 3 characters"),
            (
                "structured",
                "acct_1",
                "VIDGEN_KEY's value occurs in `structuredContent`",
            ),
            (
                "vg_key_1",
                "Video",
                "VIDGEN_ACCOUNT's value occurs in `getVideo`",
            ),
            (
                "vg_key_1",
                "text",
                "VIDGEN_ACCOUNT's value occurs in `text`",
            ),
        ] {
            let read = |name: &str| match name {
                "VIDGEN_KEY" => Some(key.to_string()),
                _ => Some(account.to_string()),
            };
            let refused = Environment::read(&analysis, &tools, &[], None, &read).unwrap_err();
            assert!(refused.starts_with(expect), "{key} {account}: {refused}");
            assert!(!refused.contains(&format!("{key} ")), "{refused}");
        }
    }

    /// Defect 2: a service named like someone else's credentials (`AWS`, `GitHub`), or
    /// with a two-letter prefix, makes no variable its own.
    #[test]
    fn a_reserved_or_short_prefix_makes_no_variable_the_services_own() {
        for (service, env) in [
            ("AWS", "AWS_SECRET_ACCESS_KEY"),
            ("GitHub", "GITHUB_TOKEN"),
            ("Aws Secret", "AWS_SECRET_ACCESS_KEY"),
            ("GH", "GH_TOKEN"),
            ("Do", "DO_TOKEN"),
            ("SSH", "SSH_AUTH_SOCK"),
        ] {
            let text = MANIFEST
                .replace("name: VidGen", &format!("name: {service}"))
                .replace("env: GITHUB_TOKEN", &format!("env: {env}"))
                .replace("fixed: { account: { env: HOME } }", "");
            let analysis = analysis(&text);
            let tools = tools_in(analysis.outputs.as_ref()).unwrap();
            let read = |_: &str| Some("value-of-it".to_string());
            let refused = Environment::read(&analysis, &tools, &[], None, &read).unwrap_err();
            assert!(
                refused.contains(&format!("add --allow-env {env}")),
                "{service}: {refused}"
            );
            assert!(refused.contains("so no variable is read"), "{refused}");
            let allowed = Environment::read(&analysis, &tools, &[env.to_string()], None, &read);
            assert!(allowed.is_ok(), "{service}: {allowed:?}");
        }
        assert_eq!(own_prefix("VIDGEN_"), Some("VIDGEN_"));
        assert_eq!(own_prefix("AWSOME_"), Some("AWSOME_"));
    }
}
