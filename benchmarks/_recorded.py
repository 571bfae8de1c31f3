"""Benchmark support: the recorded real transcripts the stand-in floods are built from, and the checks that
keep them real-shaped.

The floods (`flood_codex.py`, `flood_claude.py`, `flood_acp.py`) copy their lines from transcripts recorded from
the real CLIs (codex-cli 0.169.0 `app-server`, Claude Code 2.1.328 `stream-json` with partial messages, Gemini CLI
0.61.0 over ACP), kept in the repo under `providers/*/tests/transcripts/`. Only the repeated text delta is
generated: 40 characters of text per delta (a pool of distinct texts), a distinct UUID per Claude
`stream_event`. `shape()` is what `providers/*/tests/test_bench_flood.py` compares line for line against the
recording: the key order and value types, recursively.

Benchmarks only; nothing in the library imports this.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parent.parent
CODEX_TRANSCRIPT = ROOT / "providers/codex_appserver/tests/transcripts/shared/transcript-appserver.jsonl"
CODEX_OUTPUT_TRANSCRIPT = ROOT / "providers/codex_appserver/tests/transcripts/shared/transcript-approval.jsonl"
CLAUDE_TRANSCRIPT = ROOT / "providers/claude/tests/transcripts/shared/transcript-bash-partial.jsonl"
GEMINI_TRANSCRIPTS = ROOT / "providers/acp/tests/transcripts/gemini"
GEMINI_TRANSCRIPT = GEMINI_TRANSCRIPTS / "say.jsonl"

DELTA_CHARS = 40
_WORDS = (
    "the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wizards",
    "quietly", "hex", "every", "jovial", "sphinx", "of", "black", "quartz", "judging", "my", "vow", "as", "a",
    "file", "is", "read", "and", "a", "test", "is", "run", "again", "then",
)


def codex_messages(path: Path = CODEX_TRANSCRIPT) -> list[tuple[str, dict[str, Any]]]:
    """The recorded app-server messages as (direction, message): "in" is what codex wrote."""
    return _rpc_messages(path)


def acp_messages(path: Path = GEMINI_TRANSCRIPT) -> list[tuple[str, dict[str, Any]]]:
    """The recorded ACP messages of Gemini CLI 0.61.0 as (direction, message): "in" is what the agent wrote."""
    return _rpc_messages(path)


def _rpc_messages(path: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for raw in fh:
            record = json.loads(raw)
            if "dir" in record and "msg" in record:  # a recording may hold notes of its own
                out.append((record["dir"], record["msg"]))
    return out


def claude_lines(path: Path = CLAUDE_TRANSCRIPT) -> list[dict[str, Any]]:
    """The recorded stdout lines of Claude Code, parsed (key order kept)."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(raw) for raw in fh if raw.strip()]


def compact(obj: object) -> bytes:
    """One line as the real CLIs write it: compact JSON, non-ASCII kept."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def delta_texts(count: int = 64, width: int = DELTA_CHARS, seed: int = 14) -> list[str]:
    """`count` distinct texts of exactly `width` characters, made of words and spaces."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < count:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < width:
            words.append(rng.choice(_WORDS))
        text = " ".join(words)[:width - 1] + " "
        if text not in texts:
            texts.append(text)
    return texts


def fake_uuids(count: int, seed: int = 14) -> list[str]:
    """`count` version-4-shaped UUIDs (36 characters), repeatable."""
    rng = random.Random(seed)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]


def shape(obj: Any) -> Any:
    """What a line looks like without its values: dicts keep their key order, lists their items' shapes
    (deduplicated), scalars become their JSON type name."""
    if isinstance(obj, dict):
        return [(key, shape(value)) for key, value in obj.items()]
    if isinstance(obj, list):
        seen: list[Any] = []
        for item in obj:
            item_shape = shape(item)
            if item_shape not in seen:
                seen.append(item_shape)
        return ["list", seen]
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, (int, float)):
        return "number"
    return "string"


class Repeats:
    """N lines cycled from a block of pre-serialized distinct lines: written in ~1 MiB writes, so the
    producer costs almost nothing and blocks on the pipe when the reader is slow."""

    def __init__(self, lines: list[bytes], texts: list[str], count: int) -> None:
        self.lines, self.texts, self.count = lines, texts, count

    def text(self) -> str:
        """The concatenated text of all `count` deltas, in order."""
        full, rest = divmod(self.count, len(self.texts))
        return "".join(self.texts) * full + "".join(self.texts[:rest])

    def chunks(self) -> Iterator[bytes]:
        block = b"".join(self.lines)
        per_write = max(1, (1 << 20) // max(1, len(block)))
        full, rest = divmod(self.count, len(self.lines))
        big = block * per_write
        writes, single = divmod(full, per_write)
        for _ in range(writes):
            yield big
        if single:
            yield block * single
        if rest:
            yield b"".join(self.lines[:rest])


def flood_lines(script: str, **env: str) -> list[bytes]:
    """The lines a flood writes with `FLOOD_RAW=1` and `env` (for the shape tests), newlines kept."""
    out = subprocess.run([sys.executable, str(Path(__file__).parent / script)],
                         env={**os.environ, "FLOOD_RAW": "1", **env}, capture_output=True, check=True,
                         timeout=60).stdout
    return out.splitlines(keepends=True)


def write_all(out: BinaryIO, head: bytes, repeats: Repeats, tail: bytes) -> None:
    out.write(head)
    for chunk in repeats.chunks():
        out.write(chunk)
    out.write(tail)
    out.flush()
