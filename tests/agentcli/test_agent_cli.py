"""Tests for agent-CLI discovery (harness_core.agentcli), with small scripts in tmp_path."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import anyio
import pytest

from harness_core.agentcli import binary, cache, version as clis
from harness_core.errors import CliNotFoundError, CliVersionUnsupportedError, SpawnFailedError


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _locate(name: str, explicit: str | None = None, **kw: object) -> Path:
    return binary.locate_cli(name, explicit, install_hint="npm i -g fake", option_name="fake_bin", **kw)  # type: ignore[arg-type]


def test_explicit_wins_over_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = _script(tmp_path / "bin" / "fake", "print('1.0.0')")
    explicit = _script(tmp_path / "other" / "fake", "print('2.0.0')")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert _locate("fake") == on_path
    assert _locate("fake", str(explicit)) == explicit


@pytest.mark.parametrize("kind", ["missing", "not_executable", "directory"])
def test_explicit_bad_path(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "fake"
    if kind == "not_executable":
        target.write_text("x")
    elif kind == "directory":
        target.mkdir()
    with pytest.raises(CliNotFoundError) as info:
        _locate("fake", str(target))
    assert f"fake_bin={target} does not exist or is not executable" in str(info.value)
    assert info.value.code == "cli_not_found"


def test_not_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CliNotFoundError) as info:
        _locate("fake")
    assert (
        str(info.value) == "fake not found on PATH; install it with `npm i -g fake` or set the fake_bin option to its "
        "path (on the command line -o fake_bin=PATH)"
    )


def _fake_npm_install(prefix: Path) -> tuple[Path, Path]:
    """An npm-prefix layout: .bin/fake -> pkg/bin/fake.js (wrapper), native binary in a platform package."""
    wrapper = _script(
        prefix / "node_modules" / "@acme" / "fake" / "bin" / "fake.js", "print('wrapper 1.0.0')"
    )
    native = _script(
        prefix / "node_modules" / "@acme" / "fake-linux-x64" / "vendor" / "x86_64" / "bin" / "fake",
        "print('native 1.0.0')",
    )
    bindir = prefix / "node_modules" / ".bin"
    bindir.mkdir(parents=True)
    (bindir / "fake").symlink_to(os.path.relpath(wrapper, bindir))
    return bindir / "fake", native


def _alive(pid: int) -> bool:
    """True if `pid` is a live process (a zombie reaped by someone else counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


GLOBS = ("node_modules/@acme/fake-linux-*/vendor/*/bin/fake",)


def test_node_wrapper_resolves_to_native(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link, native = _fake_npm_install(tmp_path / "prefix")
    outer = tmp_path / "bin"
    outer.mkdir()
    (outer / "fake").symlink_to(link)
    monkeypatch.setenv("PATH", str(outer))
    assert _locate("fake", native_globs=GLOBS) == native
    assert _locate("fake", str(outer / "fake"), native_globs=GLOBS) == native
    # Without globs, or when no glob matches an executable, the path found is returned as is.
    assert _locate("fake") == outer / "fake"
    native.chmod(0o644)
    assert _locate("fake", native_globs=GLOBS) == outer / "fake"


def test_globs_ignored_outside_node_modules(tmp_path: Path) -> None:
    plain = _script(tmp_path / "fake", "print('1.0.0')")
    _script(tmp_path / "node_modules" / "@acme" / "fake-linux-x64" / "vendor" / "x" / "bin" / "fake", "")
    assert _locate("fake", str(plain), native_globs=GLOBS) == plain


@pytest.mark.anyio
async def test_cli_version_parses_first_match(tmp_path: Path) -> None:
    exe = _script(tmp_path / "fake", "import sys; print('fake-cli 1.2.3 (build 4.5.6)'); sys.exit(0)")
    assert await clis.cli_version(exe) == "1.2.3"
    assert await clis.cli_version(exe, pattern=r"build (\S+)\)") == "4.5.6"


@pytest.mark.anyio
async def test_cli_version_failure_includes_output(tmp_path: Path) -> None:
    exe = _script(tmp_path / "fake", "import sys; print('boom: no config'); sys.exit(3)")
    with pytest.raises(SpawnFailedError) as info:
        await clis.cli_version(exe)
    assert "exited with status 3" in str(info.value)
    assert "boom: no config" in str(info.value)


@pytest.mark.anyio
async def test_cli_version_no_version_in_output(tmp_path: Path) -> None:
    exe = _script(tmp_path / "fake", "print('hello')")
    with pytest.raises(SpawnFailedError, match=r"printed no version.*hello"):
        await clis.cli_version(exe)


@pytest.mark.anyio
async def test_cli_version_timeout_kills_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    exe = _script(
        tmp_path / "fake",
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "print('starting', flush=True); time.sleep(60)",
    )
    with pytest.raises(SpawnFailedError, match=r"did not finish within 0.5s.*starting"):
        await clis.cli_version(exe, timeout=0.5)
    grandchild = int(pidfile.read_text())
    # The grandchild was in the killed group; once reaped by init it is gone (or a zombie not ours to reap).
    # SIGKILL is delivered asynchronously and init reaps the orphan: poll its state under a deadline.
    with anyio.fail_after(5):
        while _alive(grandchild):  # noqa: ASYNC110 - no event exists for "another process died"
            await anyio.sleep(0.01)


@pytest.mark.anyio
async def test_cli_version_missing_and_not_executable(tmp_path: Path) -> None:
    with pytest.raises(CliNotFoundError):
        await clis.cli_version(tmp_path / "nope")
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x00\x01 not an executable")
    bad.chmod(0o755)
    with pytest.raises(SpawnFailedError, match="could not run"):
        await clis.cli_version(bad)


@pytest.mark.parametrize(
    ("found", "minimum", "ok"),
    [
        ("1.10.0", "1.9.9", True),
        ("1.9.9", "1.10.0", False),
        ("2.0", "2.0.0", True),
        ("0.169.0", "0.169.0", True),
    ],
)
def test_require_min_version(found: str, minimum: str, ok: bool) -> None:
    if ok:
        clis.require_min_version("fake", found, minimum, install_hint="npm i -g fake@latest")
        return
    with pytest.raises(CliVersionUnsupportedError) as info:
        clis.require_min_version("fake", found, minimum, install_hint="npm i -g fake@latest")
    msg = str(info.value)
    assert found in msg and minimum in msg and "npm i -g fake@latest" in msg


@pytest.mark.anyio
async def test_probe_cli_caches_by_path_and_mtime(tmp_path: Path) -> None:
    cache.clear_probe_cache()
    counter = tmp_path / "count"
    exe = _script(tmp_path / "fake", f"open({str(counter)!r}, 'a').write('x'); print('fake 1.2.3')")
    kw = {"install_hint": "npm i -g fake", "option_name": "fake_bin", "minimum": "1.0.0"}
    info = await clis.probe_cli("fake", str(exe), **kw)  # type: ignore[arg-type]
    assert (info.path, info.version) == (str(exe), "1.2.3")
    await clis.probe_cli("fake", str(exe), **kw)  # type: ignore[arg-type]
    assert counter.read_text() == "x"
    _script(exe, f"open({str(counter)!r}, 'a').write('x'); print('fake 0.9.0')")
    os.utime(exe, ns=(exe.stat().st_atime_ns, exe.stat().st_mtime_ns + 1_000_000_000))
    with pytest.raises(CliVersionUnsupportedError):
        await clis.probe_cli("fake", str(exe), **kw)  # type: ignore[arg-type]
    assert counter.read_text() == "xx"
