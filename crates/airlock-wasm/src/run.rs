//! Running a loaded module: a store with a memory and table cap, WASI linked, and the entry
//! called in fuel slices. Between slices the wall clock is checked, which is how a module that
//! was given a lot of fuel is still stopped at its time limit; every WASI call checks it too.
//! Every way a run can end is an [`Ending`]: the module's exit code, or a stop with its reason
//! code.

use std::time::{Duration, Instant};

use airlock_core::ReasonCode;
use wasmi::errors::ErrorKind;
use wasmi::{Linker, ResumableCall, Store, StoreLimits, StoreLimitsBuilder, TrapCode, Val};

use crate::module::{Entry, Loaded, show};
use crate::wasi::ctx::{Stop, WasiCtx};
use crate::wasi::fds::{FdTable, Preopen};
use crate::{Limits, WasmError};

/// Fuel handed to the guest per slice. At the interpreter's speed (hundreds of millions of
/// instructions a second in a release build, tens in a debug one) a slice is a few
/// milliseconds, so the clock is looked at often enough; the check costs nanoseconds.
const SLICE: u64 = 1 << 20;

/// The store's data: the memory and table caps, and WASI's state.
pub struct Host {
    limits: StoreLimits,
    pub(crate) wasi: WasiCtx,
}

/// Where the guest's standard output and error go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Kept and returned in the [`Outcome`] (a tool's result).
    Capture,
    /// Written to this process's own stream as the guest writes.
    Inherit,
}

/// One run: what the guest is given.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// `argv`, the first being the program's name.
    pub args: Vec<String>,
    /// The environment (empty unless given).
    pub env: Vec<(String, String)>,
    /// Standard input, whole.
    pub stdin: Vec<u8>,
    /// The directories the guest may open paths under.
    pub preopens: Vec<Preopen>,
    pub entry: Entry,
    pub stdout: Output,
    pub stderr: Output,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The entry returned (0) or the guest called `proc_exit` with this code.
    Exited(i32),
    /// airlock stopped the guest, or it trapped.
    Stopped { reason: ReasonCode, message: String },
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub ending: Ending,
    /// What the guest wrote, where captured.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The entry's results (for an invoked export), as text.
    pub results: Vec<String>,
    pub fuel_used: u64,
    pub elapsed: Duration,
    /// Capabilities the guest asked for and was refused (the first few), and how many.
    pub denials: Vec<String>,
    pub denial_count: usize,
}

impl Loaded {
    /// Runs the module under `limits`; `started` is when the run began (its load counts
    /// against the wall-clock limit).
    pub fn run(
        &self,
        inv: Invocation,
        limits: &Limits,
        started: Instant,
    ) -> Result<Outcome, WasmError> {
        limits.check()?;
        let (entry, params, n_results) = self.entry_params(&inv.entry)?;
        let deadline = started
            .checked_add(limits.timeout)
            .ok_or_else(|| WasmError::Limits("the time limit is too far away".into()))?;
        let fds = FdTable::new(&inv.preopens).map_err(|(path, source)| WasmError::Dir {
            path: path.display().to_string(),
            source,
        })?;
        let pair = |(k, v): &(String, String)| format!("{k}={v}").into_bytes();
        let wasi = WasiCtx::new(
            inv.args.iter().map(|a| a.clone().into_bytes()).collect(),
            inv.env.iter().map(pair).collect(),
            inv.stdin,
            inv.stdout,
            inv.stderr,
            limits.output_bytes,
            fds,
            started,
            deadline,
            limits.file_write_bytes,
        );
        let memory = usize::try_from(limits.memory_bytes)
            .map_err(|_| WasmError::Limits("the memory limit does not fit this machine".into()))?;
        let store_limits = StoreLimitsBuilder::new()
            .memory_size(memory)
            .table_elements(limits.table_elements as usize)
            .instances(1)
            .memories(1)
            .tables(16)
            .trap_on_grow_failure(true)
            .build();
        let mut store = Store::new(
            &self.engine,
            Host {
                limits: store_limits,
                wasi,
            },
        );
        store.limiter(|h| &mut h.limits);
        let mut linker = Linker::<Host>::new(&self.engine);
        crate::wasi::link(&mut linker, &self.module)?;

        let mut meter = Meter {
            total: limits.fuel,
            left: limits.fuel,
        };
        let mut results = vec![Val::I32(0); n_results];
        // Instantiation runs no guest code (start sections are refused); it may spend fuel
        // on data segments, so it gets what is left.
        meter.hand_out(&mut store, limits.fuel);
        let ending = match linker.instantiate_and_start(&mut store, &self.module) {
            Err(e) => {
                meter.take_back(&mut store);
                instantiation_failed(&e)?
            }
            Ok(instance) => {
                meter.take_back(&mut store);
                match instance.get_func(&store, &entry) {
                    None => {
                        return Err(WasmError::Entry(format!(
                            "no function {entry:?} after instantiation"
                        )));
                    }
                    Some(func) => {
                        meter.hand_out(&mut store, SLICE);
                        let call = func.call_resumable(&mut store, &params, &mut results);
                        drive(call, &mut store, &mut meter, &mut results, deadline)
                    }
                }
            }
        };
        let fuel_used = meter.used(&store);
        let host = store.into_data();
        let mut wasi = host.wasi;
        wasi.stdout.flush();
        wasi.stderr.flush();
        let results = match ending {
            Ending::Exited(0) => results.iter().map(show).collect(),
            _ => Vec::new(),
        };
        Ok(Outcome {
            ending,
            stdout: std::mem::take(&mut wasi.stdout.captured),
            stderr: std::mem::take(&mut wasi.stderr.captured),
            results,
            fuel_used,
            elapsed: started.elapsed(),
            denials: wasi.denials,
            denial_count: wasi.denial_count,
        })
    }
}

/// The run's fuel: what has not been handed to the store yet.
struct Meter {
    total: u64,
    left: u64,
}

impl Meter {
    fn hand_out(&mut self, store: &mut Store<Host>, want: u64) {
        let give = want.min(self.left);
        // set_fuel fails only when fuel metering is off, and it is always on (module::config)
        if store.set_fuel(give).is_ok() {
            self.left -= give;
        }
    }

    /// Moves what the store still holds back into `left`.
    fn take_back(&mut self, store: &mut Store<Host>) {
        self.left += store.get_fuel().unwrap_or(0);
        let _ = store.set_fuel(0);
    }

    fn used(&self, store: &Store<Host>) -> u64 {
        self.total
            .saturating_sub(self.left)
            .saturating_sub(store.get_fuel().unwrap_or(0))
    }
}

/// Drives a resumable call to its end, a slice of fuel at a time.
fn drive(
    mut call: Result<ResumableCall, wasmi::Error>,
    store: &mut Store<Host>,
    meter: &mut Meter,
    results: &mut [Val],
    deadline: Instant,
) -> Ending {
    loop {
        match call {
            Ok(ResumableCall::Finished) => return Ending::Exited(0),
            Ok(ResumableCall::HostTrap(t)) => return classify(t.host_error()),
            Err(e) => return classify(&e),
            Ok(ResumableCall::OutOfFuel(out)) => {
                meter.take_back(store);
                let need = out.required_fuel().max(1);
                if meter.left < need {
                    return Ending::Stopped {
                        reason: ReasonCode::WasmOutOfFuel,
                        message: format!("the module used all its fuel ({})", meter.total),
                    };
                }
                if Instant::now() >= deadline {
                    return timeout();
                }
                meter.hand_out(store, SLICE.max(need));
                call = out.resume(&mut *store, results);
            }
        }
    }
}

fn timeout() -> Ending {
    Ending::Stopped {
        reason: ReasonCode::WasmTimeout,
        message: "the module ran past its wall-clock limit".into(),
    }
}

/// A failed instantiation: imports that do not link are refused like unknown ones, a start
/// function like an invalid module; memory or tables over the caps are the memory limit.
fn instantiation_failed(e: &wasmi::Error) -> Result<Ending, WasmError> {
    use wasmi::errors::InstantiationError as I;
    match e.kind() {
        ErrorKind::Linker(_)
        | ErrorKind::Instantiation(
            I::MismatchedNumberOfImports { .. }
            | I::ImportTypeMismatch { .. }
            | I::GlobalTypeMismatch { .. }
            | I::FuncTypeMismatch { .. }
            | I::TableTypeMismatch { .. }
            | I::MemoryTypeMismatch { .. },
        ) => Err(WasmError::Import(format!(
            "linking the module's imports: {e}"
        ))),
        ErrorKind::Instantiation(I::UnexpectedStartFn { .. }) => Err(WasmError::InvalidModule(
            format!("{e} (airlock runs no start section: export `_start` or a function to invoke)"),
        )),
        ErrorKind::Instantiation(
            I::FailedToInstantiateMemory(_)
            | I::FailedToInstantiateTable(_)
            | I::TooManyInstances
            | I::TooManyTables
            | I::TooManyMemories,
        ) => Ok(Ending::Stopped {
            reason: ReasonCode::WasmMemoryLimit,
            message: format!("the module's memory or tables exceed the limit: {e}"),
        }),
        _ => Ok(classify(e)),
    }
}

/// The ending an interpreter error stands for.
fn classify(e: &wasmi::Error) -> Ending {
    if let Some(code) = e.i32_exit_status() {
        return Ending::Exited(code);
    }
    if let Some(stop) = e.downcast_ref::<Stop>() {
        let reason = match stop {
            Stop::Timeout => return timeout(),
            Stop::OutputLimit(_) => ReasonCode::WasmOutputLimit,
            Stop::NoMemory => ReasonCode::WasmTrap,
        };
        return Ending::Stopped {
            reason,
            message: stop.to_string(),
        };
    }
    let (reason, message) = match e.as_trap_code() {
        Some(TrapCode::OutOfFuel) => (
            ReasonCode::WasmOutOfFuel,
            "the module used all its fuel".to_string(),
        ),
        Some(TrapCode::GrowthOperationLimited) => (
            ReasonCode::WasmMemoryLimit,
            "the module tried to grow its memory or a table past the limit".to_string(),
        ),
        Some(t) => (ReasonCode::WasmTrap, format!("trap: {t}")),
        None => match e.kind() {
            ErrorKind::Memory(_) | ErrorKind::Table(_) => (
                ReasonCode::WasmMemoryLimit,
                format!("the module's memory or tables exceed the limit: {e}"),
            ),
            ErrorKind::Fuel(_) => (ReasonCode::WasmOutOfFuel, format!("fuel: {e}")),
            _ => (ReasonCode::WasmTrap, e.to_string()),
        },
    };
    Ending::Stopped { reason, message }
}
