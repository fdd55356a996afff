//! WASI preview 1 error numbers (`wasi_snapshot_preview1` `errno`), and the translation of the
//! host's Linux error numbers into them.

/// A WASI errno, as the guest receives it.
pub type Errno = u16;

pub const SUCCESS: Errno = 0;
pub const ACCES: Errno = 2;
pub const AGAIN: Errno = 6;
pub const BADF: Errno = 8;
pub const EXIST: Errno = 20;
pub const FAULT: Errno = 21;
pub const FBIG: Errno = 22;
pub const INVAL: Errno = 28;
pub const IO: Errno = 29;
pub const ISDIR: Errno = 31;
pub const LOOP: Errno = 32;
pub const MFILE: Errno = 33;
pub const NAMETOOLONG: Errno = 37;
pub const NOENT: Errno = 44;
pub const NOSPC: Errno = 51;
pub const NOSYS: Errno = 52;
pub const NOTDIR: Errno = 54;
pub const NOTEMPTY: Errno = 55;
pub const NOTSUP: Errno = 58;
pub const OVERFLOW: Errno = 61;
pub const PERM: Errno = 63;
pub const ROFS: Errno = 69;
pub const SPIPE: Errno = 70;
pub const NOTCAPABLE: Errno = 76;

/// The WASI errno for a host I/O error. `EXDEV` is what `openat2(RESOLVE_BENEATH)` answers for
/// a path that would leave its directory: to the guest that is "not capable".
pub fn of_io(e: &std::io::Error) -> Errno {
    of_raw(e.raw_os_error().unwrap_or(0))
}

/// The WASI errno for a raw Linux errno.
pub fn of_raw(raw: i32) -> Errno {
    match raw {
        1 => PERM,
        2 => NOENT,
        11 => AGAIN,
        13 => ACCES,
        17 => EXIST,
        18 => NOTCAPABLE,
        20 => NOTDIR,
        21 => ISDIR,
        22 => INVAL,
        24 => MFILE,
        27 => FBIG,
        28 => NOSPC,
        29 => SPIPE,
        30 => ROFS,
        36 => NAMETOOLONG,
        38 => NOSYS,
        39 => NOTEMPTY,
        40 => LOOP,
        75 => OVERFLOW,
        _ => IO,
    }
}
