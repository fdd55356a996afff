//! A directory of WASM tools: each tool is `NAME.wasm` beside `NAME.toml`, which holds its
//! description, its JSON input schema, its limits and the directories it may read. Every
//! module is loaded and validated when the toolbox is, so a broken tool fails at start-up,
//! not at its first call.
//!
//! ```toml
//! description = "Counts the words of the text it is given."
//! args = ["--json"]                # after argv[0] (the tool's name)
//! dirs = ["data"]                  # read-only; relative to the tools directory
//! [input_schema]
//! type = "object"
//! properties.text = { type = "string" }
//! [limits]
//! fuel = 100_000_000
//! memory_mib = 16
//! timeout_secs = 2.0
//! output_kib = 256
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::{Entry, Invocation, Limits, Loaded, Outcome, Output, Preopen, WasmError, load};

#[derive(Debug, thiserror::Error)]
pub enum ToolboxError {
    #[error("{path}: {message}")]
    Bad { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Module { path: PathBuf, source: WasmError },
    #[error("reading {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    #[serde(default)]
    input_schema: Option<toml::Table>,
    #[serde(default)]
    limits: SpecLimits,
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecLimits {
    fuel: Option<u64>,
    memory_mib: Option<u64>,
    timeout_secs: Option<f64>,
    output_kib: Option<u64>,
}

/// One tool, loaded.
pub struct Tool {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
    pub limits: Limits,
    /// The directories it may read (host paths, resolved), with the name the module sees.
    pub dirs: Vec<Preopen>,
    args: Vec<String>,
    module: Loaded,
}

impl Tool {
    /// Runs the tool: its JSON arguments on standard input, its output captured.
    pub fn call(&self, arguments: &Value) -> Result<Outcome, WasmError> {
        let started = Instant::now();
        let mut args = vec![self.name.clone()];
        args.extend(self.args.iter().cloned());
        let inv = Invocation {
            args,
            env: Vec::new(),
            stdin: arguments.to_string().into_bytes(),
            preopens: self.dirs.clone(),
            entry: Entry::Start,
            stdout: Output::Capture,
            stderr: Output::Capture,
        };
        self.module.run(inv, &self.limits, started)
    }
}

/// The tools of one directory, by name.
pub struct Toolbox {
    pub tools: Vec<Tool>,
}

impl Toolbox {
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Loads every `NAME.toml` of `dir` with its `NAME.wasm`; `base` gives the limits a tool
    /// does not set.
    pub fn load(dir: &Path, base: &Limits) -> Result<Toolbox, ToolboxError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ToolboxError::Io { path, source }
        };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "toml") {
                names.push(path);
            }
        }
        names.sort();
        let mut tools = Vec::new();
        for spec_path in names {
            tools.push(load_tool(dir, &spec_path, base)?);
        }
        if tools.is_empty() {
            return Err(ToolboxError::Bad {
                path: dir.to_path_buf(),
                message: "no tools here: each tool is NAME.wasm with NAME.toml beside it".into(),
            });
        }
        Ok(Toolbox { tools })
    }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn load_tool(dir: &Path, spec_path: &Path, base: &Limits) -> Result<Tool, ToolboxError> {
    let bad = |message: String| ToolboxError::Bad {
        path: spec_path.to_path_buf(),
        message,
    };
    let name = spec_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if !valid_name(&name) {
        return Err(bad(format!(
            "{name:?} is not a tool name: 1 to 64 ASCII letters, digits, `_` or `-`"
        )));
    }
    let text = std::fs::read_to_string(spec_path).map_err(|source| ToolboxError::Io {
        path: spec_path.to_path_buf(),
        source,
    })?;
    let spec: Spec = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if spec.description.trim().is_empty() {
        return Err(bad(
            "the description is empty: say what the tool does".into()
        ));
    }
    let input_schema = match spec.input_schema {
        None => serde_json::json!({"type": "object"}),
        Some(t) => serde_json::to_value(t).map_err(|e| bad(format!("input_schema: {e}")))?,
    };
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(bad(
            "input_schema must describe an object (`type = \"object\"`): tool arguments are a JSON object".into(),
        ));
    }
    let mut limits = base.clone();
    if let Some(f) = spec.limits.fuel {
        limits.fuel = f;
    }
    if let Some(m) = spec.limits.memory_mib {
        limits.memory_bytes = m.saturating_mul(1024 * 1024);
    }
    if let Some(t) = spec.limits.timeout_secs {
        if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
            return Err(bad(format!(
                "limits.timeout_secs = {t}: a number of seconds above 0"
            )));
        }
        limits.timeout = Duration::from_secs_f64(t);
    }
    if let Some(k) = spec.limits.output_kib {
        limits.output_bytes = usize::try_from(k.saturating_mul(1024)).unwrap_or(usize::MAX);
    }
    limits.check().map_err(|e| bad(format!("limits: {e}")))?;
    let mut dirs = Vec::new();
    for d in &spec.dirs {
        let host = if Path::new(d).is_absolute() {
            PathBuf::from(d)
        } else {
            dir.join(d)
        };
        let host = std::fs::canonicalize(&host).map_err(|e| bad(format!("dirs: {d}: {e}")))?;
        if !host.is_dir() {
            return Err(bad(format!("dirs: {d} is not a directory")));
        }
        dirs.push(Preopen {
            host,
            guest: d.clone(),
            writable: false,
        });
    }
    let wasm_path = spec_path.with_extension("wasm");
    let bytes = std::fs::read(&wasm_path).map_err(|source| ToolboxError::Io {
        path: wasm_path.clone(),
        source,
    })?;
    let module = load(&bytes, &limits).map_err(|source| ToolboxError::Module {
        path: wasm_path.clone(),
        source,
    })?;
    // the entry point is checked now, not at the first call
    module
        .entry_params(&Entry::Start)
        .map_err(|source| ToolboxError::Module {
            path: wasm_path,
            source,
        })?;
    Ok(Tool {
        name,
        description: spec.description,
        input_schema,
        limits,
        dirs,
        args: spec.args,
        module,
    })
}
