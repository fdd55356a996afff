//! `airlock tool`: WASM tools (airlock-wasm). `run MODULE.wasm [--dir PATH]… [--grant ID]… --
//! ARGS…` runs one module in the interpreter with fuel, a memory cap and a wall-clock limit;
//! it reads only the `--dir` directories (never a protected path) and writes only in
//! directories a write grant opens, the grant checked and its use counted as `airlock run`
//! does. `serve --dir TOOLS` is a stdio MCP server over a directory of tools, to be put behind
//! the gateway (`airlock mcp wrap -- airlock tool serve --dir TOOLS`).
//!
//! Exit codes of `run`: the module's own, 125 when refused before it ran, 124 at the time
//! limit, 134 when stopped by another limit or a trap (the reason code is printed).

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use airlock_grants::{GrantBook, GrantConfig, Subject};
use airlock_sandbox::profile::check_roots;
use airlock_sandbox::{EXIT_REFUSED, EXIT_TIMEOUT, protected_paths};
use airlock_store::{Db, StoreOptions};
use airlock_wasm::{Ending, Entry, Invocation, Limits, Outcome, Output, Preopen};
use anyhow::{Context, Result, anyhow, bail};

use super::run::{Rule, grant_rule};

/// The exit code of a module stopped by a limit other than time, or by a trap (as a process
/// killed by SIGABRT).
pub const EXIT_STOPPED: u8 = 134;

/// The longest MCP message `serve` reads.
const MAX_LINE: u64 = 16 * 1024 * 1024;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Run a WASM module (a WASI command, or one export) inside fuel, memory and time limits.
    Run(Box<RunArgs>),
    /// Serve a directory of WASM tools (NAME.wasm + NAME.toml) as a stdio MCP server.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// The module (.wasm, binary format).
    module: PathBuf,
    /// Fuel: about one unit per instruction executed.
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// The largest linear memory, in MiB.
    #[arg(long, value_name = "MIB")]
    memory: Option<u64>,
    /// Stop the module after this many seconds (wall clock, loading included).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// A directory the module may read (seen under the name given); repeatable.
    #[arg(long = "dir", value_name = "PATH")]
    dirs: Vec<PathBuf>,
    /// A write grant (`airlock grant add --write DIR`) whose directory the module may write
    /// in; repeatable.
    #[arg(long = "grant", value_name = "ID")]
    grants: Vec<String>,
    /// Call this export with ARGS as its parameters instead of running `_start`.
    #[arg(long, value_name = "EXPORT")]
    invoke: Option<String>,
    /// An environment variable for the module (it gets none otherwise); repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// The module's standard input: a file, or `-` for this process's (read whole before the
    /// module starts). Empty by default.
    #[arg(long, value_name = "FILE")]
    stdin: Option<PathBuf>,
    /// The agent the grants must belong to.
    #[arg(long, env = "AIRLOCK_AGENT", default_value = "user")]
    agent: String,
    /// The session the grants may be bound to.
    #[arg(long, env = "AIRLOCK_SESSION")]
    session: Option<String>,
    /// Print the fuel used and the time taken.
    #[arg(long, short)]
    verbose: bool,
    /// The module's arguments (after `--`), or the export's parameters with `--invoke`.
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// The directory of tools: NAME.wasm with NAME.toml (description, input_schema, limits,
    /// dirs) beside it.
    #[arg(long, value_name = "TOOLS")]
    dir: PathBuf,
}

pub fn run(a: Args, store: &StoreOptions) -> Result<u8> {
    match a.command {
        Sub::Run(r) => tool_run(*r, store),
        Sub::Serve(s) => serve(s, store),
    }
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("HOME is not set, so the protected paths under it are unknown"))
}

fn limits_of(a: &RunArgs) -> Result<Limits> {
    let mut l = Limits::default();
    if let Some(f) = a.fuel {
        l.fuel = f;
    }
    if let Some(m) = a.memory {
        l.memory_bytes = m.saturating_mul(1024 * 1024);
    }
    if let Some(t) = a.timeout {
        if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
            bail!("--timeout {t} is not a positive number of seconds");
        }
        l.timeout = Duration::from_secs_f64(t);
    }
    l.check()?;
    Ok(l)
}

fn tool_run(a: RunArgs, store: &StoreOptions) -> Result<u8> {
    let started = Instant::now();
    let verbose = a.verbose;
    let prepared = match prepare(a, store) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("airlock tool: refused: {e:#}");
            return Ok(EXIT_REFUSED);
        }
    };
    let Prepared { bytes, inv, limits } = prepared;
    let outcome =
        match airlock_wasm::load(&bytes, &limits).and_then(|m| m.run(inv, &limits, started)) {
            Ok(o) => o,
            Err(e) => {
                let code = e.reason().map(|c| format!("{c}: ")).unwrap_or_default();
                eprintln!("airlock tool: refused: {code}{e}");
                return Ok(EXIT_REFUSED);
            }
        };
    report(&outcome, verbose);
    Ok(match &outcome.ending {
        Ending::Exited(code) => (*code & 0xff) as u8,
        Ending::Stopped { reason, .. } if *reason == airlock_core::ReasonCode::WasmTimeout => {
            EXIT_TIMEOUT
        }
        Ending::Stopped { .. } => EXIT_STOPPED,
    })
}

fn report(o: &Outcome, verbose: bool) {
    for r in &o.results {
        println!("{r}");
    }
    let _ = std::io::stdout().flush();
    for d in &o.denials {
        eprintln!("airlock tool: WASM_CAPABILITY_DENIED: {d}");
    }
    if o.denial_count > o.denials.len() {
        eprintln!(
            "airlock tool: WASM_CAPABILITY_DENIED: and {} more refusals",
            o.denial_count - o.denials.len()
        );
    }
    if let Ending::Stopped { reason, message } = &o.ending {
        eprintln!("airlock tool: {reason}: {message}");
    }
    if verbose {
        eprintln!(
            "airlock tool: fuel used {}, {:.1} ms",
            o.fuel_used,
            o.elapsed.as_secs_f64() * 1000.0
        );
    }
}

/// Everything decided before the module loads.
struct Prepared {
    bytes: Vec<u8>,
    inv: Invocation,
    limits: Limits,
}

fn prepare(a: RunArgs, store: &StoreOptions) -> Result<Prepared> {
    let limits = limits_of(&a)?;
    let bytes = read_module(&a.module, limits.module_bytes)?;
    let mut preopens: Vec<Preopen> = Vec::new();
    for d in &a.dirs {
        let host = std::fs::canonicalize(d).with_context(|| format!("--dir {}", d.display()))?;
        if !host.is_dir() {
            bail!("--dir {} is not a directory", d.display());
        }
        preopens.push(Preopen {
            host,
            guest: d.to_string_lossy().into_owned(),
            writable: false,
        });
    }
    if !a.grants.is_empty() {
        for dir in write_grants(&a, store)? {
            match preopens.iter_mut().find(|p| p.host == dir) {
                Some(p) => p.writable = true,
                None => preopens.push(Preopen {
                    guest: dir.to_string_lossy().into_owned(),
                    host: dir,
                    writable: true,
                }),
            }
        }
    }
    let roots: Vec<PathBuf> = preopens.iter().map(|p| p.host.clone()).collect();
    let protected = protected_paths(&home()?, std::slice::from_ref(&store.data_dir));
    check_roots(&roots, &protected).map_err(|e| anyhow!("WASM_CAPABILITY_DENIED: {e}"))?;
    let mut env = Vec::new();
    for kv in &a.env {
        let (k, v) = kv
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| anyhow!("--env {kv:?}: expected KEY=VALUE"))?;
        env.push((k.to_string(), v.to_string()));
    }
    let stdin = match &a.stdin {
        None => Vec::new(),
        Some(p) if p.as_os_str() == "-" => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading standard input")?;
            buf
        }
        Some(p) => std::fs::read(p).with_context(|| format!("--stdin {}", p.display()))?,
    };
    let name = a
        .module
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "module.wasm".into());
    let (args, entry) = match a.invoke {
        Some(export) => (
            vec![name],
            Entry::Export {
                name: export,
                params: a.args,
            },
        ),
        None => {
            let mut args = vec![name];
            args.extend(a.args);
            (args, Entry::Start)
        }
    };
    Ok(Prepared {
        bytes,
        inv: Invocation {
            args,
            env,
            stdin,
            preopens,
            entry,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
        },
        limits,
    })
}

/// The module's bytes, refused unread when over the size cap.
fn read_module(path: &Path, cap: usize) -> Result<Vec<u8>> {
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut bytes = Vec::new();
    (&mut f)
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() > cap {
        bail!(
            "WASM_INVALID_MODULE: {} is larger than the module size limit of {cap} bytes",
            path.display()
        );
    }
    Ok(bytes)
}

/// The directories the write grants open, each grant checked and one use counted (as
/// `airlock run --grant` does).
fn write_grants(a: &RunArgs, opts: &StoreOptions) -> Result<Vec<PathBuf>> {
    let actor = Subject::new(a.agent.clone(), a.session.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let db = Db::open(opts)
            .await
            .with_context(|| format!("opening the store in {}", opts.data_dir.display()))?;
        let book = GrantBook::new(db.clone(), GrantConfig::default());
        let mut dirs = Vec::new();
        let mut result = Ok(());
        for id in &a.grants {
            match grant_rule(&book, id, &actor).await {
                Ok(Rule::Write(path)) => {
                    let p = PathBuf::from(&path);
                    if !p.is_dir() {
                        result = Err(anyhow!(
                            "grant {id} opens {path}, which is not a directory: a WASM tool writes in granted directories"
                        ));
                        break;
                    }
                    dirs.push(std::fs::canonicalize(&p).with_context(|| format!("grant {id}: {path}"))?);
                }
                Ok(Rule::Network) => {
                    result = Err(anyhow!(
                        "grant {id} is a network grant: WASM tools have no network"
                    ));
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        db.close().await;
        result.map(|()| dirs)
    })
}

fn serve(a: ServeArgs, store: &StoreOptions) -> Result<u8> {
    let toolbox = airlock_wasm::toolbox::Toolbox::load(&a.dir, &Limits::default())?;
    let protected = protected_paths(&home()?, std::slice::from_ref(&store.data_dir));
    for t in &toolbox.tools {
        let roots: Vec<PathBuf> = t.dirs.iter().map(|p| p.host.clone()).collect();
        check_roots(&roots, &protected)
            .map_err(|e| anyhow!("the tool {}: WASM_CAPABILITY_DENIED: {e}", t.name))?;
    }
    eprintln!(
        "airlock tool serve: {} tools from {}",
        toolbox.tools.len(),
        a.dir.display()
    );
    let server = airlock_wasm::mcp::Server::new(toolbox);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut input)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .context("reading standard input")?;
        if n == 0 {
            return Ok(0);
        }
        let answer = if line.len() as u64 > MAX_LINE {
            // skip the rest of the over-long line without keeping it, then say why
            skip_line(&mut input).context("reading standard input")?;
            Some(
                serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": format!("a message over {MAX_LINE} bytes")}}),
            )
        } else {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            server.handle(text)
        };
        if let Some(v) = answer {
            let mut out = stdout.lock();
            writeln!(out, "{v}").context("writing standard output")?;
            out.flush().context("writing standard output")?;
        }
    }
}

/// Consumes input up to and including the next newline, keeping none of it.
fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_over_long_line_is_skipped_to_its_end() {
        let mut input = std::io::BufReader::with_capacity(4, &b"aaaaaaaaaaaa\n{\"next\":1}\n"[..]);
        skip_line(&mut input).unwrap();
        let mut rest = String::new();
        input.read_line(&mut rest).unwrap();
        assert_eq!(rest, "{\"next\":1}\n");
        skip_line(&mut input).unwrap();
    }
}
