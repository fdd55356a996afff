//! The web inbox in a real headless Chromium (Debian's `chromium` and `chromium-driver`, see
//! `.ci/install-chromium.sh`), driven over chromedriver's W3C WebDriver HTTP protocol with
//! reqwest: log in with an approver token, an agent submits an action the policy holds for a
//! person and long-polls its outcome, the pending action appears on the open page through the
//! event stream (no reload), the test clicks "Approve once", and the waiting agent is released
//! with status allowed.
//!
//! Skipped with a message when the binaries are missing, unless `AIRLOCK_REQUIRE_BROWSER=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// chromedriver, killed when dropped (it is this test's own child process).
struct Driver {
    child: Child,
    url: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One browser session.
struct Browser<'a> {
    d: &'a Driver,
    session: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Driver {
    async fn start() -> Driver {
        let port = free_port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver");
        let d = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
            http: common::client(),
            _profile: tempfile::tempdir().unwrap(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = d.http.get(format!("{}/status", d.url)).send().await
                && let Ok(v) = r.json::<Value>().await
                && v["value"]["ready"] == true
            {
                return d;
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut rb = self.http.request(method, format!("{}{path}", self.url));
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let r = rb.send().await.unwrap();
        let status = r.status();
        let v: Value = r.json().await.unwrap();
        assert!(status.is_success(), "webdriver {path}: {status} {v}");
        v["value"].clone()
    }

    async fn session(&self) -> Browser<'_> {
        let profile = self._profile.path().display().to_string();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                    "--window-size=1280,800", format!("--user-data-dir={profile}"),
                ]
            }
        }}});
        let v = self
            .cmd(reqwest::Method::POST, "/session", Some(caps))
            .await;
        Browser {
            d: self,
            session: v["sessionId"].as_str().unwrap().to_string(),
        }
    }
}

impl Browser<'_> {
    async fn post(&self, path: &str, body: Value) -> Value {
        self.d
            .cmd(
                reqwest::Method::POST,
                &format!("/session/{}{path}", self.session),
                Some(body),
            )
            .await
    }

    async fn get(&self, path: &str) -> Value {
        self.d
            .cmd(
                reqwest::Method::GET,
                &format!("/session/{}{path}", self.session),
                None,
            )
            .await
    }

    async fn goto(&self, url: &str) {
        self.post("/url", json!({"url": url})).await;
    }

    async fn url(&self) -> String {
        self.get("/url").await.as_str().unwrap().to_string()
    }

    async fn js(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    /// The element `css` selects, waiting up to `wait` for it to appear.
    async fn find(&self, css: &str, wait: Duration) -> String {
        let deadline = Instant::now() + wait;
        loop {
            let r = self
                .d
                .http
                .post(format!("{}/session/{}/element", self.d.url, self.session))
                .json(&json!({"using": "css selector", "value": css}))
                .send()
                .await
                .unwrap();
            if r.status().is_success() {
                let v: Value = r.json().await.unwrap();
                return v["value"][ELEMENT]
                    .as_str()
                    .unwrap_or_else(|| panic!("element reply without a reference: {v}"))
                    .to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no element {css} within {wait:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn text(&self, el: &str) -> String {
        self.get(&format!("/element/{el}/text"))
            .await
            .as_str()
            .unwrap()
            .to_string()
    }

    async fn type_into(&self, el: &str, text: &str) {
        self.post(&format!("/element/{el}/value"), json!({"text": text}))
            .await;
    }

    async fn click(&self, el: &str) {
        self.post(&format!("/element/{el}/click"), json!({})).await;
    }

    /// Runs `cmd` (GET when `body` is None) on the element `css` selects, finding it again
    /// if the live list replaced it in between (a stale element reference).
    async fn on_fresh(&self, css: &str, cmd: &str, body: Option<Value>) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let el = self.find(css, Duration::from_secs(10)).await;
            let url = format!("{}/session/{}/element/{el}/{cmd}", self.d.url, self.session);
            let rb = match &body {
                Some(b) => self.d.http.post(url).json(b),
                None => self.d.http.get(url),
            };
            let r = rb.send().await.unwrap();
            let ok = r.status().is_success();
            let v: Value = r.json().await.unwrap();
            if ok {
                return v["value"].clone();
            }
            assert!(
                v["value"]["error"] == "stale element reference" && Instant::now() < deadline,
                "{css} {cmd}: {v}"
            );
        }
    }

    /// Saves a PNG of the page into `$AIRLOCK_BROWSER_SCREENSHOTS/NAME.png` when that is set
    /// (for looking at the pages; the test checks layout through element rectangles).
    async fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("AIRLOCK_BROWSER_SCREENSHOTS") else {
            return;
        };
        use base64::Engine;
        let png = self.get("/screenshot").await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), bytes).unwrap();
    }

    async fn quit(self) {
        let _ = self
            .d
            .http
            .delete(format!("{}/session/{}", self.d.url, self.session))
            .send()
            .await;
    }
}

async fn wait_until<F, Fut>(what: &str, wait: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + wait;
    while !f().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn browser_present() -> bool {
    let present = Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file();
    if !present {
        assert!(
            std::env::var("AIRLOCK_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "AIRLOCK_REQUIRE_BROWSER=1 but {CHROMIUM} or {CHROMEDRIVER} is missing: run .ci/install-chromium.sh"
        );
        eprintln!(
            "SKIPPED browser test: {CHROMIUM} or {CHROMEDRIVER} is missing (run .ci/install-chromium.sh; set AIRLOCK_REQUIRE_BROWSER=1 to make this a failure)"
        );
    }
    present
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_in_the_browser_releases_the_waiting_agent() {
    if !browser_present() {
        return;
    }
    let s = common::start().await;
    let driver = Driver::start().await;
    let b = driver.session().await;
    // Close the browser and the driver whatever happens in the scenario, then report.
    let outcome = std::panic::AssertUnwindSafe(tokio::time::timeout(
        Duration::from_secs(90),
        scenario(&s, &b),
    ))
    .catch_unwind()
    .await;
    b.quit().await;
    drop(driver);
    s.stop().await;
    match outcome {
        Ok(r) => r.expect("the browser scenario took over 90 s"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

async fn scenario(s: &common::Server, b: &Browser<'_>) {
    let c = common::client();
    let rect = b.get("/window/rect").await;
    assert!(rect["width"].as_i64().unwrap() >= 1280, "{rect}");

    // Log in.
    b.goto(&s.u("/inbox/login")).await;
    let token = b.find("#token", Duration::from_secs(10)).await;
    b.type_into(&token, &s.approver).await;
    let login = b.find("#login", Duration::from_secs(5)).await;
    b.click(&login).await;
    wait_until("the inbox", Duration::from_secs(10), || async {
        b.url().await.ends_with("/inbox")
    })
    .await;
    let live = b.find("#live-state", Duration::from_secs(5)).await;
    wait_until("the event stream", Duration::from_secs(10), || async {
        b.text(&live).await == "connected"
    })
    .await;
    b.find("#no-pending", Duration::from_secs(5)).await;
    // A mark on this page: if the page reloaded, it would be gone.
    b.js("window.__airlockMark = 'same page'; return true;")
        .await;

    // An agent submits an action the policy holds for a person, and long-polls.
    let (st, out) = common::post(&c, &s.u("/v1/actions"), &s.agent, common::asking("web")).await;
    assert_eq!(
        (st, out["status"].as_str()),
        (200, Some("pending")),
        "{out}"
    );
    let id = out["id"].as_str().unwrap().to_string();
    let waiter = {
        let c = c.clone();
        let url = s.u(&format!("/v1/actions/{id}/wait?timeout=60"));
        let agent = s.agent.clone();
        tokio::spawn(async move { common::get(&c, &url, &agent).await })
    };

    // It appears on the open page through the event stream.
    b.find(&format!("#approve-once-{id}"), Duration::from_secs(15))
        .await;
    assert_eq!(
        b.js("return window.__airlockMark || null;").await,
        "same page",
        "the page reloaded instead of updating live"
    );
    let action = b
        .find(&format!("#action-{id}"), Duration::from_secs(5))
        .await;
    assert!(
        b.text(&action)
            .await
            .contains("git push --force origin main")
    );
    let card = b
        .find(&format!("#approval-{id}"), Duration::from_secs(5))
        .await;
    let card_text = b.text(&card).await;
    assert!(card_text.contains("git.force_push"), "{card_text}");
    assert!(card_text.contains("tier 3"), "{card_text}");
    assert!(card_text.contains("s left"), "countdown: {card_text}");
    // The buttons fit a 1280x800 window.
    let r = b
        .on_fresh(&format!("#approve-once-{id}"), "rect", None)
        .await;
    let right = r["x"].as_f64().unwrap() + r["width"].as_f64().unwrap();
    assert!(right <= 1280.0, "{r}");
    assert!(
        !waiter.is_finished(),
        "the agent was released before anyone answered"
    );
    b.screenshot("inbox-pending").await;

    b.on_fresh(&format!("#approve-once-{id}"), "click", Some(json!({})))
        .await;
    let (st, done) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiting agent was not released")
        .unwrap();
    assert_eq!(st, 200);
    assert_eq!(done["status"], "allowed", "{done}");
    assert!(done["receipt"].as_str().is_some(), "{done}");

    let flash = b.find("#flash", Duration::from_secs(10)).await;
    assert_eq!(b.text(&flash).await, "Approved.");
    b.screenshot("inbox-approved").await;
    b.goto(&s.u("/inbox/history")).await;
    let row = b
        .find(&format!("#history-{id}"), Duration::from_secs(10))
        .await;
    let row_text = b.text(&row).await;
    assert!(
        row_text.contains("approved") && row_text.contains("alice"),
        "{row_text}"
    );
    assert!(
        row_text.contains(done["receipt"].as_str().unwrap()),
        "{row_text}"
    );
    b.screenshot("inbox-history").await;
}
