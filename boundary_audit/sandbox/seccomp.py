"""The seccomp filter every confined run gets: the kernel interfaces a task never needs are off.

A reply runs shell commands over files. It never needs to debug another process, mount a file
system, load a kernel module or a BPF program, read performance counters, set the clock, use
the kernel keyring or enter another namespace. Each of those is an escape route or a large
kernel attack surface, so the filter makes them fail with EPERM (ENOSYS for io_uring, which
programs probe for and then fall back from). Everything else is allowed: the filter is a deny
list on purpose, because the tasks run arbitrary userland (bash, git, python, tmux, ssh).

The program is classic BPF, built here (no libseccomp):

    load arch; if arch != native: return ERRNO(ENOSYS)   # no 32-bit or x32 back door
    load nr;   (x86_64) if nr >= 0x40000000: return ERRNO(ENOSYS)
    for each denied nr: if nr == N: return ERRNO(EPERM | ENOSYS)
    return ALLOW

bwrap loads it (`--seccomp FD`) after `no_new_privs`, just before it executes the run's pid 1,
so the reaper and everything under it are filtered; the Docker backend gets the same list as
a Docker seccomp profile (`docker_profile`). The numbers are the kernel's, per architecture
(`arch/x86/entry/syscalls/syscall_64.tbl`, `include/uapi/asm-generic/unistd.h`).

Observation runs (`boundary_audit.observe`) trace a harness with strace, which needs ptrace.
Only they ask for `program(arch, allow=TRACING)`: the same program without the TRACING
entries, loaded by bwrap for the run's pid 1 (the reaper) and strace, both our own code. The
first program strace starts re-installs the default program on itself (`observe/seal.py`)
before it executes the harness, and a seccomp filter cannot be removed once installed, so the
harness and everything under it run under exactly the default filter: no process that runs
code of the harness or of a reply can call ptrace, so neither the reaper nor the tracer can
be attached to. Every other run gets the default program, unchanged.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import platform
import struct
from dataclasses import dataclass

DENIED: tuple[str, ...] = (
    # debugging and reading other processes: the reaper's count, other runs' memory
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    # file systems, namespaces, the root
    "mount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    "open_by_handle_at",
    "name_to_handle_at",
    "quotactl",
    "quotactl_fd",
    "swapon",
    "swapoff",
    # the kernel itself
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "reboot",
    "syslog",
    "acct",
    "lookup_dcookie",
    "nfsservctl",
    "vhangup",
    "fanotify_init",
    "iopl",
    "ioperm",
    "uselib",
    # keys, clocks, host identity, NUMA placement
    "keyctl",
    "add_key",
    "request_key",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "mbind",
    "set_mempolicy",
    "set_mempolicy_home_node",
    "migrate_pages",
    "move_pages",
    # io_uring: a second syscall interface the list above would not cover
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
"""Every system call the filter refuses, by name."""

TRACING = frozenset({"ptrace", "process_vm_readv"})
"""What an observation run's outer filter allows, for the tracer only (see the docstring):
ptrace, and the fast read of a tracee's memory that strace tries first."""

NOT_IMPLEMENTED = frozenset({"io_uring_setup", "io_uring_enter", "io_uring_register"})
"""Refused with ENOSYS instead of EPERM: callers treat it as "not available" and fall back."""

_X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "kcmp": 312, "mount": 165, "umount2": 166, "pivot_root": 155, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428,
    "mount_setattr": 442, "unshare": 272, "setns": 308, "open_by_handle_at": 304,
    "name_to_handle_at": 303, "quotactl": 179, "quotactl_fd": 443, "swapon": 167,
    "swapoff": 168, "init_module": 175, "finit_module": 313, "delete_module": 176,
    "kexec_load": 246, "kexec_file_load": 320, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "reboot": 169, "syslog": 103, "acct": 163, "lookup_dcookie": 212,
    "nfsservctl": 180, "vhangup": 153, "fanotify_init": 300, "iopl": 172, "ioperm": 173,
    "uselib": 134, "keyctl": 250, "add_key": 248, "request_key": 249, "settimeofday": 164,
    "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159, "sethostname": 170,
    "setdomainname": 171, "mbind": 237, "set_mempolicy": 238, "set_mempolicy_home_node": 450,
    "migrate_pages": 256, "move_pages": 279, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427,
}  # fmt: skip

_AARCH64 = {
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
    "kcmp": 272, "mount": 40, "umount2": 39, "pivot_root": 41, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
    "unshare": 97, "setns": 268, "open_by_handle_at": 265, "name_to_handle_at": 264,
    "quotactl": 60, "quotactl_fd": 443, "swapon": 224, "swapoff": 225, "init_module": 105,
    "finit_module": 273, "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294,
    "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "reboot": 142, "syslog": 116,
    "acct": 89, "lookup_dcookie": 18, "nfsservctl": 42, "vhangup": 58, "fanotify_init": 262,
    "keyctl": 219, "add_key": 217, "request_key": 218, "settimeofday": 170,
    "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171, "sethostname": 161,
    "setdomainname": 162, "mbind": 235, "set_mempolicy": 237, "set_mempolicy_home_node": 450,
    "migrate_pages": 238, "move_pages": 239, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427,
}  # fmt: skip
"""aarch64 has no iopl, ioperm or uselib."""


@dataclass(frozen=True)
class Arch:
    """One architecture's audit number, syscall table, and the x32-style bit to refuse."""

    name: str
    audit_arch: int
    numbers: dict[str, int]
    refuse_from: int | None = None
    """Syscall numbers at or above this are another ABI's (x86_64's x32): refused whole."""


ARCHES = {
    "x86_64": Arch("x86_64", 0xC000003E, _X86_64, refuse_from=0x40000000),
    "aarch64": Arch("aarch64", 0xC00000B7, _AARCH64),
}

# classic BPF opcodes (linux/filter.h, linux/seccomp.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_OFF_NR = 0
_OFF_ARCH = 4


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def native_arch() -> Arch | None:
    """This machine's architecture, or None where the filter has no table for it."""
    return ARCHES.get(platform.machine())


def program(arch: Arch, allow: frozenset[str] = frozenset()) -> bytes:
    """The filter as `struct sock_filter[]` bytes, ready for bwrap's `--seccomp FD`.

    `allow` names entries of DENIED to leave out: only ever TRACING, for an observation run's
    outer filter; the default (empty) is the filter every other run gets."""
    unknown = allow - TRACING
    if unknown:
        raise ValueError(f"only {sorted(TRACING)} may be allowed, not {sorted(unknown)}")
    eperm = _RET_ERRNO | errno.EPERM
    enosys = _RET_ERRNO | errno.ENOSYS
    denied = [
        (arch.numbers[n], enosys if n in NOT_IMPLEMENTED else eperm)
        for n in DENIED
        if n in arch.numbers and n not in allow
    ]
    out = [
        _insn(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _insn(_JEQ_K, 1, 0, arch.audit_arch),
        _insn(_RET_K, 0, 0, enosys),
        _insn(_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    if arch.refuse_from is not None:
        out += [_insn(_JGE_K, 0, 1, arch.refuse_from), _insn(_RET_K, 0, 0, enosys)]
    for nr, ret in denied:
        out += [_insn(_JEQ_K, 0, 1, nr), _insn(_RET_K, 0, 0, ret)]
    out.append(_insn(_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(out)


def denied_here() -> tuple[str, ...]:
    """The names of DENIED that exist on this architecture (what the filter refuses)."""
    arch = native_arch()
    return tuple(n for n in DENIED if arch is not None and n in arch.numbers)


@functools.cache
def program_here(allow: frozenset[str] = frozenset()) -> bytes | None:
    """The filter for this machine, built once; None where the architecture is unknown."""
    arch = native_arch()
    return program(arch, allow) if arch is not None else None


def program_fd(allow: frozenset[str] = frozenset()) -> int | None:
    """A fresh readable descriptor holding the filter (bwrap reads it once), or None.

    A memfd, so nothing touches the disk; the caller passes it to the child and closes it.
    """
    data = program_here(allow)
    if data is None:
        return None
    fd = os.memfd_create("ba-seccomp", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.cache
def docker_profile() -> str:
    """The same deny list as a Docker seccomp profile (JSON), for the Docker backend."""
    arch = native_arch()
    names = list(denied_here()) if arch is not None else list(DENIED)
    scmp_arch = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}
    profile = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": [scmp_arch[arch.name]] if arch is not None else [],
        "syscalls": [
            {
                "names": [n for n in names if n not in NOT_IMPLEMENTED],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": errno.EPERM,
            },
            {
                "names": [n for n in names if n in NOT_IMPLEMENTED],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": errno.ENOSYS,
            },
        ],
    }
    return json.dumps(profile, sort_keys=True)
