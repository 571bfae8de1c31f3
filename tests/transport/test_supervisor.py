"""The process supervisor against real processes: nothing of a run outlives a killed Harness, and with
`ChildProcess(supervise=True)` (the default) everything else behaves as without it (test_process.py runs
supervised; every one of its tests runs again here with `supervise=False`)."""

from __future__ import annotations

import contextlib
import os
import resource
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

# tests/transport has no __init__.py, so pytest put it on sys.path: this is the module it collected.
import test_process as plain

from harness_core.errors import SpawnFailedError
from harness_core.transport import ChildProcess, supervisor
from harness_core.transport._supervise import parse
from harness_core.transport.proctree import MARK_PREFIX, descendants, kill_entries, marked

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not supervisor.available(), reason="the supervisor needs Linux")]
PY = sys.executable
alive = plain.alive


@pytest.fixture(autouse=True)
def supervised_by_default(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """test_process.py runs every test under the supervisor (the default); here its tests run again WITHOUT it
    (`supervise=False`, as on a platform without one), and this file's own tests supervised."""
    plain_test = request.function.__module__ == plain.__name__
    monkeypatch.setitem(ChildProcess.__init__.__kwdefaults__, "supervise", not plain_test)
    starts: list[int] = []
    real = supervisor.Supervision.started

    async def started(self: supervisor.Supervision, proc: object) -> int:
        starts.append(1)
        return await real(self, proc)  # type: ignore[arg-type]

    monkeypatch.setattr(supervisor.Supervision, "started", started)
    yield
    if plain_test:
        assert not starts, "supervise=False still started the supervisor"


# -- everything test_process.py checks, again without the supervisor ------------------------------------------

ESCAPED = "test_descendants_that_escaped_before_shutdown_are_killed_too"  # unsupervised there already
globals().update({name: test for name, test in vars(plain).items() if name.startswith("test_") and name != ESCAPED})


async def test_an_orphan_stays_in_the_tree_and_dies_with_the_agent() -> None:
    code = ("import subprocess, sys\n"
            "out = subprocess.run(['sh', '-c', 'setsid sleep 60 >/dev/null 2>&1 & echo $!'], capture_output=True)\n"
            "print(out.stdout.decode().strip(), flush=True); sys.exit(5)")
    with anyio.fail_after(10):
        async with ChildProcess([PY, "-c", code]) as proc:
            orphan = int(await proc.lines().__anext__())  # type: ignore[arg-type]
            assert await proc.wait() == 5
            # Its parent exited, yet it was re-parented to the supervisor, which killed and reaped it before
            # exiting itself: no polling needed, it is gone by now.
            assert not alive(orphan)


# -- Harness dies: the run's whole tree goes with it ----------------------------------------------------------

HARNESS = r"""
import os, sys, time, anyio
from harness_core.transport import ChildProcess
async def main() -> None:
    async with ChildProcess(sys.argv[2:], supervise=True) as proc:
        print("supervisor", proc.pid, flush=True)
        if sys.argv[1] == "fork":  # a copy of the control socket outlives us in this fork
            if (pid := os.fork()) == 0:
                time.sleep(60); os._exit(0)
            print("fork", pid, flush=True)
        async for line in proc.lines():
            print(line.decode(), flush=True)
        await anyio.sleep_forever()
anyio.run(main)
"""
# A shell running two `sleep 30`: one in its own session, one in the shell's group.
AGENT = ["sh", "-c", "setsid sh -c 'echo own $$; exec sleep 30' & sleep 30 & echo same $!; echo agent $$; wait"]


class Lines:
    """Lines from a pipe, read with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf = fd, b""

    def next(self, deadline: float) -> str:
        while b"\n" not in self.buf:
            assert select.select([self.fd], [], [], max(0, deadline - time.monotonic()))[0], f"late: {self.buf!r}"
            chunk = os.read(self.fd, 65536)
            assert chunk, f"EOF; got {self.buf!r}"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def until(self, keys: set[str], seconds: float = 15) -> dict[str, int]:
        """Read `key value` lines until every key is seen."""
        deadline, found = time.monotonic() + seconds, dict[str, int]()
        while not keys <= found.keys():
            key, _, value = self.next(deadline).partition(" ")
            if key in keys:
                found[key] = int(value.split()[0])
        return found


@pytest.fixture
def mark() -> Iterator[tuple[str, dict[str, str]]]:
    """A mark for this test's processes (every descendant inherits it) and an environment carrying it; whatever
    still carries it at the end is killed, so a failing test leaks nothing."""
    yield (token := secrets.token_hex(8)), {**os.environ, f"{MARK_PREFIX}{token}": "1"}
    kill_entries(marked(token))


def wait_gone(token: str, seconds: float, keep: frozenset[int] = frozenset()) -> set[int]:
    """Poll until no process carrying `token` (except `keep`) is alive; what is left at the deadline."""
    deadline = time.monotonic() + seconds
    while (left := {pid for pid, _ in marked(token)} - keep) and time.monotonic() < deadline:
        time.sleep(0.01)  # no event exists for "a process that is not our child died"
    return left


@pytest.mark.parametrize(("sig", "fork"), [(signal.SIGKILL, False), (signal.SIGHUP, False), (signal.SIGKILL, True)],
                         ids=["SIGKILL", "SIGHUP", "SIGKILL-while-a-fork-holds-the-control-socket"])
def test_harness_killed_takes_the_agent_and_every_descendant(sig: signal.Signals, fork: bool,
                                                            mark: tuple[str, dict[str, str]]) -> None:
    """With `fork`, a fork of Harness keeps the control socket open, so only PR_SET_PDEATHSIG (and getppid) tell
    the supervisor that Harness died."""
    token, env = mark
    keys = {"supervisor", "own", "same", "agent", *(["fork"] if fork else [])}
    harness = subprocess.Popen([PY, "-c", HARNESS, "fork" if fork else "plain", *AGENT], env=env,
                               stdout=subprocess.PIPE)
    try:
        assert harness.stdout is not None
        pids = Lines(harness.stdout.fileno()).until(keys)
        assert os.getsid(pids["own"]) == pids["own"] != os.getsid(pids["agent"]) == pids["supervisor"]
        # A process that has just printed its pid may still be exec'ing (its environ unreadable for an instant on a
        # busy machine): wait until the marks show the whole tree before killing Harness.
        deadline = time.monotonic() + 5
        while not {pid for pid, _ in marked(token)} >= set(pids.values()):
            assert time.monotonic() < deadline, (sorted(pid for pid, _ in marked(token)), pids)
            time.sleep(0.02)
        harness.send_signal(sig)
        killed = time.monotonic()
        assert harness.wait(5) == -sig
        left = wait_gone(token, 3.0, keep=frozenset({pids["fork"]} if fork else ()))
        assert not left, f"alive 3 s after {sig.name} of Harness: {left}"
        assert time.monotonic() - killed < 3.0
        assert not fork or alive(pids["fork"])  # it did keep the socket open all along
    finally:
        harness.kill()
        harness.wait()


def start(argv: list[str], env: dict[str, str], **popen: Any) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """The supervisor started by hand, as Harness starts it, once it said `ok`; and Harness's control socket."""
    ours, theirs = socket.socketpair()
    ours.settimeout(10)
    proc = subprocess.Popen(supervisor.command(argv, control_fd=theirs.fileno()), env=env, pass_fds=[theirs.fileno()],
                            start_new_session=True, **popen)
    theirs.close()
    assert ours.recv(100).startswith(b"ok ")
    return proc, ours


def test_the_spawning_thread_exiting_is_not_harness_dying(mark: tuple[str, dict[str, str]]) -> None:
    """PR_SET_PDEATHSIG fires when the parent *thread* exits; the supervisor checks its parent process first."""
    echo = [PY, "-c", "import sys\nfor line in sys.stdin: print(line.strip().upper(), flush=True)"]
    started: list[tuple[subprocess.Popen[bytes], socket.socket, int]] = []
    thread = threading.Thread(target=lambda: started.append(  # once `ok` is read PR_SET_PDEATHSIG is armed
        (*start(echo, mark[1], stdin=subprocess.PIPE, stdout=subprocess.PIPE), threading.get_native_id())))
    thread.start()
    thread.join(15)
    [(proc, ours, tid)] = started
    assert proc.stdin is not None and proc.stdout is not None
    try:
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/self/task/{tid}"):  # gone only after the kernel re-parented its children
            assert time.monotonic() < deadline
            time.sleep(0.01)
        out = Lines(proc.stdout.fileno())
        for word in ("ping", "pong"):
            os.write(proc.stdin.fileno(), word.encode() + b"\n")
            assert out.next(time.monotonic() + 10) == word.upper()
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        proc.wait()
        ours.close()


def test_the_owner_closing_the_control_socket_kills_the_run(mark: tuple[str, dict[str, str]]) -> None:
    """EOF on the control socket alone (the owner alive, no PR_SET_PDEATHSIG involved) is "the owner is gone"."""
    token, env = mark
    proc, ours = start(AGENT, env, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        pids = Lines(proc.stdout.fileno()).until({"own", "same", "agent"})
        assert all(alive(pid) for pid in pids.values())
        ours.close()
        assert proc.wait(5) == -signal.SIGTERM  # the agent's status: the supervisor SIGTERMed it
        assert not wait_gone(token, 0.0)  # it exits only once it reaped every process of the run
    finally:
        proc.kill()
        proc.wait()
        ours.close()


KEEPER = r"""
import signal, socket, subprocess, sys
from harness_core.transport.supervisor import command
ours, theirs = socket.socketpair()
proc = subprocess.Popen(command(sys.argv[1:], control_fd=theirs.fileno(), on_parent_exit="keep"),
                        pass_fds=[theirs.fileno()], start_new_session=True)
theirs.close()
print("supervisor", proc.pid, ours.recv(100).decode().strip(), flush=True)
signal.pause()
"""


def test_policy_keep_lets_the_run_go_on_without_its_owner(mark: tuple[str, dict[str, str]]) -> None:
    """The policy of a detached worker: the owner dies, the agent keeps working; its exit still cleans up."""
    token, env = mark
    echo = "import sys\nprint('up', 1, flush=True)\nfor line in sys.stdin: print(line.strip().upper(), flush=True)"
    owner = subprocess.Popen([PY, "-c", KEEPER, PY, "-c", echo], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert owner.stdin is not None and owner.stdout is not None and owner.stderr is not None
        out, err = Lines(owner.stdout.fileno()), Lines(owner.stderr.fileno())
        out.until({"supervisor", "up"})
        owner.kill()
        assert owner.wait(5) == -signal.SIGKILL
        assert "the agent keeps running (--on-parent-exit keep)" in err.next(time.monotonic() + 10)
        os.write(owner.stdin.fileno(), b"still there?\n")
        assert out.next(time.monotonic() + 10) == "STILL THERE?"
        owner.stdin.close()
        assert not wait_gone(token, 5.0)
    finally:
        owner.kill()
        owner.wait()


# -- the agent's status, signals and pipes, through ChildProcess ----------------------------------------------


@pytest.mark.parametrize(("script", "returncode", "described"), [
    ("exit 0", 0, "exit code 0"), ("exit 3", 3, "exit code 3"), ("exit 255", 255, "exit code 255"),
    ("kill -TERM $$", -signal.SIGTERM, "killed by SIGTERM"), ("kill -KILL $$", -signal.SIGKILL, "killed by SIGKILL"),
    ("kill -SEGV $$", -signal.SIGSEGV, "killed by SIGSEGV"),
])
async def test_exit_status_is_the_agents(script: str, returncode: int, described: str) -> None:
    statuses = []
    with anyio.fail_after(10):
        for supervise in (False, True):
            async with ChildProcess(["sh", "-c", script], supervise=supervise) as proc:
                statuses.append(await proc.wait())
            assert described in str(proc.exit_error("it stopped"))
    assert statuses == [returncode, returncode]


def test_dying_by_the_agents_signal_dumps_no_core_of_the_supervisor(tmp_path: Path) -> None:
    def allow_core_dumps() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    agent = ["sh", "-c", "ulimit -c 0; kill -SEGV $$"]  # the agent itself dumps no core either
    proc = subprocess.Popen(supervisor.command(agent, control_fd=None), cwd=tmp_path, preexec_fn=allow_core_dumps)
    _, status = os.waitpid(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV
    assert not os.WCOREDUMP(status)
    assert not list(tmp_path.iterdir())


SIGNALLED = (
    "import os, signal, sys\n"
    "sig = int(sys.argv[1])\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {sig})\n"
    "if sys.argv[2] == 'leave': os.setpgid(0, 0)\n"
    "print('ready', flush=True)\n"
    "assert signal.sigtimedwait({sig}, 10)\n"
    "again = signal.sigtimedwait({sig}, 0.3)\n"  # a second delivery would come within milliseconds
    "sys.stderr.write('twice' if again else 'once'); sys.exit(42)\n"
)


@pytest.mark.parametrize("where", ["group", "leave"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
async def test_a_group_signal_reaches_the_agent_once_and_the_supervisor_outlives_it(sig: int, where: str) -> None:
    """Harness's shutdown signals the group: the agent handles it (here: exits 42), exactly once — also when it
    left the group — and the supervisor waits for it instead of dying first."""
    with anyio.fail_after(10):
        async with ChildProcess([PY, "-c", SIGNALLED, str(int(sig)), where]) as proc:
            assert await proc.lines().__anext__() == b"ready"
            os.killpg(proc.pid, sig)
            assert await proc.wait() == 42
            assert proc.stderr_tail() == "once"


async def test_the_supervisor_killed_alone_takes_the_agent_with_it() -> None:
    with anyio.fail_after(10):
        async with ChildProcess([PY, "-c", "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)"]) as proc:
            agent = int(await proc.lines().__anext__())  # type: ignore[arg-type]
            os.kill(proc.pid, signal.SIGKILL)
            assert [line async for line in proc.lines()] == []  # EOF: the agent is gone, not orphaned
            assert await proc.wait() == -signal.SIGKILL
        await plain.wait_dead(agent)


async def test_the_agent_holds_harnesss_own_pipes_and_the_supervisor_none() -> None:
    """No relay: the agent writes into the very pipe Harness reads, and the supervisor keeps no copy of stdin
    or stdout (so EOF and EPIPE come from the agent alone)."""
    code = "import os, sys\nprint(os.getpid(), flush=True)\nsys.stdin.read()"
    with anyio.fail_after(10):
        async with ChildProcess([PY, "-c", code]) as proc:
            agent = int(await proc.lines().__anext__())  # type: ignore[arg-type]
            assert [pid for pid, _ in descendants(proc.pid)] == [agent]
            theirs, its, ours = fds(agent), fds(proc.pid), set(fds(os.getpid()).values())
            assert all(theirs[n].startswith("pipe:") and theirs[n] in ours for n in (0, 1, 2))
            assert its[0] == its[1] == "/dev/null" and its[2] == theirs[2]


def fds(pid: int) -> dict[int, str]:
    """What each file descriptor of `pid` is, as /proc shows it ("pipe:[1234]", a path...)."""
    found = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):  # closed meanwhile (the listing's own descriptor, say)
            found[int(name)] = os.readlink(f"/proc/{pid}/fd/{name}")
    return found


async def test_output_backpressures_through_the_supervisor(anyio_backend: str) -> None:
    """While Harness does not read, the agent can write no more than the pipe holds: nobody drains it."""
    code = (
        "import fcntl, os, sys\n"
        "os.set_blocking(1, False); capacity = fcntl.fcntl(1, 1032)\n"  # F_GETPIPE_SZ
        "written, chunk = 0, (b'x' * 1023 + b'\\n') * 64\n"
        "try:\n"
        "    while written < 64 * 1024 * 1024: written += os.write(1, chunk)\n"
        "except BlockingIOError: pass\n"
        "sys.stderr.write(f'{written} {capacity}')\n"
    )
    with anyio.fail_after(20):
        async with ChildProcess([PY, "-c", code]) as proc:
            assert await proc.wait() == 0
            written, capacity = (int(x) for x in proc.stderr_tail().split())
            # asyncio's transport reads ahead into its own buffer (up to 2 x 64 KiB, in reads of <= 256 KiB).
            assert 0 < written <= capacity + (0 if anyio_backend == "trio" else 384 * 1024) < 64 * 1024 * 1024
            got = [line async for line in proc.lines()]
    assert sum(len(line) + 1 for line in got if isinstance(line, bytes)) == written


async def test_the_agent_starts_with_exactly_the_environment_and_signal_state_it_would_get() -> None:
    """-I -S and Python's start-up change nothing for the agent: not the environment (no PEP 538 LC_CTYPE, the
    PYTHON* variables passed on), not the blocked or ignored signals (Python ignores SIGPIPE itself)."""
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": "/nowhere", "LANG": "C", "ONLY": "this"}
    seen = []
    with anyio.fail_after(10):
        for supervise in (False, True):
            async with ChildProcess(["cat", "/proc/self/status", "/proc/self/environ"], env=env,
                                    supervise=supervise) as proc:
                *status, environ = [line async for line in proc.lines() if isinstance(line, bytes)]
            seen.append(([line for line in status if line.startswith((b"SigBlk", b"SigIgn"))],
                         sorted(e for e in environ.split(b"\0") if e and not e.startswith(b"HARNESS_PROC_"))))
    assert seen[0] == seen[1] and seen[1][0] and b"ONLY=this" in seen[1][1]
    assert not any(entry.startswith(b"LC_CTYPE") for entry in seen[1][1])


async def test_a_broken_supervisor_is_a_spawn_failure_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervisor, "_BOOT", "import sys; sys.stderr.write('no prctl here'); sys.exit(3)")
    with anyio.fail_after(10), pytest.raises(SpawnFailedError) as info:
        async with ChildProcess(["true"]):
            pass
    assert str(info.value).startswith("cannot start true: its process supervisor (")
    assert all(part in str(info.value) for part in ("(exit status 3): no prctl here", "without `supervise`"))


# -- the supervisor's own command line -------------------------------------------------------------------------


def test_command_line_is_checked() -> None:
    opts = parse(["--control-fd", "5", "--parent", "1", "--on-parent-exit", "keep", "--grace", ".2", "--", "a", "-x"])
    assert (opts.argv, opts.control_fd, opts.parent, opts.on_parent_exit, opts.grace) == (["a", "-x"], 5, 1, "keep", .2)
    for args, message in [
        (["a"], "no `--`"), (["--"], "no agent command"), (["--grace", "--", "a"], "has no value"),
        (["--wat", "1", "--", "a"], "unknown option --wat"), (["--on-parent-exit", "x", "--", "a"], "kill or keep"),
        (["--grace", "soon", "--", "a"], "not a number"), (["--grace", "600", "--", "a"], "between 0 and 60"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse(args)
    run = subprocess.run([PY, "-I", "-S", supervisor._supervise.__file__, "a"], capture_output=True, text=True)
    assert run.returncode == 2 and "no `--`" in run.stderr and "usage:" in run.stderr
