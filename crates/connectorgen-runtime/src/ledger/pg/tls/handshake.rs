//! The TLS handshake under the driver: tokio-postgres's `MakeTlsConnect` over
//! tokio-rustls, the certificate checks that `verify-ca` and `require` ask for (the
//! platform's and rustls's own verifiers do `verify-full`), the channel-binding hash, and
//! a refusal's reason in words.
//!
//! Takes: a rustls verifier chosen by `plan`, and the host name the driver dials. Returns:
//! an encrypted stream, or why the server was refused (which CA, which name). Must never:
//! accept a certificate its mode checks that does not chain to the named CAs, or (under
//! `verify-full`) that does not name the host.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::verify_server_cert_signed_by_trust_anchor;
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use sha2::Digest as _;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::Socket;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

use super::super::super::LedgerError;

/// How a ledger's connections are made: plaintext (the driver never asks for TLS), or TLS
/// with one rustls configuration.
#[derive(Clone)]
pub(in crate::ledger::pg) struct Tls {
    checked: Option<Arc<Checked>>,
}

/// A TLS configuration and what its refusals say.
struct Checked {
    config: Arc<ClientConfig>,
    /// What the certificate must chain to, in words: "the CA in sslrootcert=…".
    against: String,
    /// The `sslmode` that asked for it.
    mode: &'static str,
    /// What to do about a certificate of another CA.
    hint: &'static str,
}

impl Tls {
    pub(in crate::ledger::pg) fn plaintext() -> Tls {
        Tls { checked: None }
    }

    /// TLS checked by `verifier`, offering ALPN `postgresql` (as libpq 17 does: a server
    /// taking TLS first, `sslnegotiation=direct`, requires it; older ones ignore it).
    pub(super) fn checked(
        provider: Arc<CryptoProvider>,
        verifier: Arc<dyn ServerCertVerifier>,
        against: String,
        mode: &'static str,
        hint: &'static str,
    ) -> Result<Tls, LedgerError> {
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| LedgerError::Store(format!("TLS to PostgreSQL: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Tls {
            checked: Some(Arc::new(Checked {
                config: Arc::new(config),
                against,
                mode,
                hint,
            })),
        })
    }

    pub(super) fn encrypts(&self) -> bool {
        self.checked.is_some()
    }
}

impl MakeTlsConnect<Socket> for Tls {
    type Stream = Stream;
    type TlsConnect = Handshake;
    type Error = std::convert::Infallible;

    /// Called for every connection, a Unix socket's too (with an empty name), so the name
    /// is only read when a handshake is made.
    fn make_tls_connect(&mut self, host: &str) -> Result<Handshake, Self::Error> {
        Ok(Handshake {
            checked: self.checked.clone(),
            host: host.to_string(),
        })
    }
}

/// One connection's handshake, to `host`.
pub(in crate::ledger::pg) struct Handshake {
    checked: Option<Arc<Checked>>,
    host: String,
}

impl TlsConnect<Socket> for Handshake {
    type Stream = Stream;
    type Error = String;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, String>> + Send>>;

    fn connect(self, socket: Socket) -> Self::Future {
        Box::pin(async move {
            // Never asked: the driver's mode is `disable` without a configuration.
            let checked = self.checked.ok_or("TLS was not configured")?;
            let name = ServerName::try_from(self.host.clone())
                .map_err(|e| format!("{:?} is not a host name for TLS: {e}", self.host))?;
            tokio_rustls::TlsConnector::from(Arc::clone(&checked.config))
                .connect(name, socket)
                .await
                .map(Stream)
                .map_err(|e| checked.refusal(&e, &self.host))
        })
    }
}

impl Checked {
    /// Why the handshake with `host` failed, saying which check refused the server.
    fn refusal(&self, e: &io::Error, host: &str) -> String {
        let Some(tls) = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) else {
            return e.to_string();
        };
        match tls {
            rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer | CertificateError::BadSignature,
            ) => format!(
                "the server's certificate is not signed by {} (sslmode={}): {}",
                self.against, self.mode, self.hint
            ),
            rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                presented,
                ..
            }) => format!(
                "the server's certificate is not for the host name {host:?} (sslmode={} checks \
                 it; the certificate names {}): connect by a name it holds",
                self.mode,
                presented.join(", ")
            ),
            rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => format!(
                "the server's certificate is not for the host name {host:?} (sslmode={} checks \
                 it): connect by a name it holds",
                self.mode
            ),
            other => format!(
                "the server's certificate was refused (sslmode={}): {other}",
                self.mode
            ),
        }
    }
}

/// The check of `verify-ca`: the chain up to `roots`, whatever name the certificate is
/// for; or, for `require`, none (`roots` empty: encrypted, unverified). Either way the
/// handshake's signatures are checked, so the server holds the certificate's key.
#[derive(Debug)]
pub(super) struct Anchored {
    roots: Option<RootCertStore>,
    provider: Arc<CryptoProvider>,
}

impl Anchored {
    pub(super) fn to(roots: RootCertStore, provider: Arc<CryptoProvider>) -> Arc<Anchored> {
        Arc::new(Anchored {
            roots: Some(roots),
            provider,
        })
    }

    pub(super) fn unchecked(provider: Arc<CryptoProvider>) -> Arc<Anchored> {
        Arc::new(Anchored {
            roots: None,
            provider,
        })
    }
}

impl ServerCertVerifier for Anchored {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            verify_server_cert_signed_by_trust_anchor(
                &ParsedCertificate::try_from(end_entity)?,
                roots,
                intermediates,
                now,
                self.provider.signature_verification_algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// An encrypted connection to the server.
pub(in crate::ledger::pg) struct Stream(tokio_rustls::client::TlsStream<Socket>);

impl TlsStream for Stream {
    /// `tls-server-end-point` (RFC 5929), so SCRAM authentication can be bound to this
    /// connection (`SCRAM-SHA-256-PLUS`): a server's password check then fails through
    /// anyone who relays the connection with a certificate of their own.
    fn channel_binding(&self) -> ChannelBinding {
        let (_, session) = self.0.get_ref();
        session
            .peer_certificates()
            .and_then(<[_]>::first)
            .and_then(|certificate| end_point(certificate))
            .map_or_else(ChannelBinding::none, ChannelBinding::tls_server_end_point)
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

/// The `tls-server-end-point` value of a certificate (RFC 5929 §4.1): its hash under its
/// signature's hash function, SHA-256 for MD5 and SHA-1. `None` for a signature whose
/// hash is not in its algorithm's name (RSASSA-PSS, Ed25519): SCRAM then goes without
/// binding, as PostgreSQL's server cannot bind to such a certificate either.
pub(super) fn end_point(certificate: &[u8]) -> Option<Vec<u8>> {
    // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm
    // AlgorithmIdentifier (a SEQUENCE whose first element is the OID), signature }.
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let (fields, _) = der(certificate, 0x30)?;
    let (_, after_tbs) = der(fields, 0x30)?;
    let (algorithm, _) = der(after_tbs, 0x30)?;
    let (oid, _) = der(algorithm, 0x06)?;
    let digest = match (oid.strip_prefix(RSA), oid.strip_prefix(ECDSA)) {
        // md5WithRSA, sha1WithRSA, sha256WithRSA; ecdsa-with-SHA1, -SHA256.
        (Some([0x04 | 0x05 | 0x0b]), _) | (_, Some([0x01] | [0x03, 0x02])) => {
            sha2::Sha256::digest(certificate).to_vec()
        }
        (Some([0x0e]), _) | (_, Some([0x03, 0x01])) => sha2::Sha224::digest(certificate).to_vec(),
        (Some([0x0c]), _) | (_, Some([0x03, 0x03])) => sha2::Sha384::digest(certificate).to_vec(),
        (Some([0x0d]), _) | (_, Some([0x03, 0x04])) => sha2::Sha512::digest(certificate).to_vec(),
        _ => return None,
    };
    Some(digest)
}

/// The content of the DER element at the start of `input` when its tag is `tag`, and what
/// follows the element.
fn der(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = input.split_first()?;
    let (&length, rest) = rest.split_first()?;
    if first != tag {
        return None;
    }
    let (length, rest) = if length < 0x80 {
        (usize::from(length), rest)
    } else {
        // The long form: the low bits say how many bytes of length follow.
        let count = usize::from(length & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        let length = bytes
            .iter()
            .fold(0usize, |sum, &byte| (sum << 8) | usize::from(byte));
        (length, rest)
    };
    (rest.len() >= length).then(|| rest.split_at(length))
}
