//! Loading a module: the size cap, validation by the interpreter, and a check of its imports
//! and entry point, so that a module airlock will not run is refused with a clear error
//! before any of its code runs.

use wasmi::{CompilationMode, Config, Engine, ExternType, Module, ValType};

use crate::wasi::{MODULE, PREVIEW1};
use crate::{Limits, WasmError};

/// A validated module and the engine it was compiled for.
pub struct Loaded {
    pub(crate) engine: Engine,
    pub(crate) module: Module,
}

/// The interpreter's configuration for every tool: fuel metering on, functions compiled when
/// the module loads (so no compilation happens, and spends fuel, in the middle of a run), and
/// no start section (its code would run during instantiation, outside the fuel slices that
/// let the wall clock be checked).
fn config() -> Config {
    let mut c = Config::default();
    c.consume_fuel(true)
        .compilation_mode(CompilationMode::Eager)
        .allow_start_fn(false);
    c
}

/// Loads `bytes` as a module: refused if larger than the limit, malformed, invalid, or
/// importing anything but WASI preview 1 functions.
pub fn load(bytes: &[u8], limits: &Limits) -> Result<Loaded, WasmError> {
    if bytes.len() > limits.module_bytes {
        return Err(WasmError::InvalidModule(format!(
            "the module is {} bytes, over the limit of {} bytes",
            bytes.len(),
            limits.module_bytes
        )));
    }
    if !bytes.starts_with(b"\0asm") {
        return Err(WasmError::InvalidModule(
            "the file does not start with the WebAssembly magic number (\\0asm): not a binary module"
                .into(),
        ));
    }
    let engine = Engine::new(&config());
    let module = Module::new(&engine, bytes).map_err(|e| {
        let text = e.to_string();
        if text.contains("start") {
            WasmError::InvalidModule(format!(
                "{text} (airlock runs no start section: export `_start` or a function to invoke)"
            ))
        } else {
            WasmError::InvalidModule(text)
        }
    })?;
    check_imports(&module)?;
    Ok(Loaded { engine, module })
}

fn check_imports(module: &Module) -> Result<(), WasmError> {
    for import in module.imports() {
        let (m, name) = (import.module(), import.name());
        let what = match import.ty() {
            ExternType::Func(_) => "function",
            ExternType::Memory(_) => "memory",
            ExternType::Table(_) => "table",
            ExternType::Global(_) => "global",
        };
        if m == MODULE && what == "function" && PREVIEW1.contains(&name) {
            continue;
        }
        let hint = if m == MODULE {
            format!("{name} is not a WASI preview 1 function")
        } else {
            format!("airlock provides only the {MODULE} functions")
        };
        return Err(WasmError::Import(format!(
            "the module imports the {what} {m}.{name}, which airlock does not provide: {hint}"
        )));
    }
    Ok(())
}

/// Where a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// `_start`, a WASI command's entry point.
    Start,
    /// A named export, called with the given parameters (decimal text, parsed by type).
    Export { name: String, params: Vec<String> },
}

impl Loaded {
    /// The entry's parameters as values, checked against its type before anything runs.
    pub(crate) fn entry_params(
        &self,
        entry: &Entry,
    ) -> Result<(String, Vec<wasmi::Val>, usize), WasmError> {
        let (name, given): (&str, &[String]) = match entry {
            Entry::Start => ("_start", &[]),
            Entry::Export { name, params } => (name, params),
        };
        let Some(ExternType::Func(ty)) = self.module.get_export(name) else {
            return Err(WasmError::Entry(match entry {
                Entry::Start => "the module exports no `_start` function (not a WASI command): name an export to invoke".into(),
                Entry::Export { .. } => format!("the module exports no function named {name:?}"),
            }));
        };
        if ty.params().len() != given.len() {
            return Err(WasmError::Entry(format!(
                "{name} takes {} parameters ({}), {} given",
                ty.params().len(),
                names(ty.params()),
                given.len()
            )));
        }
        let mut vals = Vec::with_capacity(given.len());
        for (t, s) in ty.params().iter().zip(given) {
            vals.push(parse(*t, s).ok_or_else(|| {
                WasmError::Entry(format!(
                    "{name}: {s:?} is not a value of type {}",
                    ty_name(*t)
                ))
            })?);
        }
        Ok((name.to_string(), vals, ty.results().len()))
    }
}

fn parse(t: ValType, s: &str) -> Option<wasmi::Val> {
    use wasmi::Val;
    Some(match t {
        // both the signed and the unsigned reading of the bits
        ValType::I32 => Val::I32(
            s.parse::<i32>()
                .ok()
                .or_else(|| s.parse::<u32>().ok().map(|u| u as i32))?,
        ),
        ValType::I64 => Val::I64(
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<u64>().ok().map(|u| u as i64))?,
        ),
        ValType::F32 => Val::F32(wasmi::F32::from(s.parse::<f32>().ok()?)),
        ValType::F64 => Val::F64(wasmi::F64::from(s.parse::<f64>().ok()?)),
        _ => return None,
    })
}

fn ty_name(t: ValType) -> &'static str {
    match t {
        ValType::I32 => "i32",
        ValType::I64 => "i64",
        ValType::F32 => "f32",
        ValType::F64 => "f64",
        ValType::V128 => "v128",
        ValType::FuncRef => "funcref",
        ValType::ExternRef => "externref",
    }
}

fn names(ts: &[ValType]) -> String {
    ts.iter()
        .map(|t| ty_name(*t))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A result value as text.
pub(crate) fn show(v: &wasmi::Val) -> String {
    use wasmi::Val;
    match v {
        Val::I32(x) => x.to_string(),
        Val::I64(x) => x.to_string(),
        Val::F32(x) => f32::from(*x).to_string(),
        Val::F64(x) => f64::from(*x).to_string(),
        _ => "<reference>".into(),
    }
}
