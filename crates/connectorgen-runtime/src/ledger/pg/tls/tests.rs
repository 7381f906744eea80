//! TLS to PostgreSQL: the rules on connection strings alone, then real handshakes with the
//! TLS cluster (`testing/postgres/tls.rs`: a CA made for the run, a server certificate
//! for `localhost` alone, no TCP without TLS), each refusal read for the reason it gives.

use super::super::super::{Claim, Decision, Ledger, Retention};
use super::super::{PgLedger, config, shown};
use super::read;
use crate::testing::postgres::tls as cluster;

const KEEP: Retention = Retention {
    window: 3_600,
    consent: 600,
    max_bytes: 1 << 30,
    receipts: 0,
};

fn refused(url: &str) -> String {
    match config(url) {
        Ok(_) => panic!("{url} was accepted"),
        Err(e) => e.to_string(),
    }
}

/// Whether `url` is accepted, and with TLS.
fn encrypts(url: &str) -> bool {
    let target = config(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    target.tls.encrypts()
}

fn open(url: &str) -> Result<PgLedger, String> {
    PgLedger::open(url, "test", KEEP, 60).map_err(|e| e.to_string())
}

/// Whether the ledger's own session is encrypted, as the server sees it.
fn encrypted(ledger: &PgLedger) -> bool {
    ledger
        .with(|session| {
            Ok(session
                .runtime
                .block_on(session.client.query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                ))?
                .get(0))
        })
        .unwrap()
}

/// A claim is written and read back through `ledger`.
fn claims(ledger: &PgLedger) {
    let claim = Claim {
        tool: "createVideo",
        args_hash: "h1",
        principal: "alice",
        nonce: None,
        now: 1_000,
        since: 0,
        busy: &[],
        receipt: None,
        tallies: &[],
    };
    let (_, entry) = ledger
        .claim(&claim, &mut |_| Decision::Insert {
            key: "key-1".into(),
            nonce: None,
        })
        .unwrap();
    let id = entry.expect("the claim wrote its row").id;
    let row = ledger
        .entry(id, "alice")
        .unwrap()
        .expect("the row reads back");
    assert_eq!(row.key, "key-1");
}

/// The CA file of the TLS cluster (started by the first test that needs it).
fn ca() -> String {
    cluster::cluster().ca.display().to_string()
}

#[test]
fn each_sslmode_is_read_as_libpq_reads_it_and_a_remote_host_needs_a_checked_certificate() {
    let ca = ca();
    let remote = "postgres://app:pw@db.example.net/ledger";
    // Nothing said, prefer, allow: plaintext, refused to a remote host, with both ways out.
    for url in [
        remote.to_string(),
        format!("{remote}?sslmode=prefer"),
        format!("{remote}?sslmode=allow"),
    ] {
        let e = refused(&url);
        assert!(
            e.contains("add sslmode=verify-full") && e.contains("add sslmode=disable"),
            "{e}"
        );
        assert!(!e.contains("pw"), "{e}");
    }
    // require without a CA file: encrypted, unchecked, refused to a remote host.
    let e = refused(&format!("{remote}?sslmode=require"));
    assert!(
        e.contains("checks no certificate") && e.contains("use sslmode=verify-full"),
        "{e}"
    );
    // The checked modes, and a tunnel said on purpose.
    assert!(!encrypts(&format!("{remote}?sslmode=disable")));
    assert!(encrypts(&format!(
        "{remote}?sslmode=verify-full&sslrootcert={ca}"
    )));
    assert!(encrypts(&format!(
        "{remote}?sslmode=verify-ca&sslrootcert={ca}"
    )));
    // libpq: require with a CA file is verify-ca.
    assert!(encrypts(&format!(
        "{remote}?sslmode=require&sslrootcert={ca}"
    )));
    // verify-full without a file: the platform's store; sslrootcert=system alone means it.
    assert!(encrypts(&format!("{remote}?sslmode=verify-full")));
    assert!(encrypts(&format!("{remote}?sslrootcert=system")));
    // Checks that could not tell one public CA's customer from another: refused anywhere.
    for url in [
        format!("{remote}?sslmode=verify-ca"),
        "postgres://app@localhost/ledger?sslmode=verify-ca".to_string(),
    ] {
        assert!(
            refused(&url).contains("verify-ca needs sslrootcert="),
            "{url}"
        );
    }
    for mode in ["verify-ca", "require", "prefer", "disable"] {
        let e = refused(&format!("{remote}?sslmode={mode}&sslrootcert=system"));
        assert!(
            e.contains("sslrootcert=system needs sslmode=verify-full"),
            "{e}"
        );
    }
    assert!(refused(&format!("{remote}?sslmode=verify")).contains("is not one of"));
    // Client certificates are not supported: the driver's refusal names the option.
    assert!(
        refused(&format!(
            "{remote}?sslmode=verify-full&sslcert=/etc/client.pem"
        ))
        .contains("unknown option `sslcert`")
    );
    let e = refused(&format!(
        "{remote}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"
    ));
    assert!(
        e.contains("sslrootcert=/nonexistent/ca.pem: could not read it"),
        "{e}"
    );
    // Loopback: plaintext unless asked, and require is allowed unchecked there.
    assert!(!encrypts("postgres://app@localhost/ledger"));
    assert!(!encrypts("postgres://app@127.0.0.1/ledger?sslmode=prefer"));
    assert!(encrypts("postgres://app@localhost/ledger?sslmode=require"));
    // A Unix socket has no TLS, whatever the mode says (as libpq).
    assert!(!encrypts(
        "postgres://app@%2Frun%2Fpg/ledger?sslmode=verify-full"
    ));
    assert!(
        refused("postgres://app@localhost,%2Frun%2Fpg/ledger?sslmode=require")
            .contains("no TLS over a Unix socket")
    );
    // TLS needs a name to check the certificate against.
    assert!(
        refused("postgres://app@/ledger?hostaddr=203.0.113.5&sslmode=verify-full")
            .contains("needs host=")
    );
    // The key-value form, with a quoted path holding a space.
    let e =
        refused("host=db.example.net user=app sslmode=verify-full sslrootcert='/no such/ca.pem'");
    assert!(
        e.contains("sslrootcert=/no such/ca.pem: could not read it"),
        "{e}"
    );
    assert!(encrypts(&format!(
        "host=db.example.net user=app sslmode=verify-full sslrootcert = {ca}"
    )));
}

/// The driver's grammar is kept around what is taken out or translated: percent-encoding
/// in a URL, quotes and escapes in a key-value string, the last of a repeated keyword.
#[test]
fn the_driver_gets_the_string_without_what_it_does_not_know() {
    let (text, asked) = read(
        "postgres://app:p?w@db/x?sslmode=verify-full&sslrootcert=%2Fetc%2Fa%20b.pem\
         &application_name=x&sslmode=verify-ca",
    )
    .unwrap();
    assert_eq!(
        text,
        "postgres://app:p?w@db/x?sslmode=require&application_name=x&sslmode=require"
    );
    assert_eq!(asked.root.as_deref(), Some("/etc/a b.pem"));
    assert_eq!(asked.mode, Some(super::Mode::VerifyCa));
    let (text, asked) =
        read(r"host=db sslrootcert = '/a b\'c.pem' sslmode=verify-full password=it\ s dbname=x")
            .unwrap();
    assert_eq!(text, r"host=db  sslmode=require password=it\ s dbname=x");
    assert_eq!(asked.root.as_deref(), Some("/a b'c.pem"));
    // The password stays masked, the CA file shown.
    assert_eq!(
        shown(
            "postgres://app:hunter22@db.example.net/x?sslmode=verify-full&sslrootcert=/etc/ca.pem"
        ),
        "postgres://app:***@db.example.net/x?sslmode=verify-full&sslrootcert=/etc/ca.pem"
    );
    let shown = shown("host=db password=hunter22 sslmode=verify-ca sslrootcert='/etc/ca.pem'");
    assert!(
        !shown.contains("hunter22") && shown.contains("/etc/ca.pem"),
        "{shown}"
    );
}

#[test]
fn verify_full_with_the_right_ca_connects_encrypted_and_claims() {
    let tls = cluster::cluster();
    let ledger = open(&tls.url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", ca()),
    ))
    .unwrap();
    assert!(encrypted(&ledger));
    claims(&ledger);
}

#[test]
fn a_certificate_from_another_ca_is_refused_saying_which_ca() {
    let tls = cluster::cluster();
    let other = tls.other_ca.display().to_string();
    // require with a CA file is verify-ca, so it checks the chain too.
    for mode in ["verify-full", "verify-ca", "require"] {
        let e = open(&tls.url("localhost", &format!("sslmode={mode}&sslrootcert={other}")))
            .err()
            .unwrap_or_else(|| panic!("{mode}: another CA's server was accepted"));
        assert!(
            e.contains(&format!(
                "the server's certificate is not signed by the CA in sslrootcert={other}"
            )),
            "{mode}: {e}"
        );
    }
    // Without a CA file, verify-full checks the platform's store, which does not hold
    // the run's CA.
    let e = open(&tls.url("localhost", "sslmode=verify-full"))
        .err()
        .expect("a server of a private CA was accepted against the platform's store");
    assert!(
        e.contains("is not signed by a CA of the platform's certificate store"),
        "{e}"
    );
}

#[test]
fn a_host_name_not_in_the_certificate_is_refused_by_verify_full_alone() {
    let tls = cluster::cluster();
    let ca = ca();
    // The certificate names `localhost`; 127.0.0.1 is the same server by another name.
    let e = open(&tls.url(
        "127.0.0.1",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .err()
    .expect("verify-full accepted a certificate for another name");
    assert!(
        e.contains("the server's certificate is not for the host name \"127.0.0.1\"")
            && e.contains("localhost"),
        "{e}"
    );
    for mode in ["verify-ca", "require"] {
        let ledger = open(&tls.url("127.0.0.1", &format!("sslmode={mode}&sslrootcert={ca}")))
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert!(encrypted(&ledger), "{mode}");
    }
}

#[test]
fn require_connects_encrypted_without_a_ca_file() {
    let tls = cluster::cluster();
    for host in ["localhost", "127.0.0.1"] {
        let ledger = open(&tls.url(host, "sslmode=require")).unwrap();
        assert!(encrypted(&ledger), "{host}");
        claims(&ledger);
    }
    // The cluster takes no TCP connection without TLS: what connected above was TLS.
    let e = open(&tls.url("localhost", "sslmode=disable"))
        .err()
        .expect("the TLS cluster took a plaintext connection");
    assert!(e.contains("no encryption"), "{e}");
}

/// SCRAM over TLS is bound to the connection (`channel_binding=require` fails without the
/// certificate's hash), in the key-value form.
#[test]
fn a_password_login_is_bound_to_the_tls_connection() {
    let tls = cluster::cluster();
    let ledger = open(&format!(
        "host=localhost port={} user={} password={} dbname={} sslmode=verify-full \
         sslrootcert='{}' channel_binding=require",
        tls.port(),
        cluster::ROLE,
        cluster::PASSWORD,
        tls.database(),
        ca()
    ))
    .unwrap();
    assert!(encrypted(&ledger));
    claims(&ledger);
}

/// The certificate's hash for channel binding follows its signature's algorithm.
#[test]
fn the_channel_binding_hash_follows_the_signature_algorithm() {
    use sha2::Digest as _;
    for (algorithm, length) in [
        (&rcgen::PKCS_ECDSA_P256_SHA256, Some(32)),
        (&rcgen::PKCS_ECDSA_P384_SHA384, Some(48)),
        (&rcgen::PKCS_ED25519, None),
    ] {
        let key = rcgen::KeyPair::generate_for(algorithm).unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        let hash = super::handshake::end_point(&der);
        assert_eq!(hash.as_ref().map(Vec::len), length, "{algorithm:?}");
        if length == Some(32) {
            assert_eq!(hash.unwrap(), sha2::Sha256::digest(&der).to_vec());
        }
    }
    assert_eq!(
        super::handshake::end_point(b"\x30\x05not a certificate"),
        None
    );
}
