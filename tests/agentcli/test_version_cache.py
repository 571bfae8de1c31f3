"""`probe_cli` remembers a CLI's version across processes: keyed by the file's identity and the pattern, written
atomically, ignored when corrupt or unwritable, holding paths and versions only."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import anyio
import pytest

import harness_core.agentcli.cache as probe_cache
import harness_core.agentcli.cache_switch as cache_switch
import harness_core.agentcli.version as clis
from harness_core.errors import CliVersionUnsupportedError

KW = {"install_hint": "npm i -g fake", "option_name": "fake_bin", "minimum": "1.0.0"}


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setattr(cache_switch, "_disk_cache", [True])  # what `harness` (cli.main) turns on
    probe_cache._version_cache.clear()
    return home


def _fake(path: Path, counter: Path, version: str = "1.2.3") -> Path:
    path.write_text(f"#!{sys.executable}\nopen({str(counter)!r}, 'a').write('x')\nprint('fake {version}')\n")
    path.chmod(0o755)
    return path


def _spawns(counter: Path) -> int:
    return len(counter.read_text()) if counter.exists() else 0


async def _probe(exe: Path, **kw: object) -> str:
    info = await clis.probe_cli("fake", str(exe), **{**KW, **kw})  # type: ignore[arg-type]
    assert info.version is not None
    return info.version


def _cache_file(home: Path) -> Path:
    return home / "harness" / "cli-versions.json"


@pytest.mark.anyio
async def test_a_later_process_reads_the_version_from_the_cache_file(tmp_path: Path, cache_home: Path) -> None:
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    assert await _probe(exe) == "1.2.3"
    probe_cache._version_cache.clear()  # what a new process starts with
    assert await _probe(exe) == "1.2.3"
    assert _spawns(counter) == 1
    code = ("import anyio, harness_core.agentcli.cache as k, harness_core.agentcli.version as c\nk.use_disk_cache()\n"
            f"print(anyio.run(lambda: c.probe_cli('fake', {str(exe)!r}, install_hint='x', option_name='fake_bin', "
            "minimum='1.0.0')).version)")
    out = await anyio.run_process([sys.executable, "-c", code], check=True,
                                  env={**os.environ, "XDG_CACHE_HOME": str(cache_home)})
    assert out.stdout.decode().strip() == "1.2.3"
    assert _spawns(counter) == 1


@pytest.mark.anyio
async def test_a_changed_binary_is_probed_again(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    await _probe(exe)
    _fake(exe, counter, "1.10.0")  # another size
    probe_cache._version_cache.clear()
    assert await _probe(exe) == "1.10.0"
    before = exe.stat()
    _fake(exe, counter, "1.20.0")  # same size: only the mtime tells
    os.utime(exe, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    probe_cache._version_cache.clear()
    assert await _probe(exe) == "1.20.0"
    assert _spawns(counter) == 3


@pytest.mark.anyio
async def test_the_pattern_is_part_of_the_key(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    assert await _probe(exe) == "1.2.3"
    assert await _probe(exe, pattern=r"fake (\d+\.\d+)") == "1.2"
    probe_cache._version_cache.clear()
    assert (await _probe(exe), await _probe(exe, pattern=r"fake (\d+\.\d+)")) == ("1.2.3", "1.2")
    assert _spawns(counter) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"format": 1, "entries": []}', b'{"format": 2}',
                                     b'{"format": 1, "entries": {"k": {"version": 3, "at": 0}}}', b"\xff\xfe",
                                     b"x" * (probe_cache._CACHE_MAX_BYTES + 10)])
async def test_a_corrupt_cache_file_is_ignored_and_replaced(tmp_path: Path, cache_home: Path, content: bytes) -> None:
    _cache_file(cache_home).parent.mkdir(parents=True)
    _cache_file(cache_home).write_bytes(content)
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    assert await _probe(exe) == "1.2.3"
    data = json.loads(_cache_file(cache_home).read_text())
    assert data["format"] == 1 and [e["version"] for e in data["entries"].values()] == ["1.2.3"]


@pytest.mark.anyio
async def test_an_unwritable_cache_only_means_probing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # harness/ cannot be created under a file
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    assert await _probe(exe) == "1.2.3"
    assert await _probe(exe) == "1.2.3"  # still cached in the process
    probe_cache._version_cache.clear()
    assert await _probe(exe) == "1.2.3"
    assert _spawns(counter) == 2


@pytest.mark.anyio
async def test_the_file_holds_paths_and_versions_only_written_atomically(tmp_path: Path, cache_home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-secret-value-1234567890")
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    await _probe(exe)
    directory = _cache_file(cache_home).parent
    assert sorted(p.name for p in directory.iterdir()) == ["cli-versions.json"]  # no temporary file left
    assert stat.S_IMODE(_cache_file(cache_home).stat().st_mode) & 0o077 == 0
    text = _cache_file(cache_home).read_text()
    assert "sk-secret" not in text
    (key, entry), = json.loads(text)["entries"].items()
    assert json.loads(key)[0] == str(exe.resolve()) and entry["version"] == "1.2.3"
    assert set(entry) == {"version", "at"}


@pytest.mark.anyio
async def test_the_file_keeps_the_newest_entries_only(tmp_path: Path, cache_home: Path) -> None:
    counter = tmp_path / "count"
    for i in range(probe_cache._CACHE_ENTRIES + 5):
        await _probe(_fake(tmp_path / f"fake{i}", counter))
    entries = json.loads(_cache_file(cache_home).read_text())["entries"]
    assert len(entries) == probe_cache._CACHE_ENTRIES
    assert json.loads(max(entries, key=lambda k: entries[k]["at"]))[0].endswith(f"fake{probe_cache._CACHE_ENTRIES + 4}")


@pytest.mark.anyio
async def test_clear_probe_cache_forgets_the_file_too(tmp_path: Path, cache_home: Path) -> None:
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    await _probe(exe)
    probe_cache.clear_probe_cache()
    assert not _cache_file(cache_home).exists()
    await _probe(exe)
    assert _spawns(counter) == 2


@pytest.mark.anyio
async def test_a_too_old_cached_version_still_fails_the_probe(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter, "0.9.0")
    for _ in range(2):
        probe_cache._version_cache.clear()
        with pytest.raises(CliVersionUnsupportedError):
            await _probe(exe)
    assert _spawns(counter) == 1


@pytest.mark.anyio
async def test_a_library_caller_writes_no_cache_file(tmp_path: Path, cache_home: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the `harness` CLI keeps versions on disk; a program using the Python API writes nothing under the
    user's home by itself (it keeps them in memory)."""
    monkeypatch.setattr(cache_switch, "_disk_cache", [False])
    counter = tmp_path / "count"
    exe = _fake(tmp_path / "fake", counter)
    assert await _probe(exe) == "1.2.3" and await _probe(exe) == "1.2.3"
    assert _spawns(counter) == 1 and not _cache_file(cache_home).exists()


@pytest.mark.anyio
async def test_no_home_at_all_means_no_disk_cache_not_a_failed_probe(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME")

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    exe = _fake(tmp_path / "fake", tmp_path / "count")
    assert await _probe(exe) == "1.2.3"


def test_a_probes_answer_is_kept_by_a_hash_of_its_command_and_expires(tmp_path: Path, cache_home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`remember_probe`/`cached_probe` (what a provider's probe learned about a binary): the probe's command line,
    which may carry a secret, never reaches the file; an answer older than `PROBE_TTL` is probed again."""
    exe = _fake(tmp_path / "agent", tmp_path / "count")
    what = "acp-initialize:--api-key\0sk-proj-Qm7Tz2Lx9Vb4Nc8Rw1"
    probe_cache.remember_probe(exe, what, {"capabilities": ["session"], "version": "1.2.3"})
    assert probe_cache.cached_probe(exe, what) == {"capabilities": ["session"], "version": "1.2.3"}
    text = _cache_file(cache_home).read_text()
    assert "sk-proj" not in text and "api-key" not in text and "session" in text
    probe_cache._probe_data.clear()  # another process: only the file
    assert probe_cache.cached_probe(exe, what) is not None
    assert probe_cache.cached_probe(exe, what + "x") is None
    probe_cache._probe_data.clear()
    real_time = probe_cache.time.time
    monkeypatch.setattr(probe_cache.time, "time", lambda: real_time() + probe_cache.PROBE_TTL + 1)
    assert probe_cache.cached_probe(exe, what) is None, "an answer older than the TTL must be probed again"
