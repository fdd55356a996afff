//! Reading and writing the guest's linear memory. Every pointer and length comes from the
//! guest, so every access is bounds-checked and a bad one is `EFAULT`, never a panic.

use super::errno::{Errno, FAULT};

/// The `len` bytes at `ptr`.
pub fn slice(mem: &[u8], ptr: u32, len: u32) -> Result<&[u8], Errno> {
    let start = ptr as usize;
    let end = start.checked_add(len as usize).ok_or(FAULT)?;
    mem.get(start..end).ok_or(FAULT)
}

/// The `len` bytes at `ptr`, writable.
pub fn slice_mut(mem: &mut [u8], ptr: u32, len: u32) -> Result<&mut [u8], Errno> {
    let start = ptr as usize;
    let end = start.checked_add(len as usize).ok_or(FAULT)?;
    mem.get_mut(start..end).ok_or(FAULT)
}

pub fn read_u32(mem: &[u8], ptr: u32) -> Result<u32, Errno> {
    let b = slice(mem, ptr, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

pub fn write_bytes(mem: &mut [u8], ptr: u32, bytes: &[u8]) -> Result<(), Errno> {
    let len = u32::try_from(bytes.len()).map_err(|_| FAULT)?;
    slice_mut(mem, ptr, len)?.copy_from_slice(bytes);
    Ok(())
}

pub fn write_u8(mem: &mut [u8], ptr: u32, v: u8) -> Result<(), Errno> {
    write_bytes(mem, ptr, &[v])
}

pub fn write_u16(mem: &mut [u8], ptr: u32, v: u16) -> Result<(), Errno> {
    write_bytes(mem, ptr, &v.to_le_bytes())
}

pub fn write_u32(mem: &mut [u8], ptr: u32, v: u32) -> Result<(), Errno> {
    write_bytes(mem, ptr, &v.to_le_bytes())
}

pub fn write_u64(mem: &mut [u8], ptr: u32, v: u64) -> Result<(), Errno> {
    write_bytes(mem, ptr, &v.to_le_bytes())
}

/// The `(buf, len)` pairs of an `iovec` / `ciovec` array of `count` entries at `ptr`, each
/// checked to lie inside memory.
pub fn iovecs(mem: &[u8], ptr: u32, count: u32) -> Result<Vec<(u32, u32)>, Errno> {
    // An array larger than memory is a fault, not an allocation the guest chose.
    let bytes = count.checked_mul(8).ok_or(FAULT)?;
    slice(mem, ptr, bytes)?;
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = ptr.checked_add(i * 8).ok_or(FAULT)?;
        let buf = read_u32(mem, at)?;
        let len = read_u32(mem, at.checked_add(4).ok_or(FAULT)?)?;
        slice(mem, buf, len)?;
        out.push((buf, len));
    }
    Ok(out)
}

/// The bytes of a list of strings laid out as WASI's `args_get` / `environ_get` want them:
/// pointers at `ptrs`, NUL-terminated strings from `buf` on.
pub fn write_strings(mem: &mut [u8], ptrs: u32, buf: u32, items: &[Vec<u8>]) -> Result<(), Errno> {
    let mut at = buf;
    for (i, s) in items.iter().enumerate() {
        let slot = ptrs
            .checked_add(u32::try_from(i * 4).map_err(|_| FAULT)?)
            .ok_or(FAULT)?;
        write_u32(mem, slot, at)?;
        write_bytes(mem, at, s)?;
        let len = u32::try_from(s.len()).map_err(|_| FAULT)?;
        write_u8(mem, at.checked_add(len).ok_or(FAULT)?, 0)?;
        at = at.checked_add(len + 1).ok_or(FAULT)?;
    }
    Ok(())
}
