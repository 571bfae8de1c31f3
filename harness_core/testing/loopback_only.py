"""Run a command where it can reach nothing but loopback, and see every connection it tried beyond it.

Layer: testing (shipped: a provider's own tests may use it). Knows Linux network namespaces (`unshare -rn`) and
`strace`; knows no provider, no CLI and nothing of Harness runs. Offline tests use it to prove that an agent talks
to its loopback backend only: in any language (a Node or native agent ignores Python-level interception).
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["RESOLVER_SOCKETS", "Attempt", "Watched", "attempts_in", "loopback_only_unavailable", "run_loopback_only"]

_LOOPBACK_UP = (
    "import fcntl, os, socket, struct, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "flags = struct.unpack('16sH', fcntl.ioctl(s, 0x8913, struct.pack('16sH', b'lo', 0)))[1]\n"  # SIOCGIFFLAGS
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH', b'lo', flags | 1))\n"  # SIOCSIFFLAGS: IFF_UP
    "s.close()\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)
"""Brings up `lo` in the new namespace (it starts down: 127.0.0.1 unreachable), then execs the command."""

_STRACE = ("strace", "-f", "-qq", "--seccomp-bpf", "-e", "signal=none", "-e", "trace=connect,sendto,sendmsg,sendmmsg",
           "-o")
"""Every process the command starts, only its network calls (stopped in the kernel for those alone: cheap), into
the file that follows."""
_CALL = re.compile(r"^(\d+)\s+(connect|sendto|sendmsg|sendmmsg)\(")
_INET = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
_UNIX = re.compile(r'sa_family=AF_UNIX, sun_path="([^"]+)"\}.*\)\s+=\s+0\s*$')
RESOLVER_SOCKETS = frozenset({
    "/var/run/nscd/socket", "/run/nscd/socket",  # glibc's name service cache: it resolves names on the host
    "/run/systemd/resolve/io.systemd.Resolve", "/run/systemd/resolve/io.systemd.Resolve.Monitor",
    "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket",  # systemd-resolved over D-Bus, and more
})
"""Unix sockets of host services that reach the network for a client (a name lookup through the host's resolver):
the namespace does not isolate filesystem sockets, so a connect to one that succeeds is an attempt."""


@dataclass(frozen=True)
class Attempt:
    """One connection (or datagram) the command tried to open beyond loopback, a name lookup (port 53), or a
    connection made to a host resolver's Unix socket (`address` its path, `port` 0)."""

    pid: int
    call: str
    address: str
    port: int
    line: str
    """The strace line, as evidence."""

    def __str__(self) -> str:
        return f"{self.call} to {self.address} port {self.port} (pid {self.pid})"


@dataclass(frozen=True)
class Watched:
    """What `run_loopback_only` saw: the command's exit status and output, and what it tried to reach."""

    returncode: int
    stdout: str
    stderr: str
    attempts: tuple[Attempt, ...]


def loopback_only_unavailable() -> str | None:
    """Why `run_loopback_only` cannot run here (no `unshare` or `strace`, user namespaces off, ptrace refused),
    or None when it can."""
    return _unavailable()


@cache
def _unavailable() -> str | None:
    for tool in ("unshare", "strace"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (util-linux's unshare and strace are needed to watch connections)"
    probe = subprocess.run(["unshare", "-rn", *_STRACE, os.devnull, sys.executable, "-c", _LOOPBACK_UP,
                            sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return (f"cannot run in a loopback-only network namespace under strace here (`unshare -rn strace` exited "
                f"{probe.returncode}: {probe.stderr.strip()[-300:]}); user namespaces and ptrace must be allowed")
    return None


def run_loopback_only(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
                      timeout: float = 300.0, input: str | None = None) -> Watched:
    """Run `argv` in a new network namespace whose only interface is loopback (`unshare -rn`: nothing can leave
    the machine, whatever the command does), under `strace -f`, which records each `connect`/`sendto`/`sendmsg`/
    `sendmmsg` of it and of every process it starts. Returns the exit status, the output and each attempt to reach
    an address beyond loopback, or any address on port 53 (a DNS lookup: with a resolver on loopback the lookup
    fails in the namespace before any connection to what it looked up). Attempts via io_uring are not seen (no
    agent here uses it for sockets); the namespace stops them all the same.

    The namespace stops every IP connection (a command that tries gets "network is unreachable"); the trace is the
    evidence: a test asserts `attempts` is empty, so an agent that merely tried fails it. The namespace does not
    isolate filesystem Unix sockets: a connect that succeeds to a host service that resolves names for its client
    (`RESOLVER_SOCKETS`: nscd, systemd-resolved, the system bus) is reported as an attempt; one to any other Unix
    socket (a local proxy's, say) is neither stopped nor reported.

    Raises:
        RuntimeError: `loopback_only_unavailable()` says why it cannot run here.
        subprocess.TimeoutExpired: the command ran longer than `timeout` seconds (its process group is killed).
    """
    why = loopback_only_unavailable()
    if why is not None:
        raise RuntimeError(why)
    with tempfile.TemporaryDirectory(prefix="harness-loopback-") as scratch:
        trace = Path(scratch) / "trace.txt"
        command = ["unshare", "-rn", *_STRACE, str(trace), sys.executable, "-c", _LOOPBACK_UP, *argv]
        child = subprocess.Popen(command, env=None if env is None else dict(env), cwd=cwd, text=True,
                                 stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            stdout, stderr = child.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise
        text = trace.read_text(errors="replace") if trace.exists() else ""
    return Watched(child.returncode, stdout, stderr, tuple(attempts_in(text)))


def attempts_in(trace: str) -> list[Attempt]:
    """The attempts beyond loopback (and the lookups) in `strace -f` output of network calls."""
    found: list[Attempt] = []
    for line in trace.splitlines():
        call = _CALL.match(line)
        if call is None:
            continue
        for port, address in [*_INET.findall(line), *_INET6.findall(line)]:
            if int(port) == 53 or not _is_loopback(address):
                found.append(Attempt(int(call[1]), call[2], address, int(port), line.strip()))
        unix = _UNIX.search(line)
        if unix is not None and unix[1] in RESOLVER_SOCKETS:
            found.append(Attempt(int(call[1]), call[2], unix[1], 0, line.strip()))
    return found


def _is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))
