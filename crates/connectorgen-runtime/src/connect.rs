//! Each person's own provider credential (`auth.perPerson`): loaded for a call, kept
//! encrypted in the ledger's database, connected through a page on `serve`'s own
//! origin, and forgotten when the person disconnects.
//!
//! Takes: the manifest's way of connecting (`PerPerson`), the key ring (`vault::Keys`),
//! the ledger, the sealer (links, cookies and form values name the person they are for),
//! serve's public origin, and the redactor. Returns: a person's `Credential` for a call
//! (or that they have not connected), the link to their connect page, and the steps of
//! the pages (`serve/connect.rs` serves them over HTTP).
//! Must never: keep a credential in clear anywhere (the database holds it sealed, with
//! the connector and the person as associated data), keep an API key the check read did
//! not answer, take a credential from a tool argument or the model's text, or let one
//! person's link, cookie or form set another person's credential. A credential loaded
//! is registered with the redactor before it is used.

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::credential::Credential;
use crate::ledger::{self, LedgerError};
use crate::provider_oauth::{OAuthError, ProviderOAuth, Registration, Tokens};
use crate::redact::Redactor;
use crate::seal::{Purpose, Refusal, Sealer};
use crate::vault::{self, Keys, Purpose as Sealing};
use connectorgen_core::model::PerPerson;
use connectorgen_core::render::mcp::mapping::Credential as Scheme;

/// How long a connect link, and the browser cookie it sets, stay good: time to open the
/// page, find the key at the provider and paste it.
pub(crate) const LINK_SECONDS: u64 = 900;

/// The path every connect page is under (`/connect/<link>`), and the OAuth callback's.
pub(crate) const CONNECT_PATH: &str = "/connect/";
pub(crate) const CALLBACK_PATH: &str = "/connect/callback";

/// The cookie a connect page sets: the person the browser acts for.
pub(crate) const COOKIE: &str = "connectorgen_person";

/// What is kept, sealed, for one person.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Kept {
    /// The key the person entered, checked.
    ApiKey { value: String },
    /// The provider's tokens (`connect: oauth`).
    OAuth(Tokens),
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kept::ApiKey { .. } => f.write_str("Kept::ApiKey([redacted])"),
            Kept::OAuth(tokens) => write!(f, "Kept::OAuth({tokens:?})"),
        }
    }
}

impl Kept {
    /// The value sent as the connection's credential.
    fn value(&self) -> &str {
        match self {
            Kept::ApiKey { value } => value,
            Kept::OAuth(tokens) => &tokens.access_token,
        }
    }

    /// Every secret it holds, for the redactor.
    fn secrets(&self) -> Vec<&str> {
        match self {
            Kept::ApiKey { value } => vec![value],
            Kept::OAuth(tokens) => std::iter::once(tokens.access_token.as_str())
                .chain(tokens.refresh_token.as_deref())
                .collect(),
        }
    }
}

/// What a sign-in's callback came to.
#[derive(Debug)]
pub(crate) enum Finished {
    /// This person's tokens are kept.
    Connected(String),
    /// No sign-in was started with this state, it was used already, or it expired.
    Unknown,
    /// The browser is not the one of the person who started it.
    OtherPerson,
    /// The provider said no (the person declined, a code refused): why.
    Refused(String),
}

/// How long before its expiry an access token is refreshed: the time a call may take to
/// reach the provider.
const REFRESH_MARGIN: u64 = 60;

/// Each person's credentials, for one connector.
pub(crate) struct People {
    pub way: PerPerson,
    /// The connector's service name: bound into every sealed row with the person.
    connector: String,
    keys: Keys,
    ledger: ledger::Handle,
    sealer: Sealer,
    /// serve's public origin (`https://connector.example`): links and the OAuth
    /// redirect URI are on it. Known once the listener is bound (`set_origin`).
    origin: std::sync::OnceLock<String>,
    redactor: Redactor,
    /// How the connection's credential is placed on a request (the tools' scheme).
    scheme: Scheme,
    /// `connect: oauth`: serve's registration at the provider, its redirect URI filled in
    /// when the origin is known (`set_origin`), and the client built from it.
    registration: Option<Registration>,
    oauth: std::sync::OnceLock<ProviderOAuth>,
    /// One refresh at a time in this process: a provider that rotates refresh tokens
    /// refuses the second of two refreshes of one grant (and may end the grant).
    refreshing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "People({}, {:?})", self.connector, self.origin.get())
    }
}

/// Why a person's credential could not be used.
#[derive(Debug)]
pub(crate) enum Unusable {
    /// The ledger's database failed.
    Store(LedgerError),
    /// A row that does not open with the key ring: a wrong key or a damaged row. Never
    /// a reason to send without a credential.
    Sealed(String),
    /// An expired access token that the provider could not renew just now (it did not
    /// answer, or refuses serve's own registration): the grant is kept.
    Renewal(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Store(e) => write!(f, "{e}"),
            Unusable::Sealed(why) => write!(f, "a kept credential does not open: {why}"),
            Unusable::Renewal(why) => write!(f, "the person's sign-in could not be renewed: {why}"),
        }
    }
}

impl People {
    /// The people of a connector served by `stage` (its ledger, sealer and redactor).
    pub(crate) fn new(
        way: PerPerson,
        connector: &str,
        keys: Keys,
        registration: Option<Registration>,
        scheme: Scheme,
        stage: &crate::call::Stage,
    ) -> People {
        People {
            way,
            connector: connector.to_string(),
            keys,
            ledger: stage.ledger.clone(),
            sealer: stage.sealer.clone(),
            origin: std::sync::OnceLock::new(),
            redactor: stage.redactor.clone(),
            scheme,
            registration,
            oauth: std::sync::OnceLock::new(),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    /// The connector's service name, as the pages show it.
    pub(crate) fn connector(&self) -> &str {
        &self.connector
    }

    /// The link that opens `principal`'s connect page.
    pub(crate) fn link(&self, principal: &str) -> String {
        let token = self
            .sealer
            .person_token(Purpose::Connect, principal, LINK_SECONDS);
        format!("{}{CONNECT_PATH}{token}", self.origin())
    }

    /// Sets serve's public origin, once: the resource's (`--resource`), known when the
    /// listener is bound.
    pub(crate) fn set_origin(&self, origin: &str) -> Result<(), String> {
        let origin = origin.trim_end_matches('/').to_string();
        if let Some(registration) = &self.registration {
            let mut registration = registration.clone();
            registration.redirect_uri = format!("{origin}{CALLBACK_PATH}");
            let client = ProviderOAuth::new(registration).map_err(|e| e.to_string())?;
            let _ = self.oauth.set(client);
        }
        let _ = self.origin.set(origin);
        Ok(())
    }

    /// serve's client at the provider's authorization server (`connect: oauth`).
    pub(crate) fn oauth(&self) -> Option<&ProviderOAuth> {
        self.oauth.get()
    }

    /// Starts `principal`'s sign-in at the provider: the authorization URL, its state and
    /// PKCE verifier kept (sealed, single use, expiring with the link) for the callback,
    /// which may reach another instance sharing the database.
    pub(crate) async fn start_oauth(&self, principal: &str) -> Result<String, Unusable> {
        let oauth = self
            .oauth()
            .ok_or_else(|| Unusable::Renewal("the provider's sign-in is not set up".into()))?;
        let state = crate::random_token().map_err(Unusable::Renewal)?;
        let started = oauth
            .start(&state)
            .map_err(|e| Unusable::Renewal(e.to_string()))?;
        let sealed = vault::seal(
            &self.keys,
            Sealing::Pending,
            &self.connector,
            principal,
            started.verifier.as_bytes(),
        )
        .map_err(|e| Unusable::Sealed(e.to_string()))?;
        let now = self.sealer.clock().now();
        self.ledger
            .put_pending(
                state,
                principal.to_string(),
                sealed,
                now + LINK_SECONDS,
                now,
            )
            .await
            .map_err(Unusable::Store)?;
        Ok(started.url)
    }

    /// The callback of a sign-in for `state`, in a browser whose cookie names `browser`:
    /// the pending row is taken (single use: a state replayed or expired finds nothing),
    /// then the browser must be the person's who started it, then the code is exchanged
    /// and the tokens kept.
    pub(crate) async fn finish_oauth(
        &self,
        state: &str,
        code: Result<String, OAuthError>,
        browser: Option<&str>,
    ) -> Result<Finished, Unusable> {
        let Some(oauth) = self.oauth() else {
            return Ok(Finished::Unknown);
        };
        let now = self.sealer.clock().now();
        let Some((principal, sealed)) = self
            .ledger
            .take_pending(state.to_string(), now)
            .await
            .map_err(Unusable::Store)?
        else {
            return Ok(Finished::Unknown);
        };
        if browser != Some(principal.as_str()) {
            return Ok(Finished::OtherPerson);
        }
        let code = match code {
            Ok(code) => code,
            Err(e) => return Ok(Finished::Refused(e.to_string())),
        };
        let opened = vault::open(
            &self.keys,
            Sealing::Pending,
            &self.connector,
            &principal,
            &sealed,
        )
        .map_err(|e| Unusable::Sealed(e.to_string()))?;
        let verifier = String::from_utf8_lossy(&opened.plaintext).into_owned();
        match oauth.exchange(&code, &verifier, now).await {
            Ok(tokens) => {
                self.keep(&principal, &Kept::OAuth(tokens)).await?;
                Ok(Finished::Connected(principal))
            }
            Err(e) => Ok(Finished::Refused(e.to_string())),
        }
    }

    fn origin(&self) -> &str {
        self.origin.get().map_or("", String::as_str)
    }

    /// The person a link's token is for.
    pub(crate) fn person_of_link(&self, token: &str) -> Result<String, Refusal> {
        self.sealer.person_of(Purpose::Connect, token)
    }

    /// The cookie value for `principal`'s browser, and the person a cookie is for.
    pub(crate) fn cookie_for(&self, principal: &str) -> String {
        self.sealer
            .person_token(Purpose::Browser, principal, LINK_SECONDS)
    }

    pub(crate) fn person_of_cookie(&self, value: &str) -> Result<String, Refusal> {
        self.sealer.person_of(Purpose::Browser, value)
    }

    /// A form's anti-forgery value for `principal`, and the person one is for.
    pub(crate) fn form_value(&self, principal: &str) -> String {
        self.sealer
            .person_token(Purpose::Form, principal, LINK_SECONDS)
    }

    pub(crate) fn person_of_form(&self, value: &str) -> Result<String, Refusal> {
        self.sealer.person_of(Purpose::Form, value)
    }

    /// Whether cookies must say `Secure`: the origin is https (a loopback test origin
    /// is plain http, where a `Secure` cookie would never come back).
    pub(crate) fn secure(&self) -> bool {
        self.origin().starts_with("https://")
    }

    /// What is kept for `principal`, opened; a row sealed under an older key is sealed
    /// again under the current one (rotation, docs/serve.md).
    pub(crate) async fn kept(&self, principal: &str) -> Result<Option<Kept>, Unusable> {
        let Some(sealed) = self
            .ledger
            .get_credential(principal.to_string())
            .await
            .map_err(Unusable::Store)?
        else {
            return Ok(None);
        };
        let opened = vault::open(
            &self.keys,
            Sealing::Credential,
            &self.connector,
            principal,
            &sealed,
        )
        .map_err(|e| Unusable::Sealed(e.to_string()))?;
        let kept: Kept = serde_json::from_slice(&opened.plaintext)
            .map_err(|_| Unusable::Sealed("the row is not a kept credential".into()))?;
        if opened.stale
            && let Ok(Some(new)) = vault::reseal(
                &self.keys,
                Sealing::Credential,
                &self.connector,
                principal,
                &opened,
            )
        {
            // Only over the row read: a credential replaced meanwhile stays.
            let now = self.sealer.clock().now();
            self.ledger
                .reseal_credential(principal.to_string(), sealed, new, now)
                .await
                .map_err(Unusable::Store)?;
        }
        Ok(Some(kept))
    }

    /// The credential `principal`'s calls go out with, registered with the redactor;
    /// `None`: they have not connected (or their grant ended). An OAuth access token
    /// about to expire is refreshed first.
    pub(crate) async fn credential(&self, principal: &str) -> Result<Option<Credential>, Unusable> {
        let Some(mut kept) = self.kept(principal).await? else {
            return Ok(None);
        };
        let now = self.sealer.clock().now();
        if let Kept::OAuth(tokens) = &kept
            && tokens.due(now, REFRESH_MARGIN)
        {
            match self.refresh(principal, tokens, false).await? {
                Some(fresh) => kept = Kept::OAuth(fresh),
                None => return Ok(None),
            }
        }
        self.credential_of(&kept).map(Some)
    }

    /// `principal`'s tokens refreshed and kept, `seen` being the ones the caller read
    /// (`refused`: the provider refused its access token); `None` when the provider
    /// refused the grant (the row is forgotten: the person connects again).
    async fn refresh(
        &self,
        principal: &str,
        seen: &Tokens,
        refused: bool,
    ) -> Result<Option<Tokens>, Unusable> {
        let Some(oauth) = self.oauth() else {
            return Ok(None);
        };
        let _turn = self.refreshing.lock().await;
        let now = self.sealer.clock().now();
        // Another call (or instance) may have refreshed while this one waited: refresh
        // from the tokens kept now, never from the copy read before the wait. A provider
        // that rotates refresh tokens ends the whole grant when a rotated one comes back.
        // Disconnected meanwhile: nothing to renew, and nothing to keep again.
        let Some(Kept::OAuth(current)) = self.kept(principal).await? else {
            return Ok(None);
        };
        if current.access_token != seen.access_token && !current.due(now, REFRESH_MARGIN) {
            return Ok(Some(current));
        }
        match oauth.refresh(&current, now).await {
            Ok(fresh) => {
                self.keep(principal, &Kept::OAuth(fresh.clone())).await?;
                self.redactor
                    .line("connect", serde_json::json!({"outcome": "refreshed"}));
                Ok(Some(fresh))
            }
            Err(OAuthError::Refused { error, .. }) => {
                self.forget(principal).await?;
                self.redactor.line(
                    "connect",
                    serde_json::json!({"outcome": "grant-ended", "error": error}),
                );
                Ok(None)
            }
            Err(other) => {
                let expired = current.expires_at.is_some_and(|at| now >= at);
                if expired || refused {
                    Err(Unusable::Renewal(other.to_string()))
                } else {
                    Ok(Some(current))
                }
            }
        }
    }

    /// After the provider answered `401` to a call made with `principal`'s tokens: one
    /// refresh. `true`: renewed (the call can be made again); `false`: the grant ended,
    /// and the person connects again.
    pub(crate) async fn unauthorized(&self, principal: &str) -> Result<bool, Unusable> {
        let Some(Kept::OAuth(tokens)) = self.kept(principal).await? else {
            return Ok(false);
        };
        Ok(self.refresh(principal, &tokens, true).await?.is_some())
    }

    /// The credential a kept value makes, its secrets registered with the redactor first.
    pub(crate) fn credential_of(&self, kept: &Kept) -> Result<Credential, Unusable> {
        self.redactor
            .add(kept.secrets())
            .map_err(Unusable::Sealed)?;
        let credential = placed(&self.scheme, kept.value())
            .ok_or_else(|| Unusable::Sealed("the connection takes no credential".into()))?;
        self.redactor
            .add(credential.secrets())
            .map_err(Unusable::Sealed)?;
        Ok(credential)
    }

    /// A credential from a value that is not kept yet (an API key being checked).
    pub(crate) fn candidate(&self, value: &str) -> Option<Credential> {
        placed(&self.scheme, value)
    }

    /// Keeps `kept` for `principal`, sealed under the current key.
    pub(crate) async fn keep(&self, principal: &str, kept: &Kept) -> Result<(), Unusable> {
        let json =
            Zeroizing::new(serde_json::to_vec(kept).map_err(|e| Unusable::Sealed(e.to_string()))?);
        let sealed = vault::seal(
            &self.keys,
            Sealing::Credential,
            &self.connector,
            principal,
            &json,
        )
        .map_err(|e| Unusable::Sealed(e.to_string()))?;
        let now = self.sealer.clock().now();
        self.ledger
            .put_credential(principal.to_string(), sealed, now)
            .await
            .map_err(Unusable::Store)
    }

    /// Forgets `principal`'s credential, its OAuth grant revoked first where the provider
    /// offers revocation (best effort: the row goes either way); whether there was one.
    pub(crate) async fn disconnect(&self, principal: &str) -> Result<bool, Unusable> {
        if let (Some(oauth), Ok(Some(Kept::OAuth(tokens)))) =
            (self.oauth(), self.kept(principal).await)
            && let Err(e) = oauth.revoke(&tokens).await
        {
            self.redactor.line(
                "connect",
                serde_json::json!({"outcome": "not-revoked", "problem": e.to_string()}),
            );
        }
        self.forget(principal).await
    }

    /// Forgets `principal`'s credential; whether there was one.
    async fn forget(&self, principal: &str) -> Result<bool, Unusable> {
        self.ledger
            .delete_credential(principal.to_string())
            .await
            .map_err(Unusable::Store)
    }
}

/// The credential `scheme` places, with `value` as the connection's one value.
fn placed(scheme: &Scheme, value: &str) -> Option<Credential> {
    match scheme {
        Scheme::Parts { parts } if parts.len() == 1 => {
            Credential::from_parts(parts, &|_| Some(value.to_string()))
        }
        other => Credential::new(other, value),
    }
}
