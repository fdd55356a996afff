//! The seccomp half: system calls a confined command never needs and an escape would. The
//! filter allows by default and answers EPERM to the listed calls (a program sees an ordinary
//! "operation not permitted" rather than dying); `clone3` answers ENOSYS so that the C library
//! falls back to `clone`, whose flags the filter can read.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;

/// Denied outright: tracing and reading other processes, mounting, kexec, BPF, keyrings,
/// kernel modules, perf, entering namespaces, io_uring (whose operations bypass this filter),
/// userfaultfd (a common exploit aid), swap, reboot, accounting.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_perf_event_open,
    libc::SYS_setns,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_userfaultfd,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
];

const AF_INET: u64 = libc::AF_INET as u64;
const AF_INET6: u64 = libc::AF_INET6 as u64;
const AF_PACKET: u64 = libc::AF_PACKET as u64;
const SOCK_STREAM: u64 = libc::SOCK_STREAM as u64;
/// Every IP socket type but SOCK_STREAM: datagram (UDP, ICMP "ping"), raw, RDM, seqpacket,
/// DCCP, the obsolete SOCK_PACKET (10; libc marks the constant deprecated, hence the numbers)
/// and the unassigned numbers between, which the kernel accepts as far as the protocol lookup.
const NOT_STREAM: std::ops::RangeInclusive<u64> = 2..=10;
/// The socket type without SOCK_NONBLOCK / SOCK_CLOEXEC.
const SOCK_TYPE_MASK: u64 = 0xf;
const IPPROTO_TCP: u64 = libc::IPPROTO_TCP as u64;
const CLONE_NEWUSER: u64 = libc::CLONE_NEWUSER as u64;

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(bad)
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conds).map_err(bad)
}

fn bad(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Unavailable(format!("building the seccomp filter: {e}"))
}

fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        SandboxError::Unavailable(format!(
            "no seccomp filter for the {} architecture",
            std::env::consts::ARCH
        ))
    })
}

/// The two programs: the EPERM filter and the clone3 → ENOSYS filter.
pub fn programs(network: bool) -> Result<Vec<BpfProgram>, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&n| (n, Vec::new())).collect();
    // IP sockets: only TCP streams, and those only with a network grant. Landlock's network
    // rules hold TCP to the proxy's port; any other IP socket (UDP, ICMP, raw, SCTP, MPTCP)
    // would pass beside them. The proxy resolves names, so the command needs no DNS of its own.
    let mut socket = vec![rule(vec![cond(0, SeccompCmpOp::Eq, AF_PACKET)?])?];
    for family in [AF_INET, AF_INET6] {
        if network {
            for t in NOT_STREAM {
                socket.push(rule(vec![
                    cond(0, SeccompCmpOp::Eq, family)?,
                    cond(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), t)?,
                ])?);
            }
            // A stream of another protocol than TCP (0 picks TCP): SCTP, MPTCP.
            socket.push(rule(vec![
                cond(0, SeccompCmpOp::Eq, family)?,
                cond(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), SOCK_STREAM)?,
                cond(2, SeccompCmpOp::Ne, 0)?,
                cond(2, SeccompCmpOp::Ne, IPPROTO_TCP)?,
            ])?);
        } else {
            socket.push(rule(vec![cond(0, SeccompCmpOp::Eq, family)?])?);
        }
    }
    rules.insert(libc::SYS_socket, socket);
    let new_user_ns = || -> Result<Vec<SeccompRule>, SandboxError> {
        Ok(vec![rule(vec![cond(
            0,
            SeccompCmpOp::MaskedEq(CLONE_NEWUSER),
            CLONE_NEWUSER,
        )?])?])
    };
    rules.insert(libc::SYS_unshare, new_user_ns()?);
    rules.insert(libc::SYS_clone, new_user_ns()?);
    let arch = arch()?;
    let eperm = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(bad)?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(bad)?;
    Ok(vec![
        BpfProgram::try_from(eperm).map_err(bad)?,
        BpfProgram::try_from(clone3).map_err(bad)?,
    ])
}

/// Installs the filters on the calling thread (the launcher is single-threaded).
pub fn apply(network: bool) -> Result<(), SandboxError> {
    for p in programs(network)? {
        seccompiler::apply_filter(&p).map_err(bad)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile_with_and_without_network() {
        for network in [false, true] {
            let p = programs(network).unwrap();
            assert_eq!(p.len(), 2);
            assert!(p.iter().all(|x| !x.is_empty()));
        }
        // With network the socket rules are longer (each non-stream type is named).
        assert!(programs(true).unwrap()[0].len() > programs(false).unwrap()[0].len());
    }
}
