//! The guest's file descriptors: 0–2 are standard input, output and error, then one
//! descriptor per preopened directory, then what the guest opened. Every path is resolved by
//! the kernel with `openat2(RESOLVE_BENEATH)` relative to an open directory, so `..`, absolute
//! paths and symbolic links that point out of the directory fail (`EXDEV`, which the guest
//! sees as `ENOTCAPABLE`) however they are spelt, and a rename racing the open cannot help.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

use super::errno::{self, Errno};

/// The most descriptors a guest may hold at once.
const MAX_FDS: usize = 256;

// WASI rights bits that mean writing (`wasi_snapshot_preview1` `rights`).
const RIGHT_FD_WRITE: u64 = 1 << 6;
const RIGHT_FD_ALLOCATE: u64 = 1 << 8;
const RIGHT_FD_FILESTAT_SET_SIZE: u64 = 1 << 22;
/// Every preview 1 right (30 bits). Directories advertise all of them as inheritable so that
/// a guest's libc asks for what it means; `path_open` then refuses what is not granted, and
/// the refusal is reported, instead of a read-only descriptor failing later without a word.
pub const RIGHTS_ALL: u64 = (1 << 30) - 1;

// `oflags`, `fdflags`, `lookupflags`
const O_CREAT: u16 = 1;
const O_DIRECTORY: u16 = 2;
const O_EXCL: u16 = 4;
const O_TRUNC: u16 = 8;
const FD_APPEND: u16 = 1;
const LOOKUP_SYMLINK_FOLLOW: u32 = 1;

// `filetype`
pub const FILETYPE_UNKNOWN: u8 = 0;
pub const FILETYPE_CHARACTER_DEVICE: u8 = 2;
pub const FILETYPE_DIRECTORY: u8 = 3;
pub const FILETYPE_REGULAR_FILE: u8 = 4;

/// A directory the guest may open paths under.
pub struct DirFd {
    fd: OwnedFd,
    /// The name the guest sees for a preopened directory (`fd_prestat_dir_name`).
    preopen: Option<String>,
    writable: bool,
    /// How the directory is named in reports.
    shown: String,
}

pub struct FileFd {
    file: File,
    read: bool,
    write: bool,
    append: bool,
}

pub enum Fd {
    Stdin,
    Stdout,
    Stderr,
    Dir(DirFd),
    File(FileFd),
}

/// A directory to preopen: the host directory, the guest's name for it, and whether the
/// guest may create and write files in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    pub host: std::path::PathBuf,
    pub guest: String,
    pub writable: bool,
}

pub struct FdTable {
    fds: Vec<Option<Fd>>,
}

/// `fd_filestat_get`'s answer.
pub struct Filestat {
    pub dev: u64,
    pub ino: u64,
    pub filetype: u8,
    pub nlink: u64,
    pub size: u64,
    pub atim: u64,
    pub mtim: u64,
    pub ctim: u64,
}

/// `fd_fdstat_get`'s answer.
pub struct Fdstat {
    pub filetype: u8,
    pub flags: u16,
    pub rights: u64,
    pub inheriting: u64,
}

/// What the guest was refused, for the report, with the errno it gets.
pub struct Denied {
    pub errno: Errno,
    pub what: String,
}

impl FdTable {
    /// Standard streams and the preopened directories (opened now: a directory that cannot
    /// be opened is an error before the module runs).
    pub fn new(preopens: &[Preopen]) -> Result<FdTable, (std::path::PathBuf, std::io::Error)> {
        let mut fds = vec![Some(Fd::Stdin), Some(Fd::Stdout), Some(Fd::Stderr)];
        for p in preopens {
            let fd = rustix::fs::open(
                &p.host,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| (p.host.clone(), e.into()))?;
            fds.push(Some(Fd::Dir(DirFd {
                fd,
                preopen: Some(p.guest.clone()),
                writable: p.writable,
                shown: p.guest.clone(),
            })));
        }
        Ok(FdTable { fds })
    }

    pub fn get(&mut self, fd: u32) -> Result<&mut Fd, Errno> {
        self.fds
            .get_mut(fd as usize)
            .and_then(Option::as_mut)
            .ok_or(errno::BADF)
    }

    pub fn close(&mut self, fd: u32) -> Result<(), Errno> {
        let slot = self.fds.get_mut(fd as usize).ok_or(errno::BADF)?;
        slot.take().map(|_| ()).ok_or(errno::BADF)
    }

    fn insert(&mut self, fd: Fd) -> Result<u32, Errno> {
        let at = match self.fds.iter().position(Option::is_none) {
            Some(i) => i,
            None if self.fds.len() < MAX_FDS => {
                self.fds.push(None);
                self.fds.len() - 1
            }
            None => return Err(errno::MFILE),
        };
        self.fds[at] = Some(fd);
        u32::try_from(at).map_err(|_| errno::MFILE)
    }

    /// The guest's name of a preopened directory.
    pub fn prestat(&mut self, fd: u32) -> Result<&str, Errno> {
        match self.get(fd)? {
            Fd::Dir(DirFd {
                preopen: Some(name),
                ..
            }) => Ok(name),
            _ => Err(errno::BADF),
        }
    }

    pub fn fdstat(&mut self, fd: u32) -> Result<Fdstat, Errno> {
        Ok(match self.get(fd)? {
            Fd::Stdin | Fd::Stdout | Fd::Stderr => Fdstat {
                filetype: FILETYPE_CHARACTER_DEVICE,
                flags: 0,
                rights: RIGHTS_ALL,
                inheriting: 0,
            },
            Fd::Dir(_) => Fdstat {
                filetype: FILETYPE_DIRECTORY,
                flags: 0,
                rights: RIGHTS_ALL,
                inheriting: RIGHTS_ALL,
            },
            Fd::File(f) => Fdstat {
                filetype: FILETYPE_REGULAR_FILE,
                flags: if f.append { FD_APPEND } else { 0 },
                rights: RIGHTS_ALL,
                inheriting: 0,
            },
        })
    }

    pub fn filestat(&mut self, fd: u32) -> Result<Filestat, Errno> {
        match self.get(fd)? {
            Fd::Stdin | Fd::Stdout | Fd::Stderr => Ok(Filestat {
                dev: 0,
                ino: 0,
                filetype: FILETYPE_CHARACTER_DEVICE,
                nlink: 1,
                size: 0,
                atim: 0,
                mtim: 0,
                ctim: 0,
            }),
            Fd::Dir(d) => stat(d.fd.as_fd()),
            Fd::File(f) => stat(f.file.as_fd()),
        }
    }

    pub fn seek(&mut self, fd: u32, offset: i64, whence: u8) -> Result<u64, Errno> {
        let Fd::File(f) = self.get(fd)? else {
            return Err(errno::SPIPE);
        };
        let to = match whence {
            0 => SeekFrom::Start(u64::try_from(offset).map_err(|_| errno::INVAL)?),
            1 => SeekFrom::Current(offset),
            2 => SeekFrom::End(offset),
            _ => return Err(errno::INVAL),
        };
        f.file.seek(to).map_err(|e| errno::of_io(&e))
    }

    /// Reads from a file opened for reading into `buf`.
    pub fn read_file(&mut self, fd: u32, buf: &mut [u8]) -> Result<usize, Errno> {
        match self.get(fd)? {
            Fd::File(f) if f.read => f.file.read(buf).map_err(|e| errno::of_io(&e)),
            Fd::Dir(_) => Err(errno::ISDIR),
            _ => Err(errno::BADF),
        }
    }

    /// Writes `buf` whole to a file opened for writing.
    pub fn write_file(&mut self, fd: u32, buf: &[u8]) -> Result<(), Errno> {
        match self.get(fd)? {
            Fd::File(f) if f.write => f.file.write_all(buf).map_err(|e| errno::of_io(&e)),
            Fd::Dir(_) => Err(errno::ISDIR),
            _ => Err(errno::BADF),
        }
    }

    /// `path_open`: opens `path` under the directory `dirfd` as the guest asks, if the
    /// directory grants it. Returns the new descriptor, or the errno with, for a refused
    /// capability, what to report.
    pub fn open(
        &mut self,
        dirfd: u32,
        lookup: u32,
        path: &[u8],
        oflags: u16,
        rights: u64,
        fdflags: u16,
    ) -> Result<u32, Denied> {
        let plain = |errno| Denied {
            errno,
            what: String::new(),
        };
        let dir = match self.get(dirfd).map_err(plain)? {
            Fd::Dir(d) => d,
            Fd::File(_) => return Err(plain(errno::NOTDIR)),
            _ => return Err(plain(errno::BADF)),
        };
        let path = std::str::from_utf8(path).map_err(|_| plain(errno::INVAL))?;
        if path.is_empty() {
            return Err(plain(errno::NOENT));
        }
        if path.contains('\0') {
            return Err(plain(errno::INVAL));
        }
        let shown = format!("{}/{path}", dir.shown.trim_end_matches('/'));
        if path.starts_with('/') {
            return Err(Denied {
                errno: errno::NOTCAPABLE,
                what: format!("open {path}: an absolute path, outside every granted directory"),
            });
        }
        let write = rights & (RIGHT_FD_WRITE | RIGHT_FD_ALLOCATE | RIGHT_FD_FILESTAT_SET_SIZE) != 0
            || oflags & (O_CREAT | O_TRUNC) != 0
            || fdflags & FD_APPEND != 0;
        let read = rights & ((1 << 1) | (1 << 14)) != 0 || !write;
        if write && !dir.writable {
            return Err(Denied {
                errno: errno::NOTCAPABLE,
                what: format!(
                    "write {shown}: the directory is read-only for this run (writing needs a write grant)"
                ),
            });
        }
        let mut flags = OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        flags |= match (read, write) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        for (bit, f) in [
            (O_CREAT, OFlags::CREATE),
            (O_DIRECTORY, OFlags::DIRECTORY),
            (O_EXCL, OFlags::EXCL),
            (O_TRUNC, OFlags::TRUNC),
        ] {
            if oflags & bit != 0 {
                flags |= f;
            }
        }
        if fdflags & FD_APPEND != 0 {
            flags |= OFlags::APPEND;
        }
        if lookup & LOOKUP_SYMLINK_FOLLOW == 0 {
            flags |= OFlags::NOFOLLOW;
        }
        let writable = dir.writable;
        let fd = rustix::fs::openat2(
            dir.fd.as_fd(),
            path,
            flags,
            // openat2 refuses a mode without O_CREAT
            if oflags & O_CREAT != 0 {
                Mode::from_raw_mode(0o644)
            } else {
                Mode::empty()
            },
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| match e.raw_os_error() {
            18 => Denied {
                errno: errno::NOTCAPABLE,
                what: format!(
                    "open {shown}: the path leaves its directory (`..`, an absolute symbolic link, or one pointing outside)"
                ),
            },
            raw => plain(errno::of_raw(raw)),
        })?;
        let kind = rustix::fs::fstat(&fd)
            .map(|s| FileType::from_raw_mode(s.st_mode))
            .map_err(|e| plain(errno::of_raw(e.raw_os_error())))?;
        let entry = match kind {
            FileType::Directory => Fd::Dir(DirFd {
                fd,
                preopen: None,
                writable,
                shown,
            }),
            FileType::RegularFile => {
                // opened without blocking (a FIFO would wait for a writer); files block again
                let fl = rustix::fs::fcntl_getfl(&fd)
                    .map_err(|e| plain(errno::of_raw(e.raw_os_error())))?;
                rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK)
                    .map_err(|e| plain(errno::of_raw(e.raw_os_error())))?;
                Fd::File(FileFd {
                    file: File::from(fd),
                    read,
                    write,
                    append: fdflags & FD_APPEND != 0,
                })
            }
            _ => {
                return Err(Denied {
                    errno: errno::NOTSUP,
                    what: format!(
                        "open {shown}: neither a regular file nor a directory (devices, pipes and sockets are not opened)"
                    ),
                });
            }
        };
        self.insert(entry).map_err(plain)
    }

    /// `path_filestat_get`: the status of `path` under `dirfd`, resolved as `open` resolves.
    pub fn path_stat(&mut self, dirfd: u32, lookup: u32, path: &[u8]) -> Result<Filestat, Denied> {
        let plain = |errno| Denied {
            errno,
            what: String::new(),
        };
        let dir = match self.get(dirfd).map_err(plain)? {
            Fd::Dir(d) => d,
            _ => return Err(plain(errno::NOTDIR)),
        };
        let path = std::str::from_utf8(path).map_err(|_| plain(errno::INVAL))?;
        if path.contains('\0') {
            return Err(plain(errno::INVAL));
        }
        if path.starts_with('/') {
            return Err(Denied {
                errno: errno::NOTCAPABLE,
                what: format!("stat {path}: an absolute path, outside every granted directory"),
            });
        }
        let mut flags = OFlags::PATH | OFlags::CLOEXEC;
        if lookup & LOOKUP_SYMLINK_FOLLOW == 0 {
            flags |= OFlags::NOFOLLOW;
        }
        let fd = rustix::fs::openat2(
            dir.fd.as_fd(),
            if path.is_empty() { "." } else { path },
            flags,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| match e.raw_os_error() {
            18 => Denied {
                errno: errno::NOTCAPABLE,
                what: format!(
                    "stat {}/{path}: the path leaves its directory",
                    dir.shown.trim_end_matches('/')
                ),
            },
            raw => plain(errno::of_raw(raw)),
        })?;
        stat(fd.as_fd()).map_err(plain)
    }
}

fn stat(fd: std::os::fd::BorrowedFd<'_>) -> Result<Filestat, Errno> {
    let s = rustix::fs::fstat(fd).map_err(|e| errno::of_raw(e.raw_os_error()))?;
    let ns = |sec: i64, nsec: i64| -> u64 {
        u64::try_from(sec)
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::try_from(nsec).unwrap_or(0))
    };
    let filetype = match FileType::from_raw_mode(s.st_mode) {
        FileType::Directory => FILETYPE_DIRECTORY,
        FileType::RegularFile => FILETYPE_REGULAR_FILE,
        FileType::CharacterDevice => FILETYPE_CHARACTER_DEVICE,
        FileType::BlockDevice => 1,
        FileType::Socket => 6,
        FileType::Symlink => 7,
        _ => FILETYPE_UNKNOWN,
    };
    Ok(Filestat {
        dev: s.st_dev,
        ino: s.st_ino,
        filetype,
        nlink: s.st_nlink,
        size: u64::try_from(s.st_size).unwrap_or(0),
        atim: ns(s.st_atime, s.st_atime_nsec as i64),
        mtim: ns(s.st_mtime, s.st_mtime_nsec as i64),
        ctim: ns(s.st_ctime, s.st_ctime_nsec as i64),
    })
}
