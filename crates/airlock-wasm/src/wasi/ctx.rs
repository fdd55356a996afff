//! The state one run's WASI functions share: arguments and environment, standard input as a
//! buffer, standard output and error with one byte cap, the file-descriptor table, the
//! wall-clock deadline and what the guest was refused.

use std::io::Write;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::errno::{self, Errno};
use super::fds::FdTable;
use crate::Output;

/// Why a WASI function stops the guest instead of answering it.
#[derive(Debug)]
pub enum Stop {
    /// The wall-clock deadline passed during a host call.
    Timeout,
    /// Standard output and error together reached their cap.
    OutputLimit(usize),
    /// The guest called a WASI function that needs its memory but exports none.
    NoMemory,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Timeout => f.write_str("the wall-clock limit passed during a WASI call"),
            Stop::OutputLimit(cap) => write!(
                f,
                "the module wrote more than {cap} bytes to standard output and error"
            ),
            Stop::NoMemory => f.write_str(
                "the module called a WASI function but exports no memory named `memory`",
            ),
        }
    }
}

impl wasmi::errors::HostError for Stop {}

/// What a WASI function's body ends with: an errno for the guest, or a stop.
#[derive(Debug)]
pub enum Fail {
    Errno(Errno),
    Stop(Stop),
}

impl From<Errno> for Fail {
    fn from(e: Errno) -> Fail {
        Fail::Errno(e)
    }
}

/// The most refusals kept for the report (a guest probing in a loop would otherwise fill
/// memory with them); the count goes on.
const MAX_DENIALS: usize = 32;

/// One of the two output streams.
pub struct Sink {
    mode: Output,
    stderr: bool,
    pub captured: Vec<u8>,
}

impl Sink {
    pub fn new(mode: Output, stderr: bool) -> Sink {
        Sink {
            mode,
            stderr,
            captured: Vec::new(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Errno> {
        match self.mode {
            Output::Capture => {
                self.captured.extend_from_slice(bytes);
                Ok(())
            }
            Output::Inherit if self.stderr => std::io::stderr()
                .write_all(bytes)
                .map_err(|e| errno::of_io(&e)),
            Output::Inherit => std::io::stdout()
                .write_all(bytes)
                .map_err(|e| errno::of_io(&e)),
        }
    }

    pub fn flush(&mut self) {
        if matches!(self.mode, Output::Inherit) {
            let _ = if self.stderr {
                std::io::stderr().flush()
            } else {
                std::io::stdout().flush()
            };
        }
    }
}

pub struct WasiCtx {
    pub args: Vec<Vec<u8>>,
    pub env: Vec<Vec<u8>>,
    pub stdin: Vec<u8>,
    pub stdin_pos: usize,
    pub stdout: Sink,
    pub stderr: Sink,
    output_cap: usize,
    output_left: usize,
    pub fds: FdTable,
    pub started: Instant,
    pub deadline: Instant,
    /// Bytes the guest may still write to files, over the whole run.
    pub file_write_left: u64,
    pub denials: Vec<String>,
    pub denial_count: usize,
}

impl WasiCtx {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        args: Vec<Vec<u8>>,
        env: Vec<Vec<u8>>,
        stdin: Vec<u8>,
        stdout: Output,
        stderr: Output,
        output_cap: usize,
        fds: FdTable,
        started: Instant,
        deadline: Instant,
        file_write_left: u64,
    ) -> WasiCtx {
        WasiCtx {
            args,
            env,
            stdin,
            stdin_pos: 0,
            stdout: Sink::new(stdout, false),
            stderr: Sink::new(stderr, true),
            output_cap,
            output_left: output_cap,
            fds,
            started,
            deadline,
            file_write_left,
            denials: Vec::new(),
            denial_count: 0,
        }
    }

    /// Notes a refused capability (a path outside the directories, a write without a grant).
    pub fn deny(&mut self, what: String) {
        self.denial_count += 1;
        if self.denials.len() < MAX_DENIALS {
            self.denials.push(what);
        }
    }

    /// Stops the guest once the wall clock has passed its deadline: host calls are where a
    /// guest can spend time without spending much fuel.
    pub fn check_clock(&self) -> Result<(), Fail> {
        if Instant::now() >= self.deadline {
            return Err(Fail::Stop(Stop::Timeout));
        }
        Ok(())
    }

    /// Writes to standard output (`err` false) or error, within the shared cap: what fits is
    /// written, and then the guest is stopped.
    pub fn emit(&mut self, err: bool, bytes: &[u8]) -> Result<(), Fail> {
        let n = bytes.len().min(self.output_left);
        let sink = if err {
            &mut self.stderr
        } else {
            &mut self.stdout
        };
        sink.write(&bytes[..n])?;
        self.output_left -= n;
        if n < bytes.len() {
            return Err(Fail::Stop(Stop::OutputLimit(self.output_cap)));
        }
        Ok(())
    }

    pub fn read_stdin(&mut self, into: &mut [u8]) -> usize {
        let rest = self.stdin.get(self.stdin_pos..).unwrap_or_default();
        let n = rest.len().min(into.len());
        into[..n].copy_from_slice(&rest[..n]);
        self.stdin_pos += n;
        n
    }

    /// `clock_time_get`: the real-time clock as the host has it; the monotonic and CPU clocks
    /// count from the run's start.
    pub fn clock(&self, id: u32) -> Result<u64, Errno> {
        match id {
            0 => Ok(SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
                .unwrap_or(0)),
            1..=3 => Ok(u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)),
            _ => Err(errno::INVAL),
        }
    }
}
