//! The API-key connect page in a real browser (issue 46): headless Chromium from the
//! distribution's packages (`/usr/bin/chromium`, or `CONNECTORGEN_CHROMIUM`), driven by
//! tests/browser/connect.mjs through playwright-core (pinned by
//! tests/browser/package-lock.json, installed by `support::node`), against the real
//! binary, the reference provider (a key per person) and the real authorization server,
//! as people.rs starts them.
//!
//! The person's browser runs with JavaScript off: the page must work as plain HTML. It
//! opens the link a call answered with, a forger's edits of the form are refused (the
//! anti-forgery field removed, another person's value put in), a key the provider refuses
//! is said so and not kept, the right key is kept and the next call goes out with it. The
//! key is looked for in every page, URL, redirect and response body the browser saw, in
//! serve's log and in the state folder. Screenshots of the page are kept under
//! `target/test-artifacts/` (the test prints where) for a person to look at.
//!
//! Must never: skip when Chromium is missing (it fails, saying how to install it), let
//! Playwright download a browser, or wait without a deadline. What plain HTTP already
//! shows (a form without the cookie, one person's form posted on another's link,
//! disconnecting, two instances) stays in people.rs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use super::mcp::{Person, is_error, text_of};
use super::people::{ALICE_KEY, BOB_KEY, SCOPES, call, link_of, started, walk, with_key};
use crate::support::authz::{ALICE, BOB};
use crate::support::node::{self, NEEDS_NODE};

/// What the test says when Chromium is missing.
const NEEDS_CHROMIUM: &str = "the connect page's browser test drives the distribution's \
     Chromium and is never skipped: install it with `apt-get install -y chromium` (Debian; \
     .ci/run does), or name another Chromium binary in CONNECTORGEN_CHROMIUM";

/// A key the provider does not know.
const WRONG_KEY: &str = "vg_not_a_real_key_7777";

/// The bound on one command of the script (it has its own, shorter, per step): a hang
/// becomes a failure with the script's stderr.
const STEP: Duration = Duration::from_secs(60);

/// The bound on the whole script, passed to it: it ends itself after that.
const SCRIPT: Duration = Duration::from_secs(170);

/// The Chromium binary the script launches.
fn chromium() -> PathBuf {
    let path = std::env::var_os("CONNECTORGEN_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        path.is_file(),
        "{NEEDS_CHROMIUM}: {} not found",
        path.display()
    );
    path
}

/// Where the screenshots are kept: `test-artifacts/` in the target folder (beside the
/// `tmp/` cargo gives integration tests), which `cargo clean` clears and git ignores.
fn artifacts() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// connect.mjs running: a browser the test sends commands to.
struct Browser {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// The script's folder (its copy, the link to the packages, its stderr).
    work: tempfile::TempDir,
    /// Every line the script printed, to look for the keys in.
    said: Vec<String>,
}

impl Browser {
    async fn start(chromium: &Path) -> Browser {
        // A copy of the script beside a link to the installed packages: node resolves
        // playwright-core from the script's real folder, and the repository has no
        // node_modules.
        let modules = node::installed("tests/browser");
        let work = tempfile::Builder::new()
            .prefix("connectorgen-browser-")
            .tempdir()
            .expect("a folder for the script");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/connect.mjs");
        std::fs::copy(&script, work.path().join("connect.mjs"))
            .expect("copy tests/browser/connect.mjs");
        std::os::unix::fs::symlink(&modules, work.path().join("node_modules"))
            .expect("link node_modules");
        let stderr = std::fs::File::create(work.path().join("stderr")).expect("a stderr file");
        let mut child = tokio::process::Command::new("node")
            .arg(work.path().join("connect.mjs"))
            .env("CONNECTORGEN_CHROMIUM", chromium)
            .env("SCRIPT_DEADLINE_MS", SCRIPT.as_millis().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{NEEDS_NODE} ({e})"));
        let stdin = child.stdin.take().expect("the script's stdin");
        let lines = BufReader::new(child.stdout.take().expect("the script's stdout")).lines();
        let mut browser = Browser {
            child,
            stdin,
            lines,
            work,
            said: Vec::new(),
        };
        let ready = browser.next().await;
        assert_eq!(ready["ready"], true, "{ready}\n{}", browser.stderr());
        browser
    }

    /// The script's next line.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(STEP, self.lines.next_line()).await;
        let line = match line {
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) => panic!(
                "connect.mjs ended ({:?}): {}",
                self.child.try_wait(),
                self.stderr()
            ),
            Ok(Err(e)) => panic!("reading connect.mjs: {e}"),
            Err(elapsed) => panic!(
                "connect.mjs said nothing in {STEP:?} ({elapsed}): {}",
                self.stderr()
            ),
        };
        self.said.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Runs `command` and returns what the browser saw; a command the script could not
    /// carry out fails the test.
    async fn run(&mut self, command: Value) -> Value {
        let mut line = command.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to connect.mjs");
        let seen = self.next().await;
        assert!(seen.get("error").is_none(), "{seen:#}\n{}", self.stderr());
        seen
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.work.path().join("stderr")).unwrap_or_default()
    }
}

/// What every page the browser showed must hold: its own page, loading nothing else, no
/// script and a policy that forbids one, no console complaint (a CSP violation is one),
/// and no key anywhere.
fn plain_page(seen: &Value, origin: &str) {
    assert_eq!(seen["script"], false, "a <script> on the page: {seen:#}");
    let csp = seen["csp"].as_str().unwrap_or_default();
    assert!(
        csp.contains("default-src 'none'") && !csp.contains("script-src"),
        "the policy must forbid every script: {csp:?}"
    );
    assert_eq!(
        seen["elsewhere"],
        json!([]),
        "the page loaded something from elsewhere: {seen:#}"
    );
    for request in seen["requests"].as_array().expect("the requests") {
        assert!(
            request["url"]
                .as_str()
                .is_some_and(|url| url.starts_with(origin)),
            "{request}"
        );
        assert!(request.get("failed").is_none(), "{request}");
    }
    assert_eq!(seen["problems"], json!([]), "{seen:#}");
    for (what, shown) in seen["keyShown"].as_object().expect("keyShown") {
        assert_eq!(shown, &json!(false), "the key is in the {what}: {seen:#}");
    }
}

/// A person opens the link their call answered with in a real browser with JavaScript
/// off, and the page works and reads as plain HTML: a forger's edits of its form (the
/// anti-forgery value removed, another person's put in) are refused with nothing sent; a
/// key the provider refuses is said so and not kept (the next call is still a link); the
/// right key, entered on the page that said so, is checked and kept, and the next call
/// goes out with it. The key is in no page, URL, redirect, response, log line or file of
/// the state folder.
#[tokio::test]
async fn a_person_connects_their_key_in_a_real_browser_and_the_next_call_goes_out_with_it() {
    let chromium = chromium();
    let (p, auth, t, l, _dir) = started().await;
    let url = l.url.clone();
    let origin = url.trim_end_matches("/mcp").to_string();
    let alice = l
        .session(
            Person::without_elicitation(),
            Some(auth.token(ALICE, &url, SCOPES)),
        )
        .await;
    let bob = alice
        .another_with(
            Person::without_elicitation(),
            Some(auth.token(BOB, &url, SCOPES)),
        )
        .await;
    let first = alice.call("listVideos", json!({})).await;
    assert!(is_error(&first), "{}", text_of(&first));
    let link = link_of(&first);
    assert!(link.starts_with(&format!("{origin}/connect/")), "{link}");
    let bob_link = link_of(&call(&bob, "listVideos").await);
    assert!(p.received().is_empty(), "{:#?}", p.received());

    let artifacts = artifacts();
    let shot = |name: &str| artifacts.join(name).display().to_string();
    let mut browser = Browser::start(&chromium).await;

    // The page as the person first sees it, at a desktop width and a phone's.
    let opened = browser
        .run(json!({
            "do": "open", "url": link,
            "screenshot": shot("connect-page.png"), "mobile": shot("connect-page-mobile.png"),
        }))
        .await;
    assert_eq!(opened["status"], 200, "{opened:#}");
    assert_eq!(opened["url"], link.as_str(), "{opened:#}");
    assert!(
        opened["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Connect your account")),
        "{opened:#}"
    );
    assert_eq!(opened["keyField"], true, "{opened:#}");
    assert_eq!(opened["formValue"], true, "{opened:#}");
    assert_eq!(
        opened["requests"].as_array().map(Vec::len),
        Some(1),
        "{opened:#}"
    );
    assert_eq!(
        opened["cookies"],
        json!([{"name": "connectorgen_person", "path": "/connect", "httpOnly": true, "sameSite": "Lax"}]),
        "{opened:#}"
    );
    plain_page(&opened, &origin);

    // The anti-forgery field taken out of the form: refused, nothing sent.
    let forged = browser
        .run(json!({"do": "submit", "key": ALICE_KEY, "tamper": "remove-form"}))
        .await;
    let refused = "This form did not come from your own connect page";
    assert_eq!(forged["status"], 403, "{forged:#}");
    assert!(
        forged["text"].as_str().is_some_and(|t| t.contains(refused)),
        "{forged:#}"
    );
    plain_page(&forged, &origin);
    assert!(p.received().is_empty(), "{:#?}", p.received());

    // Bob's form value in Alice's browser, on her link: refused, nothing sent.
    browser.run(json!({"do": "open", "url": link})).await;
    let swapped = browser
        .run(json!({"do": "submit", "key": ALICE_KEY, "tamper": {"formFrom": bob_link}}))
        .await;
    assert_eq!(swapped["status"], 403, "{swapped:#}");
    assert!(
        swapped["text"]
            .as_str()
            .is_some_and(|t| t.contains(refused)),
        "{swapped:#}"
    );
    plain_page(&swapped, &origin);
    assert!(p.received().is_empty(), "{:#?}", p.received());

    // A key the provider refuses: checked once with the free read, said so, not kept.
    browser.run(json!({"do": "open", "url": link})).await;
    let wrong = browser
        .run(json!({
            "do": "submit", "key": WRONG_KEY, "screenshot": shot("connect-page-wrong-key.png"),
        }))
        .await;
    assert_eq!(wrong["status"], 200, "{wrong:#}");
    assert!(
        wrong["alert"]
            .as_str()
            .is_some_and(|t| t.contains("The provider did not accept this key. Nothing was kept")),
        "said apart from the text: {wrong:#}"
    );
    assert_eq!(wrong["keyField"], true, "the form again: {wrong:#}");
    plain_page(&wrong, &origin);
    assert_eq!(with_key(&p, WRONG_KEY), 1, "{:#?}", p.received());
    assert_eq!(p.received().len(), 1, "{:#?}", p.received());
    link_of(&alice.call("listVideos", json!({})).await);
    assert_eq!(p.received().len(), 1, "{:#?}", p.received());

    // The right key, on the form the refusal showed: checked, kept, and the next call
    // goes out with it.
    let connected = browser
        .run(json!({
            "do": "submit", "key": ALICE_KEY, "screenshot": shot("connect-page-connected.png"),
        }))
        .await;
    assert_eq!(connected["status"], 200, "{connected:#}");
    assert!(
        connected["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Connected")),
        "{connected:#}"
    );
    assert_eq!(
        connected["url"],
        link.as_str(),
        "no redirect: {connected:#}"
    );
    plain_page(&connected, &origin);
    assert_eq!(
        with_key(&p, ALICE_KEY),
        1,
        "the check read: {:#?}",
        p.received()
    );
    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(with_key(&p, ALICE_KEY), 2, "{:#?}", p.received());
    // Bob's account is his own: still a link, nothing sent for him.
    link_of(&call(&bob, "listVideos").await);
    assert_eq!(with_key(&p, BOB_KEY), 0, "{:#?}", p.received());
    assert_eq!(p.received().len(), 3, "{:#?}", p.received());

    // The page again, as the person comes back to it: connected, the key not shown.
    let again = browser.run(json!({"do": "open", "url": link})).await;
    assert!(
        again["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Your account is connected")),
        "{again:#}"
    );
    plain_page(&again, &origin);

    // The key in nothing the browser was told, nothing serve logged, no file it keeps.
    let log = alice.log_with(r#""outcome":"connected""#).await.join("\n");
    let refusals = log.matches(r#""outcome":"refused""#).count();
    assert_eq!(refusals, 2, "the two forged forms: {log}");
    let mut stored = Vec::new();
    for file in walk(t.state()) {
        stored.extend(std::fs::read(file).unwrap_or_default());
    }
    let stored = String::from_utf8_lossy(&stored);
    let said = browser.said.join("\n");
    for key in [ALICE_KEY, WRONG_KEY] {
        assert!(!said.contains(key), "{key} in what the browser saw: {said}");
        assert!(!log.contains(key), "{key} in the log: {log}");
        assert!(!stored.contains(key), "{key} in the state folder");
    }
    eprintln!(
        "the connect page's screenshots: {}",
        [
            "connect-page.png",
            "connect-page-mobile.png",
            "connect-page-wrong-key.png",
            "connect-page-connected.png"
        ]
        .map(shot)
        .join(", ")
    );
}
