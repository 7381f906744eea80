//! A throwaway cluster that also listens on 127.0.0.1 with TLS, for the PostgreSQL
//! ledger's TLS tests (`ledger/pg/tls/tests.rs`), started once per test binary run.
//!
//! Takes: PostgreSQL's programs, as the plain cluster. Returns: the cluster's TCP port, the
//! file of the CA its certificate chains to (a CA made for this run), another CA's file,
//! and a role that logs in with a password (SCRAM). Must never: accept a TCP connection
//! without TLS (its `pg_hba.conf` has `hostssl` lines only, so a test that connects is
//! encrypted), or name `127.0.0.1` in its certificate (which is for `localhost` alone, so
//! the same server under the other name is a host name the certificate does not hold).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use super::{Cluster, root, run};

/// The role that logs in with a password, over TLS only.
pub(crate) const ROLE: &str = "ledger_scram";
pub(crate) const PASSWORD: &str = "scram-over-tls-1";

/// The running TLS cluster.
pub(crate) struct TlsCluster {
    cluster: Cluster,
    /// The CA the server's certificate chains to.
    pub(crate) ca: PathBuf,
    /// A CA the server's certificate has nothing to do with.
    pub(crate) other_ca: PathBuf,
}

static TLS: OnceLock<TlsCluster> = OnceLock::new();

/// The TLS cluster of this test binary, started on first use.
pub(crate) fn cluster() -> &'static TlsCluster {
    TLS.get_or_init(start)
}

impl TlsCluster {
    /// A new, empty database (owned by the superuser), and its name.
    pub(crate) fn database(&self) -> String {
        let url = self.cluster.database();
        url.rsplit('/').next().unwrap_or_default().to_string()
    }

    /// The TCP port where it listens on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.cluster.port
    }

    /// A URL of a new database as the superuser at `host` (`localhost` or `127.0.0.1`),
    /// with the `parameters` (`sslmode=…&…`).
    pub(crate) fn url(&self, host: &str, parameters: &str) -> String {
        format!(
            "postgres://postgres@{host}:{}/{}?{parameters}",
            self.port(),
            self.database()
        )
    }
}

/// A port no one listens on now: the kernel's pick for a listener closed at once (another
/// process may take it before the server does; the start then fails, saying so).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

/// A CA of its own named `name`: its parameters, key and certificate (PEM).
fn ca(name: &str) -> (CertificateParams, KeyPair, String) {
    let key = KeyPair::generate().expect("a CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.distinguished_name.push(DnType::CommonName, name);
    let pem = params.self_signed(&key).expect("a CA certificate").pem();
    (params, key, pem)
}

/// Writes `text` to `path`, owned by the server's user when this process is root, readable
/// by it alone (the server refuses a key others can read).
fn write_owned(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    if root() {
        let mut chown = Command::new("chown");
        chown.arg("postgres:").arg(path);
        run(chown, "chown a TLS file to postgres");
    }
}

fn start() -> TlsCluster {
    let (ca_params, ca_key, ca_pem) = ca("connectorgen test CA");
    let (_, _, other_pem) = ca("connectorgen other CA");
    let key = KeyPair::generate().expect("a server key");
    let mut params =
        CertificateParams::new(vec!["localhost".to_string()]).expect("server parameters");
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let certificate = params
        .signed_by(&key, &Issuer::new(ca_params, ca_key))
        .expect("a server certificate");
    let (mut ca_file, mut other_file) = (PathBuf::new(), PathBuf::new());
    let cluster = Cluster::start(free_port(), |dir| {
        (ca_file, other_file) = (dir.join("ca.pem"), dir.join("other-ca.pem"));
        std::fs::write(&ca_file, &ca_pem).unwrap();
        std::fs::write(&other_file, &other_pem).unwrap();
        write_owned(&dir.join("server.crt"), &certificate.pem());
        write_owned(&dir.join("server.key"), &key.serialize_pem());
        // Over TCP only with TLS: the role with a password by SCRAM, every other as the
        // plain cluster's, trusted.
        write_owned(
            &dir.join("data/pg_hba.conf"),
            &format!(
                "local all all trust\n\
                 hostssl all {ROLE} 127.0.0.1/32 scram-sha-256\n\
                 hostssl all all 127.0.0.1/32 trust\n"
            ),
        );
        vec![
            "listen_addresses=127.0.0.1".to_string(),
            "ssl=on".to_string(),
            format!("ssl_cert_file={}", dir.join("server.crt").display()),
            format!("ssl_key_file={}", dir.join("server.key").display()),
        ]
    });
    let mut psql = Command::new(cluster.bin.join("psql"));
    psql.arg("-h")
        .arg(&cluster.dir)
        .arg("-p")
        .arg(cluster.port.to_string())
        .args([
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
        ])
        .arg(format!(
            "CREATE ROLE {ROLE} LOGIN SUPERUSER PASSWORD '{PASSWORD}'"
        ));
    run(psql, "create the SCRAM role");
    TlsCluster {
        cluster,
        ca: ca_file,
        other_ca: other_file,
    }
}
