//! What a ledger URL asks of TLS, read as libpq reads it, and the connector that keeps it.
//!
//! Takes: the connection string (a `postgres://` URL or `key=value` words) and where its
//! hosts are. Returns: the string the driver can parse (it knows neither `verify-ca`,
//! `verify-full` nor `sslrootcert`), and a `Tls` to connect with: plaintext, or rustls
//! with the checks `sslmode` names. Must never: let a connection to a remote host go out
//! unencrypted unless its string says `sslmode=disable`, or encrypted to a server whose
//! certificate nobody checked; or read a CA file other than the one `sslrootcert` names.
//!
//! What each `sslmode` does (libpq's meanings, <https://www.postgresql.org/docs/current/libpq-ssl.html>,
//! with what this ledger adds in the last column):
//!
//! | sslmode | certificate checked | to a remote host |
//! |---|---|---|
//! | `disable` | no TLS | allowed: a tunnel, said on purpose |
//! | `allow`, `prefer`, none | no TLS (as before TLS was built in) | refused: even libpq's `prefer` falls back to plaintext when anyone on the path answers "no TLS", and checks nothing |
//! | `require` | none: encrypted, unverified | refused, with the hint to use `verify-full` |
//! | `require` + `sslrootcert=FILE` | as `verify-ca` (libpq reads it so) | allowed |
//! | `verify-ca` + `sslrootcert=FILE` | the chain, up to a CA in FILE | allowed |
//! | `verify-full` + `sslrootcert=FILE` | the chain up to FILE's CAs, and the host name | allowed |
//! | `verify-full` alone, or `sslrootcert=system` | the chain up to the platform's store, and the host name | allowed |
//!
//! Refused everywhere: `verify-ca` without a CA file, and `sslrootcert=system` with any mode
//! but `verify-full` (libpq 16 refuses that too): against the platform's store, which holds
//! the public CAs, a certificate anyone can get for a name they own would pass a check that
//! does not look at the name. libpq's own default without `sslrootcert` is
//! `~/.postgresql/root.crt`; here it is the platform's store (the one the provider calls
//! trust), so the file a managed database's provider publishes is named explicitly.
//! On loopback (`localhost`, `127.0.0.1`, `::1`: a tunnel's local end, a sidecar) a string
//! that asks nothing stays plaintext, as it was, and `require` is allowed unchecked: what
//! the last column guards against is the network between the machines.
//! A Unix socket never carries TLS (PostgreSQL has none there), so `sslmode` does not apply
//! to one, as in libpq. Client certificates (`sslcert`, `sslkey`) are not supported: the
//! driver refuses them as unknown options.

mod handshake;

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use tokio_postgres::config::SslMode;

use super::super::LedgerError;

pub(super) use handshake::Tls;

/// libpq's `sslmode` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Result<Mode, LedgerError> {
        Ok(match value {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => {
                return Err(LedgerError::Store(format!(
                    "sslmode={value} is not one of disable, allow, prefer, require, verify-ca, \
                     verify-full"
                )));
            }
        })
    }
}

/// What a connection string asks of TLS: the last `sslmode` and `sslrootcert`, as libpq
/// and the driver take the last of a repeated keyword.
#[derive(Debug, Default)]
pub(super) struct Asked {
    mode: Option<Mode>,
    root: Option<String>,
}

/// What becomes of one parameter on its way to the driver.
enum Pass {
    Unchanged,
    /// The same keyword with this value.
    Value(&'static str),
    Dropped,
}

impl Asked {
    fn note(&mut self, key: &str, value: &str) -> Result<Pass, LedgerError> {
        Ok(match key {
            "sslmode" => {
                let mode = Mode::parse(value)?;
                self.mode = Some(mode);
                // The driver's mode is set from `plan` after parsing; the value given to
                // it only has to be one it parses.
                match mode {
                    Mode::VerifyCa | Mode::VerifyFull => Pass::Value("require"),
                    Mode::Allow => Pass::Value("prefer"),
                    Mode::Disable | Mode::Prefer | Mode::Require => Pass::Unchanged,
                }
            }
            "sslrootcert" => {
                self.root = Some(value.to_string());
                Pass::Dropped
            }
            _ => Pass::Unchanged,
        })
    }
}

/// `url` as the driver can parse it (`verify-ca` and `verify-full` given as `require`,
/// `allow` as `prefer`, `sslrootcert` taken out; everything else as written), and what it
/// asked. A string outside the driver's grammar is passed on as it is from there, for the
/// driver to refuse.
pub(super) fn read(url: &str) -> Result<(String, Asked), LedgerError> {
    let mut asked = Asked::default();
    for prefix in ["postgres://", "postgresql://"] {
        if let Some(rest) = url.strip_prefix(prefix) {
            let text = format!("{prefix}{}", read_url(rest, &mut asked)?);
            return Ok((text, asked));
        }
    }
    let text = read_key_values(url, &mut asked)?;
    Ok((text, asked))
}

/// A URL after its scheme, by the driver's grammar (tokio-postgres `config.rs`,
/// `UrlParser`): the user part runs to the first `@` wherever it is, the host and path to
/// the first `?` after it; then `key=value` parameters split on `&`, a key running to the
/// next `=`, both percent-encoded.
fn read_url(rest: &str, asked: &mut Asked) -> Result<String, LedgerError> {
    let start = rest.find('@').map_or(0, |at| at + 1);
    let Some(question) = rest[start..].find('?').map(|at| start + at) else {
        return Ok(rest.to_string());
    };
    let (head, mut parameters) = (&rest[..question], &rest[question + 1..]);
    let decoded = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let mut kept = Vec::new();
    while !parameters.is_empty() {
        let Some((key, after)) = parameters.split_once('=') else {
            // An unterminated parameter: the driver says so.
            kept.push(parameters.to_string());
            break;
        };
        let (value, next) = after.split_once('&').unwrap_or((after, ""));
        parameters = next;
        match asked.note(&decoded(key), &decoded(value))? {
            Pass::Unchanged => kept.push(format!("{key}={value}")),
            Pass::Value(value) => kept.push(format!("{key}={value}")),
            Pass::Dropped => {}
        }
    }
    Ok(if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    })
}

/// A key-value string, by the driver's grammar (`Parser`): `keyword = value` words, the
/// value `'quoted'` or bare, a backslash taking the next character.
fn read_key_values(text: &str, asked: &mut Asked) -> Result<String, LedgerError> {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let word = rest.trim_start();
        out.push_str(&rest[..rest.len() - word.len()]);
        rest = word;
        let key_end = rest
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(rest.len());
        let value_at = rest[key_end..]
            .trim_start()
            .strip_prefix('=')
            .map(str::trim_start);
        let value = value_at.and_then(|at| Some((at, value(at)?)));
        let Some((at, (value, length))) = value.filter(|_| key_end > 0) else {
            // The end, or not the driver's grammar (it refuses the string).
            out.push_str(rest);
            return Ok(out);
        };
        let whole = rest.len() - at.len() + length;
        let key = &rest[..key_end];
        match asked.note(key, &value)? {
            Pass::Unchanged => out.push_str(&rest[..whole]),
            Pass::Value(value) => out.push_str(&format!("{key}={value}")),
            Pass::Dropped => {}
        }
        rest = &rest[whole..];
    }
}

/// The value at the start of `text` in a key-value string, unescaped, and the bytes it
/// took; `None` where the driver refuses it (an unclosed quote, an empty bare value).
fn value(text: &str) -> Option<(String, usize)> {
    let mut value = String::new();
    let quoted = text.starts_with('\'');
    let mut chars = text.char_indices().skip(usize::from(quoted));
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' if quoted => return Some((value, at + 1)),
            c if c.is_whitespace() && !quoted => return (!value.is_empty()).then_some((value, at)),
            '\\' => value.extend(chars.next().map(|(_, c)| c)),
            c => value.push(c),
        }
    }
    (!quoted && !value.is_empty()).then_some((value, text.len()))
}

/// Where a connection string's hosts are.
pub(super) struct Place {
    /// A host (or `hostaddr`) is neither a Unix socket nor loopback.
    pub(super) remote: bool,
    pub(super) reached: Reached,
}

/// How the driver reaches the hosts it tries.
pub(super) enum Reached {
    /// Every one through a Unix socket.
    Unix,
    /// Some through a Unix socket, some over TCP.
    Both,
    /// Over TCP, each by a host name or address, which TLS checks the certificate against.
    Tcp,
    /// Over TCP, some by a `hostaddr` alone: no name to check the certificate against.
    TcpByAddress,
}

/// The connector for what `asked` says, to hosts at `place`: plaintext or TLS with its
/// checks, the CA file read now (so a missing one stops start-up), or a refusal that
/// says what to write instead.
pub(super) fn plan(asked: &Asked, place: &Place) -> Result<Tls, LedgerError> {
    let file = asked.root.as_deref().filter(|root| *root != "system");
    let mode = match (asked.mode, asked.root.as_deref()) {
        (None | Some(Mode::VerifyFull), Some("system")) => Mode::VerifyFull,
        (Some(mode), Some("system")) => {
            return Err(LedgerError::Store(format!(
                "sslrootcert=system needs sslmode=verify-full, not {}: against the platform's \
                 store of public CAs, a certificate anyone can get for a name they own would \
                 pass a check that does not look at the name (libpq refuses it too)",
                name(mode)
            )));
        }
        // libpq: `require` with a root certificate named is `verify-ca`.
        (Some(Mode::Require), Some(_)) => Mode::VerifyCa,
        (mode, _) => mode.unwrap_or(Mode::Prefer),
    };
    if matches!(place.reached, Reached::Unix) {
        return Ok(Tls::plaintext());
    }
    let refused = |text: String| Err(LedgerError::Store(text));
    match mode {
        Mode::Disable => return Ok(Tls::plaintext()),
        Mode::Allow | Mode::Prefer if !place.remote => return Ok(Tls::plaintext()),
        Mode::Allow | Mode::Prefer => {
            return refused(
                "a remote database would be reached without TLS: add sslmode=verify-full (with \
                 sslrootcert=<the CA's file> when its certificate is not from a public CA), \
                 or, through a tunnel (SSH, WireGuard), add sslmode=disable to say so \
                 (docs/serve.md, \"Several instances\")"
                    .into(),
            );
        }
        Mode::Require if place.remote => {
            return refused(
                "sslmode=require to a remote database encrypts but checks no certificate, so \
                 anyone on the path could pose as the database: use sslmode=verify-full (with \
                 sslrootcert=<the CA's file> when its certificate is not from a public CA) \
                 (docs/serve.md, \"Several instances\")"
                    .into(),
            );
        }
        Mode::VerifyCa if file.is_none() => {
            return refused(
                "sslmode=verify-ca needs sslrootcert=<the CA's file>: against the platform's \
                 store of public CAs, a certificate anyone can get for a name they own would \
                 pass. Name the CA's file, or use sslmode=verify-full"
                    .into(),
            );
        }
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => {}
    }
    if matches!(place.reached, Reached::Both) {
        return refused(format!(
            "sslmode={} with a Unix socket among the hosts: PostgreSQL has no TLS over a Unix \
             socket; give the socket and the TCP hosts separate ledgers' URLs, or use \
             sslmode=disable for a tunnel",
            name(mode)
        ));
    }
    if matches!(place.reached, Reached::TcpByAddress) {
        return refused(format!(
            "sslmode={} needs host=<the server's name> beside hostaddr=: TLS checks the \
             certificate against a name (and sends it)",
            name(mode)
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (verifier, against): (Arc<dyn ServerCertVerifier>, String) = match (mode, file) {
        (Mode::Require, _) => (
            handshake::Anchored::unchecked(Arc::clone(&provider)),
            "no CA (sslmode=require checks none)".into(),
        ),
        (Mode::VerifyCa, Some(file)) => (
            handshake::Anchored::to(roots(file)?, Arc::clone(&provider)),
            format!("the CA in sslrootcert={file}"),
        ),
        (_, Some(file)) => (
            WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(file)?),
                Arc::clone(&provider),
            )
            .build()
            .map_err(|e| LedgerError::Store(format!("sslrootcert={file}: {e}")))?,
            format!("the CA in sslrootcert={file}"),
        ),
        (_, None) => (
            Arc::new(
                rustls_platform_verifier::Verifier::new(Arc::clone(&provider)).map_err(|e| {
                    LedgerError::Store(format!(
                        "sslmode=verify-full without sslrootcert checks the server against \
                         the platform's certificate store, which could not be loaded ({e}): \
                         name the CA's file with sslrootcert=<path>"
                    ))
                })?,
            ),
            "a CA of the platform's certificate store".into(),
        ),
    };
    let hint = if file.is_some() {
        "is that the file of the CA the database's provider publishes for it?"
    } else {
        "name the CA's file with sslrootcert=<path> (a managed database's provider publishes it)"
    };
    Tls::checked(provider, verifier, against, name(mode), hint)
}

/// `mode` as written in a connection string.
fn name(mode: Mode) -> &'static str {
    match mode {
        Mode::Disable => "disable",
        Mode::Allow => "allow",
        Mode::Prefer => "prefer",
        Mode::Require => "require",
        Mode::VerifyCa => "verify-ca",
        Mode::VerifyFull => "verify-full",
    }
}

/// The CA certificates of the PEM file `file`, every one of them a trust anchor (as
/// libpq's OpenSSL takes them).
fn roots(file: &str) -> Result<RootCertStore, LedgerError> {
    let pem = std::fs::read(file)
        .map_err(|e| LedgerError::Store(format!("sslrootcert={file}: could not read it: {e}")))?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| LedgerError::Store(format!("sslrootcert={file}: not PEM: {e}")))?;
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(certificates);
    if added == 0 {
        return Err(LedgerError::Store(format!(
            "sslrootcert={file} holds no CA certificate (PEM, \"BEGIN CERTIFICATE\")"
        )));
    }
    Ok(roots)
}

impl Tls {
    /// The driver's own `sslmode` for this connector: `require` for TLS (its checks are
    /// the connector's), `disable` otherwise (never `prefer`, which would fall back to
    /// plaintext).
    pub(super) fn driver_mode(&self) -> SslMode {
        if self.encrypts() {
            SslMode::Require
        } else {
            SslMode::Disable
        }
    }
}

#[cfg(test)]
mod tests;
