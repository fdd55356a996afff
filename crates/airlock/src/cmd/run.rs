//! `airlock run [--profile P] [--grant ID]… [--timeout S] -- CMD ARGS…`: runs a command confined
//! by airlock-sandbox (Landlock, seccomp, rlimits, a process group, a timeout) with its network,
//! if a grant gives it any, through the egress proxy, whose every connection is checked against
//! the grants and recorded in the ledger. Anything wrong before the command starts (no
//! Landlock, an unknown profile, a grant that is missing, revoked or of another kind) is a
//! refusal with exit 125: the command never runs unconfined.
//!
//! The hidden `airlock sandbox-exec PLAN` is the launcher half: it confines itself and execs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_grants::{GrantBook, GrantConfig, Scope, Subject, connect_action, write_action};
use airlock_sandbox::cgroup::Cgroup;
use airlock_sandbox::egress::{self, EgressVerdict, Gate, Proxy};
use airlock_sandbox::environment::EnvFilter;
use airlock_sandbox::profile::check_roots;
use airlock_sandbox::{EXIT_REFUSED, EXIT_TIMEOUT, Limits, Plan, Profile, protected_paths};
use airlock_store::{Db, Ledger, LedgerConfig, StoreOptions};
use anyhow::{Context, Result, anyhow, bail};

use crate::record::RecordContext;

const MIB: u64 = 1024 * 1024;

#[derive(clap::Args, Debug, PartialEq)]
pub struct Args {
    /// Which system trees the command may read (built-in profiles: default, dev).
    #[arg(long, default_value = "default")]
    profile: String,
    /// A network or write grant (`airlock grant add --network HOST[:PORT]` / `--write PATH`)
    /// that opens what it names; repeatable.
    #[arg(long = "grant", value_name = "ID")]
    grants: Vec<String>,
    /// Kill the command and everything it started after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// The tree the command may write (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// The agent the grants must belong to.
    #[arg(long, env = "AIRLOCK_AGENT", default_value = "user")]
    agent: String,
    /// The session the grants may be bound to.
    #[arg(long, env = "AIRLOCK_SESSION")]
    session: Option<String>,
    /// RLIMIT_CPU in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    cpu: u64,
    /// RLIMIT_AS in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 16 * 1024)]
    memory: u64,
    /// RLIMIT_FSIZE in MiB: the largest file the command may write.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    file_size: u64,
    /// The most processes: a pids cgroup for this run where airlock can make one, else
    /// RLIMIT_NPROC (which counts all of the user's processes).
    #[arg(long, value_name = "N", default_value_t = 512)]
    processes: u64,
    /// Pass this environment variable through although its name is a credential's (removed by
    /// default: rules/sandbox/environment.toml); repeatable.
    #[arg(long = "keep-env", value_name = "NAME")]
    keep_env: Vec<String>,
    /// Start the command with an empty environment but PATH, HOME, TERM and LANG (and what
    /// `--keep-env` names).
    #[arg(long)]
    env_clean: bool,
    /// Print what the kernel enforces before the command starts.
    #[arg(long, short)]
    verbose: bool,
    /// Refuse as on a kernel without Landlock (checks the refusal path; only ever stricter).
    #[arg(long, hide = true)]
    assume_no_landlock: bool,
    /// The command and its arguments.
    #[arg(trailing_var_arg = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

#[derive(clap::Args)]
pub struct ExecArgs {
    /// The confinement plan (JSON), written by `airlock run`.
    plan: String,
}

/// `airlock sandbox-exec PLAN` without building the command-line parser: the launcher starts
/// once per confined command, so its start-up is part of every run's overhead. `None` for any
/// other command line.
pub fn launcher_fast_path() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "sandbox-exec" {
        return None;
    }
    let plan = args.next()?.into_string().ok()?;
    if args.next().is_some() {
        return None;
    }
    Some(exec(ExecArgs { plan }).unwrap_or(EXIT_REFUSED))
}

/// `airlock [--data-dir DIR] [--database URL] run [OPTIONS] [--] CMD…` without building the
/// command-line parser: every confined command pays `airlock run`'s start-up, and clap building
/// the whole command tree was a measurable part of it. A command line this reader does not know
/// for certain (help, an unknown or repeated option, a value that does not parse, an empty
/// `AIRLOCK_*` variable) returns `None` and goes through clap, which reports it; the test
/// `the_lean_reader_agrees_with_clap` holds both readers to the same answers.
pub fn fast_path() -> Option<u8> {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string().ok())
        .collect::<Option<_>>()?;
    let env = |k: &str| std::env::var_os(k);
    let (data_dir, database, a) = lean_args(&args, &env)?;
    let store = airlock_store::StoreOptions::chosen(data_dir, database);
    Some(match run(a, &store) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("airlock: error: {e:#}");
            crate::cmd::EXIT_ERROR
        }
    })
}

/// The lean reader behind [`fast_path`]: the global data options and `run`'s arguments, or
/// `None` for anything it leaves to clap.
fn lean_args(
    args: &[String],
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<(Option<PathBuf>, Option<String>, Args)> {
    // What clap would read from the environment must be plain (set and UTF-8, or unset).
    let var = |k: &str| -> Option<Option<String>> {
        match env(k) {
            None => Some(None),
            Some(v) => v.into_string().ok().filter(|v| !v.is_empty()).map(Some),
        }
    };
    let (agent, session) = (var("AIRLOCK_AGENT")?, var("AIRLOCK_SESSION")?);
    var("AIRLOCK_DATA_DIR")?;
    var("AIRLOCK_DATABASE_URL")?;
    let mut a = Args {
        profile: "default".into(),
        grants: Vec::new(),
        timeout: None,
        workspace: None,
        agent: agent.unwrap_or_else(|| "user".into()),
        session,
        cpu: 3600,
        memory: 16 * 1024,
        file_size: 4096,
        processes: 512,
        keep_env: Vec::new(),
        env_clean: false,
        verbose: false,
        assume_no_landlock: false,
        command: Vec::new(),
    };
    let (mut data_dir, mut database) = (None, None);
    let mut seen: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut in_run = false;
    while i < args.len() {
        let word = args[i].as_str();
        i += 1;
        if !in_run {
            if word == "run" {
                in_run = true;
                continue;
            }
        } else if word == "--" {
            a.command = args[i..].to_vec();
            break;
        } else if !word.starts_with('-') {
            a.command = args[i - 1..].to_vec();
            break;
        }
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (word, None),
        };
        let flag = |set: &mut bool| -> Option<()> {
            if inline.is_some() || *set {
                return None;
            }
            *set = true;
            Some(())
        };
        if in_run && matches!(name, "--verbose" | "-v") {
            flag(&mut a.verbose)?;
            continue;
        }
        if in_run && name == "--env-clean" {
            flag(&mut a.env_clean)?;
            continue;
        }
        if in_run && name == "--assume-no-landlock" {
            flag(&mut a.assume_no_landlock)?;
            continue;
        }
        let value = match inline {
            Some(v) => v.to_string(),
            None => {
                let v = args.get(i)?.clone();
                i += 1;
                v
            }
        };
        // A value that looks like an option is read differently by clap (an error, or the
        // option itself): left to it.
        if value.starts_with('-') && !value.starts_with("--") && value.len() > 1 {
            return None;
        }
        if value.is_empty() || value.starts_with("--") {
            return None;
        }
        let once = |seen: &mut Vec<&str>, n: &'static str| -> Option<()> {
            if seen.contains(&n) {
                return None;
            }
            seen.push(n);
            Some(())
        };
        match (in_run, name) {
            (false, "--data-dir") => {
                once(&mut seen, "data-dir")?;
                data_dir = Some(PathBuf::from(value));
            }
            (false, "--database") => {
                once(&mut seen, "database")?;
                database = Some(value);
            }
            (true, "--profile") => {
                once(&mut seen, "profile")?;
                a.profile = value;
            }
            (true, "--grant") => a.grants.push(value),
            (true, "--keep-env") => a.keep_env.push(value),
            (true, "--timeout") => {
                once(&mut seen, "timeout")?;
                a.timeout = Some(value.parse().ok()?);
            }
            (true, "--workspace") => {
                once(&mut seen, "workspace")?;
                a.workspace = Some(PathBuf::from(value));
            }
            (true, "--agent") => {
                once(&mut seen, "agent")?;
                a.agent = value;
            }
            (true, "--session") => {
                once(&mut seen, "session")?;
                a.session = Some(value);
            }
            (true, "--cpu") => {
                once(&mut seen, "cpu")?;
                a.cpu = value.parse().ok()?;
            }
            (true, "--memory") => {
                once(&mut seen, "memory")?;
                a.memory = value.parse().ok()?;
            }
            (true, "--file-size") => {
                once(&mut seen, "file-size")?;
                a.file_size = value.parse().ok()?;
            }
            (true, "--processes") => {
                once(&mut seen, "processes")?;
                a.processes = value.parse().ok()?;
            }
            _ => return None,
        }
    }
    if !in_run || a.command.is_empty() {
        return None;
    }
    Some((data_dir, database, a))
}

/// The launcher: confine this process and exec the command; returns only on refusal.
pub fn exec(a: ExecArgs) -> Result<u8> {
    let plan: Plan = match serde_json::from_str(&a.plan) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("airlock run: refused: a malformed sandbox plan: {e}");
            return Ok(EXIT_REFUSED);
        }
    };
    let e = airlock_sandbox::launch::run_plan(&plan);
    eprintln!("airlock run: refused: {e}");
    Ok(EXIT_REFUSED)
}

pub fn run(a: Args, opts: &StoreOptions) -> Result<u8> {
    let verbose = a.verbose;
    let timeout = match a.timeout {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            eprintln!("airlock run: refused: --timeout {s} is not a positive number of seconds");
            return Ok(EXIT_REFUSED);
        }
    };
    let mut setup = match Setup::new(a, opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("airlock run: refused: {e:#}");
            return Ok(EXIT_REFUSED);
        }
    };
    let exe = std::env::current_exe().context("finding the airlock binary")?;
    // The small launcher beside this binary starts faster; `airlock sandbox-exec` is the same.
    let lean = exe.with_file_name("airlock-sandbox-exec");
    let mut launcher = if lean.is_file() {
        Command::new(lean)
    } else {
        let mut c = Command::new(&exe);
        c.arg("sandbox-exec");
        c
    };
    // Credentials in the environment would walk past Landlock: removed before anything is set.
    for name in &setup.env_removed {
        launcher.env_remove(name);
    }
    if verbose && !setup.env_removed.is_empty() {
        eprintln!(
            "airlock run: removed from the environment: {} (--keep-env NAME passes one)",
            setup
                .env_removed
                .iter()
                .map(|n| n.to_string_lossy())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    launcher
        .arg(serde_json::to_string(&setup.plan)?)
        .env("TMPDIR", &setup.tmp);
    if verbose {
        launcher.env("AIRLOCK_RUN_VERBOSE", "1");
    } else {
        launcher.env_remove("AIRLOCK_RUN_VERBOSE");
    }
    for k in ["NO_PROXY", "no_proxy"] {
        launcher.env_remove(k);
    }
    if let Some(p) = &setup.proxy {
        for k in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            launcher.env(k, p.url());
        }
    }
    let own_group = !std::io::stdin().is_terminal();
    let outcome =
        airlock_sandbox::supervise::run(launcher, timeout, own_group, setup.cgroup.as_ref());
    setup.finish();
    let outcome = outcome.context("starting the sandbox launcher")?;
    if outcome.timed_out {
        eprintln!(
            "airlock run: the command was killed at its timeout of {} s",
            timeout.map(|t| t.as_secs_f64()).unwrap_or_default()
        );
        return Ok(EXIT_TIMEOUT);
    }
    Ok(u8::try_from(outcome.code & 0xff).unwrap_or(1))
}

/// Everything decided and opened before the command starts, closed after it ends.
struct Setup {
    plan: Plan,
    /// The variables the command does not see (names only).
    env_removed: Vec<std::ffi::OsString>,
    tmp: PathBuf,
    cgroup: Option<Cgroup>,
    proxy: Option<Proxy>,
    store: Option<Store>,
}

impl Setup {
    fn new(a: Args, opts: &StoreOptions) -> Result<Setup> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| {
                anyhow!("HOME is not set, so the protected paths under it are unknown")
            })?;
        let profile = Profile::load(&a.profile, &home)?;
        let filter = EnvFilter {
            keep: a.keep_env.clone(),
            clean: a.env_clean,
        };
        let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
        let env_removed = filter.removed(names.iter().map(|n| n.as_os_str()))?;
        let workspace = match &a.workspace {
            Some(w) => w.clone(),
            None => std::env::current_dir().context("reading the current directory")?,
        };
        let workspace = std::fs::canonicalize(&workspace)
            .with_context(|| format!("the workspace {}", workspace.display()))?;
        let protected = protected_paths(&home, std::slice::from_ref(&opts.data_dir));
        let mut write = vec![workspace];
        write.extend(profile.write.iter().cloned());
        let mut write_files = profile.write_files.clone();
        let (store, proxy) = if a.grants.is_empty() {
            (None, None)
        } else {
            open_grants(&a, opts, &mut write, &mut write_files)?
        };
        let roots: Vec<PathBuf> = profile
            .read
            .iter()
            .chain(&write)
            .chain(&write_files)
            .cloned()
            .collect();
        // Only the roots that exist go to the launcher, which opens each for Landlock.
        let mut exists = check_roots(&roots, &protected)?.into_iter();
        let mut present = |v: Vec<PathBuf>| -> Vec<PathBuf> {
            v.into_iter()
                .filter(|_| exists.next().unwrap_or(true))
                .collect()
        };
        let read = present(profile.read);
        let mut write = present(write);
        let write_files = present(write_files);
        let tmp = private_tmp()?;
        write.push(tmp.clone());
        let cgroup = Cgroup::create(a.processes);
        let plan = Plan {
            argv: a.command,
            read,
            write,
            write_files,
            proxy_port: proxy.as_ref().map(Proxy::port),
            limits: Limits {
                cpu_secs: Some(a.cpu),
                address_space: Some(a.memory.saturating_mul(MIB)),
                file_size: Some(a.file_size.saturating_mul(MIB)),
                // RLIMIT_NPROC counts every process of the user, not of this run: only where no
                // pids cgroup caps the run itself.
                processes: cgroup.is_none().then_some(a.processes),
            },
            cgroup_procs: cgroup.as_ref().map(Cgroup::procs),
            assume_no_landlock: a.assume_no_landlock,
        };
        Ok(Setup {
            plan,
            env_removed,
            tmp,
            cgroup,
            proxy,
            store,
        })
    }

    /// Stops the proxy, kills what is left, removes the temporary directory, closes the store.
    fn finish(&mut self) {
        self.proxy = None;
        if let Some(cg) = self.cgroup.take() {
            cg.remove();
        }
        let _ = std::fs::remove_dir_all(&self.tmp);
        if let Some(s) = self.store.take() {
            s.rt.block_on(async {
                // A connection thread may still hold the ledger; its receipts are already
                // durable, so the ledger is closed only when this is the last reference.
                if let Some(l) = s.ledger.and_then(|l| Arc::try_unwrap(l).ok()) {
                    l.close().await;
                }
                s.db.close().await;
            });
        }
    }
}

/// The store opened for `--grant`: the runtime that drives it, the database, and the ledger
/// when the run has network (every connection is a receipt).
struct Store {
    rt: tokio::runtime::Runtime,
    db: Db,
    ledger: Option<Arc<Ledger>>,
}

/// Checks every `--grant`, adds the write grants' paths, and starts the egress proxy when a
/// network grant is among them.
fn open_grants(
    a: &Args,
    opts: &StoreOptions,
    write: &mut Vec<PathBuf>,
    write_files: &mut Vec<PathBuf>,
) -> Result<(Option<Store>, Option<Proxy>)> {
    let actor = Subject::new(a.agent.clone(), a.session.clone());
    // The proxy's connection threads block on this runtime, so it needs its own worker.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let db = rt
        .block_on(Db::open(opts))
        .with_context(|| format!("opening the store in {}", opts.data_dir.display()))?;
    let book = GrantBook::new(db.clone(), GrantConfig::default());
    let mut network = Vec::new();
    for id in &a.grants {
        match rt.block_on(grant_rule(&book, id, &actor))? {
            Rule::Network => network.push(id.clone()),
            Rule::Write(path) => {
                let p = PathBuf::from(&path);
                if p.is_dir() {
                    write.push(p);
                } else if p.is_file() {
                    write_files.push(p);
                } else {
                    bail!(
                        "grant {id} opens {path} for writing, which does not exist: create it first"
                    );
                }
            }
        }
    }
    if network.is_empty() {
        return Ok((
            Some(Store {
                rt,
                db,
                ledger: None,
            }),
            None,
        ));
    }
    let config = LedgerConfig {
        checkpoint_interval: Duration::from_secs(365 * 86_400),
        ..LedgerConfig::default()
    };
    let ledger = Arc::new(
        rt.block_on(Ledger::open(opts, config))
            .with_context(|| format!("opening the ledger in {}", opts.data_dir.display()))?,
    );
    let gate = StoreGate {
        rt: rt.handle().clone(),
        book,
        ledger: Arc::clone(&ledger),
        grants: network,
        actor,
        ctx: RecordContext::from_env(),
    };
    let proxy = Proxy::start(Arc::new(gate)).context("starting the egress proxy")?;
    Ok((
        Some(Store {
            rt,
            db,
            ledger: Some(ledger),
        }),
        Some(proxy),
    ))
}

/// A per-run temporary directory (mode 0700), the command's TMPDIR.
fn private_tmp() -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("airlock-run-{}-{nanos}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

pub(crate) enum Rule {
    Network,
    Write(String),
}

/// What a `--grant` opens; refuses a grant that is missing, not usable, another agent's, or
/// not a sandbox capability. A write grant's use is counted now (one use per run); a network
/// grant's per connection.
pub(crate) async fn grant_rule(book: &GrantBook, id: &str, actor: &Subject) -> Result<Rule> {
    let g = book.show(id).await?;
    let now = book.now();
    for link in book.chain(id).await? {
        if !link.is_usable_at(now) {
            bail!(
                "grant {id} cannot be used: {} is {} (GRANT_NOT_USABLE)",
                if link.id == id {
                    "it".to_string()
                } else {
                    format!("its ancestor {}", link.id)
                },
                link.state_at(now)
            );
        }
    }
    if !g.subject.covers(actor) {
        bail!(
            "grant {id} belongs to agent {:?}{}, not to {:?} (pass --agent / --session)",
            g.subject.agent,
            g.subject
                .session
                .as_deref()
                .map(|s| format!(" in session {s}"))
                .unwrap_or_default(),
            actor.agent
        );
    }
    match &g.scope {
        Scope::Network { .. } => Ok(Rule::Network),
        Scope::Write { path } => {
            book.use_grant(id, actor, &write_action(path)).await?;
            Ok(Rule::Write(path.clone()))
        }
        other => bail!(
            "grant {id} covers {}, not a sandbox capability: `--grant` takes network and write grants",
            other.describe()
        ),
    }
}

/// The proxy's gate over the grant book and the ledger.
struct StoreGate {
    rt: tokio::runtime::Handle,
    book: GrantBook,
    ledger: Arc<Ledger>,
    grants: Vec<String>,
    actor: Subject,
    ctx: RecordContext,
}

impl Gate for StoreGate {
    fn check(&self, host: &str, port: u16) -> EgressVerdict {
        let action = connect_action(host, port);
        let mut refusals = Vec::new();
        for id in &self.grants {
            match self
                .rt
                .block_on(self.book.use_grant(id, &self.actor, &action))
            {
                Ok(g) => {
                    let private = matches!(g.scope, Scope::Network { private: true, .. })
                        || host.parse::<std::net::IpAddr>().is_ok();
                    return EgressVerdict::Allow {
                        grant: id.clone(),
                        private,
                    };
                }
                Err(e) => refusals.push(e.to_string()),
            }
        }
        EgressVerdict::Deny {
            reason: format!(
                "no usable grant of this run covers {host}:{port}: {}",
                refusals.join("; ")
            ),
        }
    }

    fn record(&self, d: &egress::Decision) {
        let action = connect_action(&d.host, d.port);
        let (code, decision, severity) = if d.allowed {
            (ReasonCode::EgressAllowed, Decision::Allow, Severity::Info)
        } else {
            (ReasonCode::EgressDenied, Decision::Deny, Severity::Medium)
        };
        let mut message = format!("{}:{}", d.host, d.port);
        if let Some(a) = d.address {
            message.push_str(&format!(" ({a})"));
        }
        message.push_str(": ");
        message.push_str(&d.reason);
        let a = Assessment::from_findings(
            vec![Finding::new(
                "sandbox.egress",
                code,
                decision,
                Tier::Medium,
                severity,
                message,
            )],
            decision,
        );
        let mut ctx = self.ctx.clone();
        ctx.grant = d.grant.clone();
        if let Err(e) = self
            .rt
            .block_on(crate::record::record(&self.ledger, &action, &a, &ctx))
        {
            eprintln!(
                "airlock run: recording the connection to {}:{}: {e:#}",
                d.host, d.port
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn clap_reads(line: &[&str]) -> Option<(Option<PathBuf>, Option<String>, Args)> {
        let cli =
            crate::Cli::try_parse_from(std::iter::once("airlock").chain(line.iter().copied()))
                .ok()?;
        match cli.command {
            crate::Command::Run(a) => Some((cli.data_dir, cli.database, a)),
            _ => None,
        }
    }

    fn lean_reads(line: &[&str]) -> Option<(Option<PathBuf>, Option<String>, Args)> {
        let args: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        lean_args(&args, &|k| std::env::var_os(k))
    }

    #[test]
    fn the_lean_reader_agrees_with_clap() {
        let lean: &[&[&str]] = &[
            &["run", "--", "true"],
            &["run", "true"],
            &["run", "make", "-j", "4", "--", "x"],
            &[
                "run",
                "--profile",
                "dev",
                "--timeout",
                "600",
                "--",
                "cargo",
                "build",
            ],
            &[
                "run",
                "--profile=dev",
                "--timeout=1.5",
                "-v",
                "--",
                "ls",
                "-la",
            ],
            &[
                "run",
                "--grant",
                "gr_a",
                "--grant=gr_b",
                "--",
                "gh",
                "api",
                "/user",
            ],
            &["--data-dir", "/tmp/d", "run", "--", "true"],
            &[
                "--data-dir=/tmp/d",
                "--database",
                "sqlite://x",
                "run",
                "true",
            ],
            &[
                "run",
                "--workspace",
                "/tmp",
                "--agent",
                "bot",
                "--session",
                "s1",
                "--",
                "true",
            ],
            &[
                "run",
                "--cpu",
                "5",
                "--memory",
                "64",
                "--file-size",
                "1",
                "--processes",
                "9",
                "--",
                "true",
            ],
            &[
                "run",
                "--keep-env",
                "GITHUB_TOKEN",
                "--keep-env=EDITOR",
                "--env-clean",
                "--",
                "env",
            ],
            &["run", "--verbose", "--assume-no-landlock", "--", "true"],
            &["run", "--", "--", "x"],
            &["run", "--", "-v"],
        ];
        let plain = [
            "AIRLOCK_AGENT",
            "AIRLOCK_SESSION",
            "AIRLOCK_DATA_DIR",
            "AIRLOCK_DATABASE_URL",
        ]
        .iter()
        .all(|k| std::env::var_os(k).is_none_or(|v| v.to_str().is_some_and(|v| !v.is_empty())));
        for line in lean {
            let want = clap_reads(line);
            assert!(want.is_some(), "clap refuses {line:?}");
            let got = lean_reads(line);
            if plain {
                assert!(got.is_some(), "the lean reader leaves {line:?} to clap");
            }
            if got.is_some() {
                assert_eq!(got, want, "{line:?}");
            }
        }
        // Left to clap (which answers with help or an error, or reads it its own way).
        let to_clap: &[&[&str]] = &[
            &["run"],
            &["run", "--"],
            &["run", "--help"],
            &["run", "-h", "--", "true"],
            &["run", "--profile", "a", "--profile", "b", "--", "true"],
            &["run", "--timeout", "soon", "--", "true"],
            &["run", "--timeout", "-1", "--", "true"],
            &["run", "--cpu", "-5", "--", "true"],
            &["run", "--bogus", "--", "true"],
            &["run", "-v", "-v", "--", "true"],
            &["run", "--verbose=yes", "--", "true"],
            &["run", "--data-dir", "/tmp", "--", "true"],
            &["run", "--profile"],
            &["check", "run"],
            &["hook"],
            &["--version"],
            &["run", "-x", "true"],
        ];
        for line in to_clap {
            assert!(lean_reads(line).is_none(), "{line:?}");
        }
    }
}
