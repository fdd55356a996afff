//! `airlock bench proxy`: what the OpenAI-compatible proxy costs. In one process it starts a
//! minimal HTTP/1.1 upstream on loopback that answers every chat completion with the same
//! canned answer (so the upstream itself is as fast as it gets and the proxy's share shows),
//! and a real gateway with the proxy over a real broker (SQLite in a temporary directory, the
//! built-in policy, inbound scanning on). It then times the same request sent to the upstream
//! directly and through the proxy: the median added latency (sequential requests, interleaved),
//! and the throughput of concurrent clients each way. For scale it also measures a bare
//! forwarder on the same stack (axum in, reqwest out, no checks): what any proxy costs on this
//! machine before it does anything, since both hops share the same cores as the upstream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use airlock_confirm::{Broker, BrokerConfig};
use airlock_gateway::auth::{Auth, Role};
use airlock_gateway::{AppState, ServeConfig};
use airlock_grants::{GrantBook, GrantConfig};
use airlock_policy::Policy;
use airlock_proxy::{Proxy, ProxyConfig};
use airlock_store::{Ledger, LedgerConfig, StoreOptions};
use anyhow::{Context, Result, bail};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::hook::Stats;

#[derive(clap::Args)]
pub struct Args {
    /// Sequential requests timed each way (after a warm-up).
    #[arg(long, default_value_t = 2000)]
    count: usize,
    /// Concurrent clients for the throughput run.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds of each throughput run.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Answers carrying one allowed tool call (`ls`), so each request is decided and recorded.
    #[arg(long)]
    tool_call: bool,
    /// The upstream's own time per answer, in milliseconds (a model takes hundreds; 0 makes the
    /// upstream a canned reply, so the proxy's own cost dominates the throughput ratio).
    #[arg(long, default_value_t = 0.0)]
    upstream_ms: f64,
    /// Turn inbound text scanning off.
    #[arg(long)]
    no_scan: bool,
    /// Earlier turns of the conversation to send with each request, in KiB (an agent sends its
    /// whole history every time: tool calls, their results, its answers); the request ends with
    /// a tool result after the last assistant turn, which is what gets scanned.
    #[arg(long, default_value_t = 0)]
    history_kb: usize,
    /// How long the proxy remembers a live agent token (`[serve] token_cache_ms`); 0 looks
    /// every request's token up in the store.
    #[arg(long, default_value_t = 1000)]
    token_cache_ms: u64,
    /// Clean inbound verdicts of the session within this many milliseconds share a receipt
    /// (`[proxy.scan] clean_window_ms`); 0 gives each request its own.
    #[arg(long, default_value_t = 20)]
    clean_window_ms: u64,
    /// Also time a second proxy with the outbound privacy filter off, alternated with the
    /// first, and print what the filter adds (`--history-kb 32` for a 32 KiB request).
    #[arg(long)]
    privacy_baseline: bool,
    #[arg(long)]
    json: bool,
}

const TEXT_ANSWER: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"bench-model","choices":[{"index":0,"message":{"role":"assistant","content":"The build finished without errors; 214 tests passed.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":52,"completion_tokens":14,"total_tokens":66},"system_fingerprint":"fp_bench"}"#;
const TOOL_ANSWER: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"bench-model","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls -la\"}"}}],"refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":52,"completion_tokens":14,"total_tokens":66},"system_fingerprint":"fp_bench"}"#;

pub fn run(args: Args) -> Result<u8> {
    if args.count == 0 || args.concurrency == 0 || args.seconds <= 0.0 {
        bail!("--count, --concurrency and --seconds must be positive");
    }
    airlock_client::init_tls();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(measure(args))
}

async fn measure(args: Args) -> Result<u8> {
    let answer = if args.tool_call {
        TOOL_ANSWER
    } else {
        TEXT_ANSWER
    };
    let upstream = start_upstream(
        answer,
        Duration::from_secs_f64(args.upstream_ms.max(0.0) / 1000.0),
    )
    .await?;
    let dir = tempfile_dir()?;
    let (proxy_url, agent, broker) = start_proxy(
        &dir,
        &upstream,
        !args.no_scan,
        Duration::from_millis(args.token_cache_ms),
        Duration::from_millis(args.clean_window_ms),
        true,
    )
    .await?;
    let baseline = if args.privacy_baseline {
        let dir = dir.join("no-privacy");
        std::fs::create_dir_all(&dir)?;
        let (url, agent, broker) = start_proxy(
            &dir,
            &upstream,
            !args.no_scan,
            Duration::from_millis(args.token_cache_ms),
            Duration::from_millis(args.clean_window_ms),
            false,
        )
        .await?;
        let t = Target {
            url: format!("{url}/v1/chat/completions"),
            token: agent,
        };
        Some((t, broker))
    } else {
        None
    };
    let forwarder_url = start_forwarder(&upstream).await?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency * 2)
        .build()
        .context("building the HTTP client")?;
    let body = serde_json::to_vec(&json!({
        "model": "bench-model",
        "messages": conversation(args.history_kb * 1024),
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}],
        "temperature": 0.2
    }))?;
    let direct = Target {
        url: format!("{upstream}/chat/completions"),
        token: "sk-direct".into(),
    };
    let via = Target {
        url: format!("{proxy_url}/v1/chat/completions"),
        token: agent,
    };
    let bare = Target {
        url: format!("{forwarder_url}/v1/chat/completions"),
        token: "sk-forwarder".into(),
    };
    // Warm the paths (connections, the scanner's first build, the policy).
    for _ in 0..50 {
        one(&client, &direct, &body).await?;
        one(&client, &bare, &body).await?;
        one(&client, &via, &body).await?;
    }
    let mut d = Vec::with_capacity(args.count);
    let mut f = Vec::with_capacity(args.count);
    let mut p = Vec::with_capacity(args.count);
    let mut n = Vec::with_capacity(args.count);
    for _ in 0..args.count {
        d.push(one(&client, &direct, &body).await?);
        f.push(one(&client, &bare, &body).await?);
        p.push(one(&client, &via, &body).await?);
        if let Some((t, _)) = &baseline {
            n.push(one(&client, t, &body).await?);
        }
    }
    if let Some((_, b)) = baseline {
        // Sorted copies: the samples stay in their order for the figures below.
        let mut with = p.clone();
        Stats::of(&mut with);
        Stats::of(&mut n);
        println!(
            "privacy filter ({} bytes a request, alternated): through the proxy with it p50 {:.3} ms, p90 {:.3} ms; without it p50 {:.3} ms, p90 {:.3} ms; it adds {:.0} µs at the median",
            body.len(),
            median_ms(&with),
            qs_p90(&with),
            median_ms(&n),
            qs_p90(&n),
            (median_ms(&with) - median_ms(&n)) * 1000.0
        );
        b.shutdown().await;
    }
    let ds = Stats::of(&mut d);
    let fs = Stats::of(&mut f);
    let ps = Stats::of(&mut p);
    let secs = Duration::from_secs_f64(args.seconds);
    let d_rps = throughput(&client, &direct, &body, args.concurrency, secs).await?;
    let f_rps = throughput(&client, &bare, &body, args.concurrency, secs).await?;
    let p_rps = throughput(&client, &via, &body, args.concurrency, secs).await?;
    broker.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    let added_us = (median_ms(&p) - median_ms(&d)) * 1000.0;
    let forwarder_added_us = (median_ms(&f) - median_ms(&d)) * 1000.0;
    let ratio = p_rps / d_rps;
    if args.json {
        println!(
            "{}",
            json!({
                "requests": args.count,
                "tool_call": args.tool_call,
                "scan": !args.no_scan,
                "direct_ms": ds.to_json(),
                "proxy_ms": ps.to_json(),
                "forwarder_ms": fs.to_json(),
                "added_median_us": added_us,
                "forwarder_added_median_us": forwarder_added_us,
                "direct_rps": d_rps,
                "forwarder_rps": f_rps,
                "proxy_rps": p_rps,
                "throughput_ratio": ratio,
                "throughput_ratio_to_forwarder": p_rps / f_rps,
                "concurrency": args.concurrency,
                "request_bytes": body.len(),
                "upstream_ms": args.upstream_ms,
                "token_cache_ms": args.token_cache_ms,
                "clean_window_ms": args.clean_window_ms,
            })
        );
    } else {
        println!(
            "{} sequential requests of {} bytes each way ({}; upstream time {} ms; inbound scan {}), milliseconds:",
            args.count,
            body.len(),
            if args.tool_call {
                "answer with one allowed tool call, decided and recorded"
            } else {
                "text answer"
            },
            args.upstream_ms,
            if args.no_scan { "off" } else { "on" }
        );
        println!(
            "{:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "", "min", "p50", "p90", "p99", "max", "mean"
        );
        println!("{}", ds.row("upstream directly"));
        println!("{}", fs.row("bare forwarder"));
        println!("{}", ps.row("through the proxy"));
        println!(
            "median added latency: {added_us:.0} µs (goal ≤ 300 µs); a bare forwarder adds {forwarder_added_us:.0} µs"
        );
        println!(
            "throughput, {} concurrent clients for {:.1} s: direct {d_rps:.0} req/s, bare forwarder {f_rps:.0} req/s ({:.0}%), proxy {p_rps:.0} req/s, ratio {:.0}% (goal ≥ 70%), {:.0}% of the bare forwarder",
            args.concurrency,
            args.seconds,
            f_rps / d_rps * 100.0,
            ratio * 100.0,
            p_rps / f_rps * 100.0
        );
    }
    Ok(0)
}

/// A coding agent's conversation: the system prompt and the task, then rounds of an assistant
/// tool call and its result (a listing of test output) until about `history` bytes, then one
/// last call whose result is new since the model's turn. With `history` 0: the task alone.
fn conversation(history: usize) -> Vec<serde_json::Value> {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a careful coding agent."}),
        json!({"role": "user", "content": "Run the test suite and tell me whether the build is green."}),
    ];
    if history == 0 {
        return messages;
    }
    let result = |round: usize| {
        (0..12)
            .map(|i| format!("test suite::module_{round}::case_{i} ... ok (0.{i:02}s)\n"))
            .collect::<String>()
    };
    let mut size = 0;
    let mut round = 0;
    while size < history {
        let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{round}"), "type": "function", "function": {"name": "bash", "arguments": format!("{{\"command\":\"cargo test -p module_{round}\"}}")}}]});
        let out = json!({"role": "tool", "tool_call_id": format!("call_{round}"), "content": result(round)});
        size += call.to_string().len() + out.to_string().len();
        messages.push(call);
        messages.push(out);
        round += 1;
    }
    messages
}

/// The nearest-rank 90th percentile of sorted samples, in milliseconds.
fn qs_p90(sorted: &[Duration]) -> f64 {
    let rank = (sorted.len() * 9).div_ceil(10).max(1);
    sorted[rank - 1].as_secs_f64() * 1000.0
}

/// The nearest-rank median of sorted samples, in milliseconds (as `Stats` computes it).
fn median_ms(sorted: &[Duration]) -> f64 {
    let rank = sorted.len().div_ceil(2).max(1);
    sorted[rank - 1].as_secs_f64() * 1000.0
}

struct Target {
    url: String,
    token: String,
}

async fn one(c: &reqwest::Client, t: &Target, body: &[u8]) -> Result<Duration> {
    let start = Instant::now();
    let r = c
        .post(&t.url)
        .bearer_auth(&t.token)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await?;
    let status = r.status();
    let bytes = r.bytes().await?;
    let took = start.elapsed();
    if !status.is_success() || bytes.is_empty() {
        bail!(
            "{} answered {status}: {}",
            t.url,
            String::from_utf8_lossy(&bytes)
        );
    }
    Ok(took)
}

async fn throughput(
    c: &reqwest::Client,
    t: &Target,
    body: &[u8],
    clients: usize,
    run: Duration,
) -> Result<f64> {
    let start = Instant::now();
    let end = start + run;
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let c = c.clone();
        let t = Target {
            url: t.url.clone(),
            token: t.token.clone(),
        };
        let body = body.to_vec();
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < end {
                one(&c, &t, &body).await?;
                n += 1;
            }
            Ok::<u64, anyhow::Error>(n)
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await??;
    }
    Ok(total as f64 / start.elapsed().as_secs_f64())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("airlock-bench-proxy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A gateway with the proxy in front of `upstream`; returns its URL, an agent token, the broker.
async fn start_proxy(
    dir: &std::path::Path,
    upstream: &str,
    scan: bool,
    token_cache: Duration,
    clean_window: Duration,
    privacy: bool,
) -> Result<(String, String, Broker)> {
    let ledger = Ledger::open(&StoreOptions::new(dir), LedgerConfig::default()).await?;
    let db = ledger.db().clone();
    let book = GrantBook::new(db.clone(), GrantConfig::default());
    let policy = Arc::new(Policy::builtin()?);
    let broker = Broker::start(
        ledger,
        book,
        Arc::new(move |_| Ok(policy.clone())),
        BrokerConfig::default(),
    )
    .await?;
    let auth = Auth::new(db).with_token_cache(token_cache);
    let agent = auth.create("bench-agent", Role::Agent).await?.secret;
    let mut pc = ProxyConfig::new(upstream);
    pc.scan = scan;
    pc.clean_window = clean_window;
    if !privacy {
        pc.privacy.secrets = airlock_proxy::privacy::SecretAction::Off;
    }
    let proxy = Proxy::new(broker.clone(), pc).map_err(|e| anyhow::anyhow!(e))?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let config = ServeConfig {
        listen: addr,
        ..ServeConfig::default()
    };
    let state = AppState::new(broker.clone(), auth, config);
    let proxy = std::sync::Arc::new(proxy);
    tokio::spawn(async move {
        let _ = airlock_proxy::serve(listener, state, proxy, std::future::pending::<()>()).await;
    });
    Ok((format!("http://{addr}"), agent, broker))
}

/// A forwarder with nothing in it: the same HTTP stack as the proxy (axum serving, a pooled
/// reqwest client sending), no authentication, parsing, scanning or recording. Returns its URL.
async fn start_forwarder(upstream: &str) -> Result<String> {
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    #[derive(Clone)]
    struct Fwd {
        http: reqwest::Client,
        url: Arc<str>,
    }
    async fn forward(State(f): State<Fwd>, body: Bytes) -> axum::response::Response {
        let sent = f
            .http
            .post(&*f.url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await;
        match sent {
            Ok(r) => {
                let status =
                    StatusCode::from_u16(r.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
                match r.bytes().await {
                    Ok(b) => (status, [("content-type", "application/json")], b).into_response(),
                    Err(_) => StatusCode::BAD_GATEWAY.into_response(),
                }
            }
            Err(_) => StatusCode::BAD_GATEWAY.into_response(),
        }
    }
    let state = Fwd {
        http: reqwest::Client::builder()
            .build()
            .context("building the forwarder's client")?,
        url: format!("{upstream}/chat/completions").into(),
    };
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(forward))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{addr}"))
}

/// Starts the canned upstream; returns its base URL (`http://127.0.0.1:PORT/v1`).
async fn start_upstream(answer: &'static str, delay: Duration) -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            let _ = s.set_nodelay(true);
            tokio::spawn(serve_conn(s, answer, delay));
        }
    });
    Ok(format!("http://{addr}/v1"))
}

/// One keep-alive HTTP/1.1 connection: reads each request (headers, then `Content-Length`
/// bytes of body) and answers with the canned JSON.
async fn serve_conn(mut s: tokio::net::TcpStream, answer: &'static str, delay: Duration) {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        answer.len()
    );
    let reply = [head.as_bytes(), answer.as_bytes()].concat();
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match s.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        };
        let length = String::from_utf8_lossy(&buf[..end])
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        while buf.len() < end + length {
            match s.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
        buf.drain(..end + length);
        if !delay.is_zero() {
            // tokio's timer counts whole milliseconds, so its 1 ms sleep takes 1–2 ms and the
            // direct and proxied requests would fall on different ticks; a thread's sleep is
            // precise to tens of microseconds.
            if tokio::task::spawn_blocking(move || std::thread::sleep(delay))
                .await
                .is_err()
            {
                return;
            }
        }
        if s.write_all(&reply).await.is_err() {
            return;
        }
    }
}
