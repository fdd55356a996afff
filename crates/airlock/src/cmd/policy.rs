//! `airlock policy`: check policy files, explain which rule and layer decide an action, run the
//! examples embedded in policy files, and import Claude Code permission settings.
//!
//! Exit codes: `check` and `test` 0 when everything passes, 1 when a file or an example fails,
//! 3 on usage errors; `explain` exits like `airlock check` (0 allow, 1 deny, 2 ask).

use std::io::Write;
use std::path::{Path, PathBuf};

use airlock_core::Action;
use airlock_policy::schema::Pinned;
use airlock_policy::{Context, Layer, LayerKind, Policy, Sources};
use anyhow::{Context as _, Result, bail};

/// Where the policy layers come from; flattened into every command that decides.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PolicyArgs {
    /// The user policy (default: CONFIG_DIR/airlock/policy.toml when it exists).
    #[arg(long, env = "AIRLOCK_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The project policy (default: the nearest .airlock/policy.toml up to the repository root).
    #[arg(long, value_name = "FILE")]
    pub project_policy: Option<PathBuf>,
    /// The managed (admin) policy (default: AIRLOCK_MANAGED_POLICY or /etc/airlock/managed.toml).
    #[arg(long, value_name = "FILE")]
    pub managed_policy: Option<PathBuf>,
    /// Use the built-in layer only, ignoring every policy file.
    #[arg(long, conflicts_with_all = ["policy", "project_policy", "managed_policy"])]
    pub builtin_policy: bool,
}

/// The policy files for a process working in `cwd` (default: the current directory), with
/// `AIRLOCK_POLICY` naming the user file when set (as the hook, which has no flags, needs).
pub fn sources_at(cwd: Option<&Path>) -> Sources {
    airlock_hook::policy_sources(cwd)
}

impl PolicyArgs {
    pub fn sources(&self) -> Sources {
        if self.builtin_policy {
            return Sources::default();
        }
        let found = sources_at(None);
        Sources {
            user: self.policy.clone().or(found.user),
            project: self.project_policy.clone().or(found.project),
            managed: self.managed_policy.clone().or(found.managed),
        }
    }

    pub fn load(&self) -> Result<Policy> {
        Policy::load(&self.sources()).context("loading the policy")
    }
}

/// The decision context of this process: cwd, home, agent and session from the environment.
pub fn context_from_env() -> Context {
    Context {
        agent: std::env::var("AIRLOCK_PRINCIPAL").ok(),
        session: std::env::var("AIRLOCK_SESSION").ok(),
        cwd: std::env::current_dir()
            .ok()
            .map(|p| p.to_string_lossy().into_owned()),
        home: std::env::var("HOME").ok(),
        ..Context::default()
    }
    .with_env_facts()
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Check policy files: syntax, what each layer may say, patterns, schemas and pins.
    Check(CheckArgs),
    /// Show how the effective policy decides one action, step by step.
    Explain(ExplainArgs),
    /// Run the examples embedded in the policy files against the effective policy.
    Test(TestArgs),
    /// Convert another agent's permission settings into an airlock policy.
    Import(ImportArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files to check; none checks the effective stack.
    files: Vec<PathBuf>,
    /// The layer the files are meant for (what a layer may say differs).
    #[arg(long, default_value = "user", value_parser = ["user", "project", "managed"])]
    layer: String,
    #[command(flatten)]
    policy: PolicyArgs,
}

#[derive(clap::Args)]
struct ExplainArgs {
    /// Explain a tool call instead of a shell command.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The tool call's arguments as JSON.
    #[arg(long, value_name = "JSON", requires = "tool")]
    arguments: Option<String>,
    /// Explain a file write to this path.
    #[arg(long, value_name = "PATH", conflicts_with = "tool")]
    write: Option<String>,
    /// The agent asking (for its profile).
    #[arg(long)]
    agent: Option<String>,
    /// The session is in crisis mode.
    #[arg(long)]
    crisis: bool,
    /// The channel the request came from (its risk threshold applies).
    #[arg(long, default_value = "terminal", value_parser = ["terminal", "chat", "api", "telegram", "discord", "slack"])]
    channel: String,
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    policy: PolicyArgs,
    /// The command line (after `--`).
    #[arg(trailing_var_arg = true)]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct TestArgs {
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

#[derive(clap::Args)]
struct ImportArgs {
    /// The source format (only `claude` for now).
    #[arg(value_parser = ["claude"])]
    from: String,
    /// Claude Code's settings.json.
    settings: PathBuf,
    /// Write the policy here instead of standard output (refuses to overwrite).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<u8> {
    match args.command {
        Sub::Check(a) => check(a),
        Sub::Explain(a) => explain(a),
        Sub::Test(a) => test(a),
        Sub::Import(a) => import(a),
    }
}

fn kind_of(s: &str) -> LayerKind {
    match s {
        "project" => LayerKind::Project,
        "managed" => LayerKind::Managed,
        _ => LayerKind::User,
    }
}

/// Problems a layer loads with but that deny calls: broken or mismatched schemas.
fn schema_problems(layer: &Layer) -> Vec<String> {
    let mut out = Vec::new();
    for t in &layer.tools {
        for (what, p) in [("schema", &t.args), ("output schema", &t.output)] {
            match p {
                Some(Pinned::Invalid(why)) => {
                    out.push(format!("tool `{}`: {what}: {why}", t.spec.name))
                }
                Some(Pinned::PinMismatch { expected, actual }) => out.push(format!(
                    "tool `{}`: {what} has SHA-256 {actual}, pinned {expected}",
                    t.spec.name
                )),
                _ => {}
            }
        }
    }
    out
}

fn check(a: CheckArgs) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    let layers: Vec<(LayerKind, PathBuf)> = if a.files.is_empty() {
        let s = a.policy.sources();
        [
            (LayerKind::User, s.user),
            (LayerKind::Project, s.project),
            (LayerKind::Managed, s.managed),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.map(|p| (k, p)))
        .collect()
    } else {
        let k = kind_of(&a.layer);
        a.files.iter().map(|f| (k, f.clone())).collect()
    };
    let mut loaded = Vec::new();
    for (kind, path) in &layers {
        match Layer::from_path(*kind, path) {
            Ok(l) => {
                let problems = schema_problems(&l);
                if problems.is_empty() {
                    writeln!(
                        out,
                        "ok: {} ({} layer): {} rules, {} tools, {} examples",
                        path.display(),
                        kind.as_str(),
                        l.rules.len(),
                        l.tools.len(),
                        l.file.examples.len()
                    )?;
                } else {
                    failed = true;
                    for p in problems {
                        writeln!(out, "error: {}: {p}", path.display())?;
                    }
                }
                loaded.push(l);
            }
            Err(e) => {
                failed = true;
                writeln!(out, "error: {e}")?;
            }
        }
    }
    if !failed && a.files.len() <= 1 {
        let p = Policy::from_layers(loaded)?;
        writeln!(out, "policy sha256: {}", p.hash()?)?;
    }
    Ok(if failed { 1 } else { 0 })
}

fn explain(a: ExplainArgs) -> Result<u8> {
    let policy = a.policy.load()?;
    let action = if let Some(tool) = &a.tool {
        let arguments = match &a.arguments {
            Some(j) => serde_json::from_str(j).context("--arguments is not JSON")?,
            None => serde_json::json!({}),
        };
        Action::Tool {
            tool: tool.clone(),
            arguments,
        }
    } else if let Some(path) = &a.write {
        Action::FileWrite {
            path: path.clone(),
            content: None,
            edit: false,
        }
    } else {
        if a.command.is_empty() {
            bail!("no action: usage `airlock policy explain -- <command>` or `--tool NAME`");
        }
        let line = if a.command.len() == 1 {
            a.command[0].clone()
        } else {
            airlock_shell::canon::join(&a.command)
        };
        Action::shell(line)
    };
    let mut ctx = context_from_env();
    if a.agent.is_some() {
        ctx.agent = a.agent.clone();
    }
    ctx.crisis = a.crisis;
    ctx.channel = airlock_policy::Channel::parse(&a.channel);
    let ctx = ctx.with_project_hosts(&action);
    let v = policy.evaluate(&action, &ctx);
    let hash = policy.hash()?;
    let mut out = std::io::stdout().lock();
    if a.json {
        let mut j = serde_json::to_value(&v)?;
        if let Some(m) = j.as_object_mut() {
            m.insert("policy_hash".into(), hash.into());
        }
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
        return Ok(super::exit_code(v.decision));
    }
    writeln!(out, "decision: {} (tier {})", v.decision, v.tier)?;
    writeln!(out, "decided by: {}", v.decided_by)?;
    let channel = ctx.channel.unwrap_or(airlock_policy::Channel::Terminal);
    let threshold = policy.settings.threshold(channel);
    writeln!(
        out,
        "profile: {}  risk score: {} (threshold {} for {})",
        v.profile.as_str(),
        v.score,
        if threshold == u32::MAX {
            "none".to_string()
        } else {
            threshold.to_string()
        },
        channel.as_str()
    )?;
    for p in &v.score_parts {
        writeln!(out, "  +{:<4} {:<28} {}", p.points, p.part, p.why)?;
    }
    if let Some(c) = &v.confirm {
        writeln!(
            out,
            "confirm: {} within {}s{}{}",
            c.confirm.as_str(),
            c.timeout.as_secs(),
            if c.deliberate { ", deliberate" } else { "" },
            if c.time_lock.is_zero() {
                String::new()
            } else {
                format!(", time lock {}s", c.time_lock.as_secs())
            }
        )?;
    }
    writeln!(out, "steps:")?;
    for s in &v.trace {
        writeln!(
            out,
            "  {:<8} {:<40} {:<5} {}",
            s.layer, s.rule, s.decision, s.effect
        )?;
    }
    writeln!(out, "reasons:")?;
    for r in &v.reasons {
        writeln!(
            out,
            "  [{}] {} {}: {}",
            r.decision, r.code, r.rule_id, r.message
        )?;
    }
    for l in &policy.layers {
        writeln!(out, "layer {}: {}", l.kind.as_str(), l.origin)?;
    }
    writeln!(out, "policy sha256: {hash}")?;
    Ok(super::exit_code(v.decision))
}

fn test(a: TestArgs) -> Result<u8> {
    let policy = a.policy.load()?;
    let ctx = context_from_env();
    let outcomes = airlock_policy::examples::run(&policy, &ctx);
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &outcomes)?;
        writeln!(out)?;
    } else {
        for o in &outcomes {
            if o.passed {
                continue;
            }
            writeln!(
                out,
                "FAIL {} example {}: {} expected {}{} got {} (decided by {})",
                o.layer,
                o.index,
                o.action,
                o.expect,
                o.expect_rule
                    .as_ref()
                    .map(|r| format!(" by {r}"))
                    .unwrap_or_default(),
                o.got,
                o.decided_by
            )?;
        }
        writeln!(
            out,
            "{} examples, {} passed, {} failed",
            outcomes.len(),
            outcomes.len() - failed,
            failed
        )?;
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

fn import(a: ImportArgs) -> Result<u8> {
    let bytes =
        std::fs::read(&a.settings).with_context(|| format!("reading {}", a.settings.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not JSON", a.settings.display()))?;
    let dir = a.settings.parent().map(Path::to_path_buf);
    let imported = airlock_policy::claude::import(&v, dir.as_deref())
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.settings.display()))?;
    let mut text = format!(
        "# imported by `airlock policy import claude {}`\n",
        a.settings.display()
    );
    for (entry, why) in &imported.skipped {
        text.push_str(&format!("# not imported: {entry}: {why}\n"));
    }
    text.push_str(&airlock_policy::claude::to_toml(&imported.policy).map_err(anyhow::Error::msg)?);
    // what we write must load as a user layer
    Layer::from_str(LayerKind::User, "<imported>", &text, dir.as_deref())
        .context("the imported policy does not load (please report this)")?;
    match &a.out {
        Some(path) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .with_context(|| format!("creating {} (it must not exist)", path.display()))?;
            f.write_all(text.as_bytes())?;
            eprintln!(
                "airlock: wrote {} ({} rules, {} tools, {} entries not imported)",
                path.display(),
                imported.policy.rules.len(),
                imported.policy.tools.len(),
                imported.skipped.len()
            );
        }
        None => print!("{text}"),
    }
    for (entry, why) in &imported.skipped {
        eprintln!("airlock: not imported: {entry}: {why}");
    }
    Ok(0)
}
