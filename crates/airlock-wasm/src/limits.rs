//! The limits one run is held to.

use std::time::Duration;

use crate::WasmError;

const MIB: u64 = 1024 * 1024;
/// The longest time limit (a deadline must be representable).
const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 86_400);

/// What a run may spend. Every limit is enforced by airlock, not asked of the module: fuel
/// and memory by the interpreter, the wall clock between fuel slices and in every WASI call,
/// output and file writes in the WASI functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Fuel: roughly one unit per executed instruction, plus the cost of bulk memory and
    /// table operations and of instantiation.
    pub fuel: u64,
    /// The largest linear memory, in bytes (a `memory.grow` past it traps).
    pub memory_bytes: u64,
    /// The most elements of any table.
    pub table_elements: u32,
    /// The wall-clock limit of the whole run, loading included.
    pub timeout: Duration,
    /// The most bytes written to standard output and error together.
    pub output_bytes: usize,
    /// The most bytes written to files over the run.
    pub file_write_bytes: u64,
    /// The largest module file accepted.
    pub module_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            fuel: 10_000_000_000,
            memory_bytes: 64 * MIB,
            table_elements: 100_000,
            timeout: Duration::from_secs(10),
            output_bytes: MIB as usize,
            file_write_bytes: 64 * MIB,
            module_bytes: 32 * MIB as usize,
        }
    }
}

impl Limits {
    /// Refuses limits that cannot run anything or would not limit.
    pub fn check(&self) -> Result<(), WasmError> {
        if self.fuel == 0 {
            return Err(WasmError::Limits(
                "the fuel limit must be above zero".into(),
            ));
        }
        if self.memory_bytes == 0 || usize::try_from(self.memory_bytes).is_err() {
            return Err(WasmError::Limits(format!(
                "the memory limit of {} bytes is not usable",
                self.memory_bytes
            )));
        }
        if self.timeout.is_zero() || self.timeout > MAX_TIMEOUT {
            return Err(WasmError::Limits(format!(
                "the time limit must be above zero and at most {} days",
                MAX_TIMEOUT.as_secs() / 86_400
            )));
        }
        if self.module_bytes == 0 {
            return Err(WasmError::Limits(
                "the module size limit must be above zero".into(),
            ));
        }
        Ok(())
    }
}
