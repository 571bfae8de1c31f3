"""The process supervisor: a tiny process between Harness and an agent CLI, so no process of a run outlives Harness.

Layer: transport, as a process of its own. Knows nothing of Harness, JSON-RPC or any CLI; imports a few cheap
standard-library modules only (`supervisor.py` runs it with `python -I -S`). Linux only. Its options, what it
does with signals and its exit status: docs/process-ownership.md (the supervisor).
"""

from __future__ import annotations

import os
import select
import sys
import time

TYPE_CHECKING = False  # typing costs ~5 ms to import; mypy honours this name all the same
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable
    from typing import NoReturn
else:
    try:
        import _signal as signal  # `signal` without its IntEnums: importing enum would cost ~5 ms
    except ImportError:
        import signal

PARENT_DEATH_SIGNAL = signal.SIGUSR1
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
HANDLED = (signal.SIGCHLD, PARENT_DEATH_SIGNAL, *FORWARDED)
POLICIES = ("kill", "keep")
DEFAULT_GRACE = 0.5
EXIT_USAGE, EXIT_PARENT_GONE, EXIT_SPAWN_FAILED = 2, 125, 127  # 125: the owner died before the agent started

_KILL_WAIT = 2.0  # after SIGKILL, how long the tree may take to vanish before the supervisor gives up on it
_TICK = 0.01  # how often /proc is read again while waiting for descendants: a grandchild's death sends no event
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 1, 4, 36
_CORE_SIGNALS = frozenset({
    signal.SIGQUIT, signal.SIGILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGSEGV,
    signal.SIGXCPU, signal.SIGXFSZ, signal.SIGSYS,
})
_OPTIONS = {"--control-fd": "-1", "--parent": "", "--on-parent-exit": "kill", "--grace": str(DEFAULT_GRACE)}
_USAGE = "usage: _supervise.py [--control-fd N] [--parent PID] [--on-parent-exit kill|keep] [--grace SECONDS] -- ARGV"

Entry = tuple[int, int]  # (pid, start time in clock ticks since boot): a process, safe against pid reuse


class Options:
    def __init__(self, argv: list[str], control_fd: int, parent: int, on_parent_exit: str, grace: float) -> None:
        self.argv, self.control_fd, self.parent, self.on_parent_exit, self.grace = (
            argv, control_fd, parent, on_parent_exit, grace)


def parse(args: list[str]) -> Options:
    """The options in `args` (everything after the program name).

    Raises:
        ValueError: a malformed command line; the message says what is wrong.
    """
    if "--" not in args:
        raise ValueError("no `--` before the agent's command")
    flags, argv = args[: args.index("--")], args[args.index("--") + 1 :]
    if not argv:
        raise ValueError("no agent command after `--`")
    if len(flags) % 2:
        raise ValueError(f"option {flags[-1]} has no value")
    values = {**_OPTIONS, **dict(zip(flags[::2], flags[1::2], strict=True))}
    if unknown := sorted(set(values) - set(_OPTIONS)):
        raise ValueError(f"unknown option {unknown[0]}")
    if values["--on-parent-exit"] not in POLICIES:
        raise ValueError(f"--on-parent-exit must be kill or keep, not {values['--on-parent-exit']!r}")
    try:
        grace = float(values["--grace"])
        opts = Options(argv, int(values["--control-fd"]), int(values["--parent"] or os.getppid()),
                       values["--on-parent-exit"], grace)
    except ValueError as exc:
        raise ValueError(f"not a number: {exc}") from None
    if not 0 <= grace <= 60:
        raise ValueError(f"--grace must be between 0 and 60 seconds, not {grace}")
    return opts


# -- the process tree, from /proc (a copy of proctree's walk: importing harness_core would cost its start-up) ---

def _stat(pid: int) -> tuple[int, int, str] | None:
    """(ppid, start time, state) of `pid`, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # the command name may itself contain ") "
        return int(fields[1]), int(fields[19]), fields[0].decode()
    except (OSError, IndexError, ValueError):
        return None


def descendants(pid: int) -> list[Entry]:
    """Every live (not zombie) descendant of `pid`, found by reading /proc once. The walk goes through zombies: a
    process read before its parent died still names that parent, which may read as a zombie by then."""
    children: dict[int, list[tuple[int, int, bool]]] = {}
    for name in os.listdir("/proc"):
        info = _stat(int(name)) if name.isdigit() else None
        if info is not None:
            children.setdefault(info[0], []).append((int(name), info[1], info[2] not in ("Z", "X")))
    found: list[Entry] = []
    stack = [pid]
    while stack:
        for child, started, live in children.get(stack.pop(), ()):
            if live:
                found.append((child, started))
            stack.append(child)
    return found


def _signal(entries: list[Entry], sig: int) -> None:
    """Send `sig` to each entry that is still the same process (its start time unchanged)."""
    for pid, started in entries:
        info = _stat(pid)
        try:
            if info is not None and info[1] == started:
                os.kill(pid, sig)
        except OSError:  # gone already
            continue


# -- the supervisor -------------------------------------------------------------------------------------------


class Supervisor:
    """The waiting half: reaps, forwards, notices the owner's death and kills the run's tree."""

    def __init__(self, opts: Options, agent: int, wake: int) -> None:
        self.opts, self.agent, self.wake = opts, agent, wake  # wake: the read end of the signal wake-up pipe
        self.me, self.group = os.getpid(), os.getpgrp()
        self.status: int | None = None  # the agent's, as a `returncode`: exit code, or -signal
        self.parent_gone = False

    def run(self) -> int | None:
        """Wait until the agent is gone (on its own, or killed with its tree because the owner is gone), then
        kill and reap its leftovers. Returns the agent's status, or None if it could not be reaped."""
        poller = select.poll()
        poller.register(self.wake, select.POLLIN)
        ctl = self.opts.control_fd
        if ctl >= 0:
            poller.register(ctl, select.POLLIN)
        while self.status is None and not (self.parent_gone and self.opts.on_parent_exit == "kill"):
            for fd, _ in poller.poll():
                if fd == self.wake:
                    self._on_signals(self._drain())
                elif not self._read_control():
                    poller.unregister(ctl)
                    self._on_parent_gone("its owner closed the control socket (the owner died or let go)")
        self.kill_tree()
        return self.status

    def _read_control(self) -> bool:
        """Read what the owner sent (ignored for now); False at EOF."""
        try:
            return bool(os.read(self.opts.control_fd, 4096))
        except OSError as exc:
            return isinstance(exc, BlockingIOError)

    def _drain(self) -> set[int]:
        seen: set[int] = set()
        try:
            while data := os.read(self.wake, 256):
                seen.update(data)
        except BlockingIOError:
            pass
        return seen

    def _on_signals(self, sigs: set[int]) -> None:
        if signal.SIGCHLD in sigs:
            self.reap()
        if PARENT_DEATH_SIGNAL in sigs and os.getppid() != self.opts.parent:
            self._on_parent_gone(f"its owner (pid {self.opts.parent}) died")
        for sig in FORWARDED:
            if sig in sigs and self.status is None:
                self._forward(sig)

    def _forward(self, sig: int) -> None:
        try:
            group = os.getpgid(self.agent)
            if group != self.group:  # the agent left our group, so the owner's group signal missed it
                os.killpg(group, sig)
        except OSError:
            pass

    def _on_parent_gone(self, why: str) -> None:
        if self.parent_gone:
            return
        self.parent_gone = True
        if self.opts.on_parent_exit == "keep":
            tell(2, f"harness supervisor: {why}; the agent keeps running (--on-parent-exit keep)\n")
        else:
            self.kill_tree()

    def reap(self) -> bool:
        """Reap every child that has exited (the agent, and orphans re-parented to the supervisor). Returns
        whether a child is left: every process of the run descends from one, the supervisor being the
        subreaper, so without children there is nothing to kill."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.agent:
                self.status = os.waitstatus_to_exitcode(status)

    def kill_tree(self) -> None:
        """SIGTERM every descendant (and SIGCONT, so a stopped one can act on it), wait up to the grace for
        them to go, then SIGKILL what is left — also what was started meanwhile — until nothing is; reaping
        throughout. Bounded: gives up on processes that survive SIGKILL for `_KILL_WAIT` seconds."""
        left = descendants(self.me) if self.reap() else []
        termed: set[Entry] = set()
        deadline = time.monotonic() + self.opts.grace
        while left and time.monotonic() < deadline:
            fresh = [entry for entry in left if entry not in termed]
            _signal(fresh, signal.SIGTERM)
            _signal(fresh, signal.SIGCONT)
            termed.update(fresh)
            self._pause(min(_TICK, deadline - time.monotonic()))
            left = descendants(self.me)
        deadline = time.monotonic() + _KILL_WAIT
        while left:
            _signal(left, signal.SIGKILL)
            if time.monotonic() > deadline:
                pids = " ".join(str(pid) for pid, _ in left)
                tell(2, f"harness supervisor: pids {pids} outlived SIGKILL by {_KILL_WAIT:g} s (stuck in the kernel)\n")
                return
            self._pause(_TICK)
            left = descendants(self.me)

    def _pause(self, seconds: float) -> None:
        """Wait up to `seconds` for a signal (a child's exit ends it early), then reap."""
        poller = select.poll()
        poller.register(self.wake, select.POLLIN)
        if poller.poll(max(0, int(seconds * 1000))):
            self._drain()  # the owner's SIGTERM etc. are moot now: everything is being killed anyway
        self.reap()


# -- process-wide set-up --------------------------------------------------------------------------------------

_prctl: list[Callable[[int, int], int]] = []


def prctl(option: int, value: int) -> bool:
    """`prctl(option, value)`; False where it is missing or fails. Called through `_ctypes`, ctypes' C core (0.6 ms
    to import, where `ctypes` takes 4 ms: a third of the supervisor's start-up), whose `call_function` passes ints
    as C ints, sign-extended in registers; through `ctypes` should that ever be gone."""
    try:
        if not _prctl:
            try:
                import _ctypes

                address, call = _ctypes.dlsym(_ctypes.dlopen(None, 2), "prctl"), _ctypes.call_function  # type: ignore[arg-type]
                _prctl.append(lambda option, value: int(call(address, (option, value, 0, 0, 0))))
            except AttributeError:
                import ctypes

                func, ulong = ctypes.CDLL(None).prctl, ctypes.c_ulong
                _prctl.append(lambda option, value: int(func(option, ulong(value), ulong(0), ulong(0), ulong(0))))
        return _prctl[0](option, value) == 0
    except (ImportError, OSError, AttributeError):
        return False


def tell(fd: int, line: str) -> bool:
    """Write `line` on `fd`: the control socket (if any), or stderr; False if nobody reads it any more."""
    try:
        return fd < 0 or os.write(fd, line.encode()) > 0
    except OSError:
        return False


def initial_environ() -> dict[bytes, bytes]:
    """The environment this process was started with, byte for byte. Not `os.environ`: Python's start-up may
    have changed that (PEP 538 sets LC_CTYPE in a C locale, even under -I), and the agent must get exactly what
    the owner passed."""
    try:
        with open("/proc/self/environ", "rb") as f:
            entries = [entry.partition(b"=") for entry in f.read().split(b"\0")]
    except OSError:
        return dict(os.environb)
    return {key: value for key, sep, value in reversed(entries) if sep and key}  # reversed: the first one wins


def exit_like(status: int | None) -> NoReturn:
    """Exit the way the agent did: with its exit code, or killed by the same signal (never dumping core)."""
    if status is None:
        os._exit(128 + signal.SIGKILL)  # the agent could not even be reaped: report it as killed
    if status >= 0:
        os._exit(status)
    sig = -status
    if sig in _CORE_SIGNALS:
        prctl(_PR_SET_DUMPABLE, 0)  # die by the signal, without a core file of the supervisor
    if sig not in (signal.SIGKILL, signal.SIGSTOP):  # which cannot be handled: their disposition is the default
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # only reached for a signal whose default action is not to terminate


def _ignore(signum: int, frame: object) -> None:
    """Handlers only make the signal write its number to the wake-up fd; the main loop reads it there."""


def spawn(argv: list[str], env: dict[bytes, bytes], mask: set[int], sigchld: signal._HANDLER) -> int:
    """Fork and exec the agent with the owner's signal state (`mask`, and `sigchld`, SIGPIPE and SIGXFSZ, which
    Python changed) and SIGKILL as its PR_SET_PDEATHSIG; return its pid. Not `os.posix_spawn`: glibc's leaves its
    internal signals 32 and 33 ignored in the child, and an ignored signal stays ignored across exec.

    Raises:
        OSError: the agent could not be executed (the errno of the failed exec, as `subprocess` reports it).
    """
    errors_r, errors_w = os.pipe()  # close-on-exec: EOF once the exec succeeded
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 5  # EIO, should anything but the exec itself fail
        try:
            os.close(errors_r)
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # kept across exec: the agent dies with a killed supervisor
            if os.getppid() != me:
                os._exit(EXIT_PARENT_GONE)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL if sigchld is None else sigchld)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            code = exc.errno or code
        finally:
            os.write(errors_w, str(code).encode())
            os._exit(EXIT_SPAWN_FAILED)
    os.close(errors_w)
    failed = os.read(errors_r, 32)
    os.close(errors_r)
    if failed:
        os.waitpid(pid, 0)
        raise OSError(int(failed), os.strerror(int(failed)))
    return pid


def main(args: list[str]) -> NoReturn:
    try:
        opts = parse(args)
    except ValueError as exc:
        tell(2, f"harness supervisor: {exc}\n{_USAGE}\n")
        os._exit(EXIT_USAGE)
    # Blocked until every handler is in place; the agent gets the original mask and dispositions.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    subreaper = prctl(_PR_SET_CHILD_SUBREAPER, 1)
    prctl(_PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL)
    if os.getppid() != opts.parent:
        os._exit(EXIT_PARENT_GONE)
    if opts.control_fd >= 0:
        os.set_inheritable(opts.control_fd, False)
    sigchld = signal.getsignal(signal.SIGCHLD)
    signal.signal(signal.SIGCHLD, _ignore)  # before the fork: were SIGCHLD ignored, the kernel would reap the agent
    try:
        agent = spawn(opts.argv, initial_environ(), mask, sigchld)
    except OSError as exc:
        tell(opts.control_fd, f"err {exc.errno or 0}\n")
        os._exit(EXIT_SPAWN_FAILED)
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    for sig in (PARENT_DEATH_SIGNAL, *FORWARDED):
        signal.signal(sig, _ignore)
    null = os.open(os.devnull, os.O_RDWR)  # only the agent holds the owner's stdin and stdout from now on
    os.dup2(null, 0)
    os.dup2(null, 1)
    tell(opts.control_fd, f"ok {agent} {int(subreaper)}\n")  # if the owner is gone, run() sees EOF at once
    signal.pthread_sigmask(signal.SIG_SETMASK, set(mask) - set(HANDLED))
    exit_like(Supervisor(opts, agent, wake_r).run())


if __name__ == "__main__":
    main(sys.argv[1:])
