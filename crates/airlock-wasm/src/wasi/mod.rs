//! A minimal WASI preview 1 (`wasi_snapshot_preview1`), written for airlock: arguments, an
//! environment that is empty unless given, clocks, random bytes, standard streams (input from
//! a buffer, output captured or passed through under one cap), `proc_exit`, and files only
//! under preopened directories (read-only unless the run was granted a write there). Every
//! other preview 1 function answers `ENOSYS`; nothing outside preview 1 is provided.

pub mod ctx;
pub mod errno;
pub mod fds;
mod mem;

use wasmi::{Caller, Extern, Linker, Module, Val};

use crate::WasmError;
use crate::run::Host;
use ctx::{Fail, Stop, WasiCtx};
use errno::Errno;

/// The import module name of WASI preview 1.
pub const MODULE: &str = "wasi_snapshot_preview1";

/// Every function of WASI preview 1. An import of one of these that airlock does not
/// implement links to a function answering `ENOSYS`; any other import is refused.
pub const PREVIEW1: &[&str] = &[
    "args_get",
    "args_sizes_get",
    "environ_get",
    "environ_sizes_get",
    "clock_res_get",
    "clock_time_get",
    "fd_advise",
    "fd_allocate",
    "fd_close",
    "fd_datasync",
    "fd_fdstat_get",
    "fd_fdstat_set_flags",
    "fd_fdstat_set_rights",
    "fd_filestat_get",
    "fd_filestat_set_size",
    "fd_filestat_set_times",
    "fd_pread",
    "fd_prestat_get",
    "fd_prestat_dir_name",
    "fd_pwrite",
    "fd_read",
    "fd_readdir",
    "fd_renumber",
    "fd_seek",
    "fd_sync",
    "fd_tell",
    "fd_write",
    "path_create_directory",
    "path_filestat_get",
    "path_filestat_set_times",
    "path_link",
    "path_open",
    "path_readlink",
    "path_remove_directory",
    "path_rename",
    "path_symlink",
    "path_unlink_file",
    "poll_oneoff",
    "proc_exit",
    "proc_raise",
    "sched_yield",
    "random_get",
    "sock_accept",
    "sock_recv",
    "sock_send",
    "sock_shutdown",
];

/// Runs a WASI function body with the guest's memory and the context: its errno becomes the
/// return value, a stop becomes a trap.
fn with_mem<F>(caller: &mut Caller<'_, Host>, f: F) -> Result<i32, wasmi::Error>
where
    F: FnOnce(&mut [u8], &mut WasiCtx) -> Result<(), Fail>,
{
    let Some(memory) = caller.get_export("memory").and_then(Extern::into_memory) else {
        return Err(wasmi::Error::host(Stop::NoMemory));
    };
    let (mem, host) = memory.data_and_store_mut(caller);
    let ctx = &mut host.wasi;
    let r = ctx.check_clock().and_then(|()| f(mem, ctx));
    answer(r)
}

fn answer(r: Result<(), Fail>) -> Result<i32, wasmi::Error> {
    match r {
        Ok(()) => Ok(i32::from(errno::SUCCESS)),
        Err(Fail::Errno(e)) => Ok(i32::from(e)),
        Err(Fail::Stop(s)) => Err(wasmi::Error::host(s)),
    }
}

/// Sizes as the guest sees them: a count and the bytes of NUL-terminated strings.
fn sizes(items: &[Vec<u8>]) -> Result<(u32, u32), Errno> {
    let count = u32::try_from(items.len()).map_err(|_| errno::OVERFLOW)?;
    let bytes: usize = items.iter().map(|s| s.len() + 1).sum();
    Ok((count, u32::try_from(bytes).map_err(|_| errno::OVERFLOW)?))
}

/// Adds airlock's WASI functions to `linker`, and an `ENOSYS` function for every other
/// preview 1 function `module` imports.
pub fn link(linker: &mut Linker<Host>, module: &Module) -> Result<(), WasmError> {
    define(linker).map_err(|e| WasmError::Internal(format!("defining WASI: {e}")))?;
    for import in module.imports() {
        if import.module() != MODULE {
            continue;
        }
        let name = import.name();
        if IMPLEMENTED.contains(&name) {
            continue;
        }
        let Some(ty) = import.ty().func() else {
            continue;
        };
        if ty.results() != [wasmi::ValType::I32] {
            return Err(WasmError::Import(format!(
                "the module imports {MODULE}.{name} with a signature WASI preview 1 does not have"
            )));
        }
        linker
            .func_new(MODULE, name, ty.clone(), |_, _, out: &mut [Val]| {
                out[0] = Val::I32(i32::from(errno::NOSYS));
                Ok(())
            })
            .map_err(|e| WasmError::Internal(format!("defining {MODULE}.{name}: {e}")))?;
    }
    Ok(())
}

/// The preview 1 functions with a real body here.
const IMPLEMENTED: &[&str] = &[
    "args_get",
    "args_sizes_get",
    "environ_get",
    "environ_sizes_get",
    "clock_res_get",
    "clock_time_get",
    "random_get",
    "proc_exit",
    "sched_yield",
    "fd_write",
    "fd_read",
    "fd_close",
    "fd_seek",
    "fd_tell",
    "fd_fdstat_get",
    "fd_filestat_get",
    "fd_prestat_get",
    "fd_prestat_dir_name",
    "path_open",
    "path_filestat_get",
];

type C<'a> = Caller<'a, Host>;
type R = Result<i32, wasmi::Error>;

fn define(l: &mut Linker<Host>) -> Result<(), wasmi::errors::LinkerError> {
    l.func_wrap(
        MODULE,
        "args_sizes_get",
        |mut c: C, argc: i32, size: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let (n, bytes) = sizes(&ctx.args)?;
                mem::write_u32(mem, argc as u32, n)?;
                mem::write_u32(mem, size as u32, bytes)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(MODULE, "args_get", |mut c: C, ptrs: i32, buf: i32| -> R {
        with_mem(&mut c, |mem, ctx| {
            mem::write_strings(mem, ptrs as u32, buf as u32, &ctx.args)?;
            Ok(())
        })
    })?;
    l.func_wrap(
        MODULE,
        "environ_sizes_get",
        |mut c: C, n: i32, size: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let (count, bytes) = sizes(&ctx.env)?;
                mem::write_u32(mem, n as u32, count)?;
                mem::write_u32(mem, size as u32, bytes)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "environ_get",
        |mut c: C, ptrs: i32, buf: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                mem::write_strings(mem, ptrs as u32, buf as u32, &ctx.env)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "clock_res_get",
        |mut c: C, id: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                ctx.clock(id as u32)?;
                mem::write_u64(mem, out as u32, 1_000)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "clock_time_get",
        |mut c: C, id: i32, _precision: i64, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let t = ctx.clock(id as u32)?;
                mem::write_u64(mem, out as u32, t)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(MODULE, "random_get", |mut c: C, buf: i32, len: i32| -> R {
        with_mem(&mut c, |mem, _| {
            let out = mem::slice_mut(mem, buf as u32, len as u32)?;
            getrandom::fill(out).map_err(|_| errno::IO)?;
            Ok(())
        })
    })?;
    l.func_wrap(
        MODULE,
        "proc_exit",
        |_: C, code: i32| -> Result<(), wasmi::Error> { Err(wasmi::Error::i32_exit(code)) },
    )?;
    l.func_wrap(MODULE, "sched_yield", |_: C| -> R { Ok(0) })?;
    l.func_wrap(
        MODULE,
        "fd_write",
        |mut c: C, fd: i32, iovs: i32, n: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                fd_write(mem, ctx, fd as u32, iovs as u32, n as u32, out as u32)
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "fd_read",
        |mut c: C, fd: i32, iovs: i32, n: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                fd_read(mem, ctx, fd as u32, iovs as u32, n as u32, out as u32)
            })
        },
    )?;
    l.func_wrap(MODULE, "fd_close", |mut c: C, fd: i32| -> R {
        with_mem(&mut c, |_, ctx| Ok(ctx.fds.close(fd as u32)?))
    })?;
    l.func_wrap(
        MODULE,
        "fd_seek",
        |mut c: C, fd: i32, offset: i64, whence: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let whence = u8::try_from(whence).map_err(|_| errno::INVAL)?;
                let at = ctx.fds.seek(fd as u32, offset, whence)?;
                mem::write_u64(mem, out as u32, at)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(MODULE, "fd_tell", |mut c: C, fd: i32, out: i32| -> R {
        with_mem(&mut c, |mem, ctx| {
            let at = ctx.fds.seek(fd as u32, 0, 1)?;
            mem::write_u64(mem, out as u32, at)?;
            Ok(())
        })
    })?;
    l.func_wrap(
        MODULE,
        "fd_fdstat_get",
        |mut c: C, fd: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let s = ctx.fds.fdstat(fd as u32)?;
                let out = out as u32;
                mem::slice_mut(mem, out, 24)?.fill(0);
                mem::write_u8(mem, out, s.filetype)?;
                mem::write_u16(mem, out + 2, s.flags)?;
                mem::write_u64(mem, out + 8, s.rights)?;
                mem::write_u64(mem, out + 16, s.inheriting)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "fd_filestat_get",
        |mut c: C, fd: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let s = ctx.fds.filestat(fd as u32)?;
                write_filestat(mem, out as u32, &s)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "fd_prestat_get",
        |mut c: C, fd: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let len = u32::try_from(ctx.fds.prestat(fd as u32)?.len())
                    .map_err(|_| errno::OVERFLOW)?;
                let out = out as u32;
                mem::slice_mut(mem, out, 8)?.fill(0);
                mem::write_u32(mem, out + 4, len)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "fd_prestat_dir_name",
        |mut c: C, fd: i32, buf: i32, len: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let name = ctx.fds.prestat(fd as u32)?.as_bytes().to_vec();
                if name.len() > len as u32 as usize {
                    return Err(errno::NAMETOOLONG.into());
                }
                mem::write_bytes(mem, buf as u32, &name)?;
                Ok(())
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "path_open",
        |mut c: C,
         dirfd: i32,
         lookup: i32,
         path: i32,
         path_len: i32,
         oflags: i32,
         rights: i64,
         _inheriting: i64,
         fdflags: i32,
         out: i32|
         -> R {
            with_mem(&mut c, |mem, ctx| {
                let p = mem::slice(mem, path as u32, path_len as u32)?.to_vec();
                let opened = ctx.fds.open(
                    dirfd as u32,
                    lookup as u32,
                    &p,
                    oflags as u16,
                    rights as u64,
                    fdflags as u16,
                );
                match opened {
                    Ok(fd) => {
                        mem::write_u32(mem, out as u32, fd)?;
                        Ok(())
                    }
                    Err(d) => {
                        if !d.what.is_empty() {
                            ctx.deny(d.what);
                        }
                        Err(d.errno.into())
                    }
                }
            })
        },
    )?;
    l.func_wrap(
        MODULE,
        "path_filestat_get",
        |mut c: C, dirfd: i32, lookup: i32, path: i32, path_len: i32, out: i32| -> R {
            with_mem(&mut c, |mem, ctx| {
                let p = mem::slice(mem, path as u32, path_len as u32)?.to_vec();
                match ctx.fds.path_stat(dirfd as u32, lookup as u32, &p) {
                    Ok(s) => {
                        write_filestat(mem, out as u32, &s)?;
                        Ok(())
                    }
                    Err(d) => {
                        if !d.what.is_empty() {
                            ctx.deny(d.what);
                        }
                        Err(d.errno.into())
                    }
                }
            })
        },
    )?;
    Ok(())
}

fn write_filestat(mem: &mut [u8], out: u32, s: &fds::Filestat) -> Result<(), Errno> {
    mem::slice_mut(mem, out, 64)?.fill(0);
    mem::write_u64(mem, out, s.dev)?;
    mem::write_u64(mem, out + 8, s.ino)?;
    mem::write_u8(mem, out + 16, s.filetype)?;
    mem::write_u64(mem, out + 24, s.nlink)?;
    mem::write_u64(mem, out + 32, s.size)?;
    mem::write_u64(mem, out + 40, s.atim)?;
    mem::write_u64(mem, out + 48, s.mtim)?;
    mem::write_u64(mem, out + 56, s.ctim)
}

fn fd_write(
    mem: &mut [u8],
    ctx: &mut WasiCtx,
    fd: u32,
    iovs: u32,
    n: u32,
    out: u32,
) -> Result<(), Fail> {
    let list = mem::iovecs(mem, iovs, n)?;
    let mut written: u64 = 0;
    for (buf, len) in list {
        let bytes = mem::slice(mem, buf, len)?;
        match ctx.fds.get(fd)? {
            fds::Fd::Stdout => ctx.emit(false, bytes)?,
            fds::Fd::Stderr => ctx.emit(true, bytes)?,
            fds::Fd::File(_) => {
                let len = bytes.len() as u64;
                if len > ctx.file_write_left {
                    return Err(errno::FBIG.into());
                }
                ctx.fds.write_file(fd, bytes)?;
                ctx.file_write_left -= len;
            }
            fds::Fd::Dir(_) => return Err(errno::ISDIR.into()),
            fds::Fd::Stdin => return Err(errno::BADF.into()),
        }
        written += u64::from(len);
    }
    mem::write_u32(
        mem,
        out,
        u32::try_from(written).map_err(|_| errno::OVERFLOW)?,
    )?;
    Ok(())
}

fn fd_read(
    mem: &mut [u8],
    ctx: &mut WasiCtx,
    fd: u32,
    iovs: u32,
    n: u32,
    out: u32,
) -> Result<(), Fail> {
    let list = mem::iovecs(mem, iovs, n)?;
    let mut read: u64 = 0;
    for (buf, len) in list {
        let into = mem::slice_mut(mem, buf, len)?;
        let got = match ctx.fds.get(fd)? {
            fds::Fd::Stdin => ctx.read_stdin(into),
            fds::Fd::File(_) => ctx.fds.read_file(fd, into)?,
            fds::Fd::Dir(_) => return Err(errno::ISDIR.into()),
            fds::Fd::Stdout | fds::Fd::Stderr => return Err(errno::BADF.into()),
        };
        read += got as u64;
        if got < len as usize {
            break;
        }
    }
    mem::write_u32(mem, out, u32::try_from(read).map_err(|_| errno::OVERFLOW)?)?;
    Ok(())
}
