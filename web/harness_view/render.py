"""Pages as HTML: the Jinja environment (autoescaping everything: agent output is untrusted), its filters
(durations, ages, tokens, money, diff lines) and the links of a page, served (`/runs/ID`) or bundled (`runs/ID.html`).

Knows the templates and how values read; knows nothing of HTTP, the run store or where pages are sent.
"""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

__all__ = ["Links", "environment", "render"]


@dataclass(frozen=True)
class Links:
    """Where a page's links go: the server's routes, or the files of a bundle (`depth` folders below its root)."""

    bundle: bool = False
    depth: int = 0

    @property
    def root(self) -> str:
        return "../" * self.depth

    def runs(self, **query: str) -> str:
        if self.bundle:
            return f"{self.root}index.html"
        kept = {k: v for k, v in query.items() if v}
        return "/" + (f"?{urlencode(kept)}" if kept else "")

    def run(self, run_id: str) -> str:
        return f"{self.root}runs/{quote(run_id)}.html" if self.bundle else f"/runs/{quote(run_id)}"

    def file(self, run_id: str, suffix: str) -> str:
        """A file of the run: `log` (its JSONL), `wire`, `worker` (a background worker's output)."""
        if self.bundle:
            return f"{self.root}runs/{quote(run_id)}.jsonl"
        return f"/runs/{quote(run_id)}/{suffix}"

    def batch(self, key: str) -> str:
        return f"{self.root}batch-{quote(key)}.html" if self.bundle else f"/batches/{quote(key)}"

    def static(self, name: str) -> str:
        return f"{self.root}{name}" if self.bundle else f"/static/{quote(name)}"


def _duration(ms: int | float | None) -> str:
    if ms is None:
        return "–"
    seconds = ms / 1000
    if seconds < 1:
        return f"{ms:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _seconds(value: float | None) -> str:
    return _duration(value * 1000 if value is not None else None)


def _age(ts: float | None, now: float | None = None) -> str:
    if ts is None:
        return "–"
    delta = max(0.0, (now or time.time()) - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if delta >= size:
            return f"{int(delta // size)} {unit} ago"
    return f"{int(delta)} s ago"


def _when(ts: float | None) -> str:
    if ts is None:
        return ""
    return datetime.datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S %z")  # a copy travels


def _tokens(value: int | None) -> str:
    if value is None:
        return "–"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    return f"{value / 1000:.1f}k".replace(".0k", "k") if value >= 10_000 else str(value)


def _cost(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _diff_lines(diff: str | None) -> list[tuple[str, str]]:
    """A unified diff as (css class, line) pairs: `add`, `del`, `hunk`, `meta` or `ctx`."""
    out: list[tuple[str, str]] = []
    for line in (diff or "").splitlines():
        if line.startswith(("+++", "---")):
            out.append(("meta", line))
        elif line.startswith("+"):
            out.append(("add", line))
        elif line.startswith("-"):
            out.append(("del", line))
        elif line.startswith("@@"):
            out.append(("hunk", line))
        else:
            out.append(("ctx", line))
    return out


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _short(text: str | None, limit: int = 160) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def environment() -> Environment:
    """The templates of `harness_view/templates`, every value escaped (`autoescape` for every file)."""
    env = Environment(loader=PackageLoader("harness_view", "templates"), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(duration=_duration, seconds=_seconds, age=_age, when=_when, tokens=_tokens, cost=_cost,
                       percent=_percent, diff_lines=_diff_lines, pretty=_pretty, short=_short)
    return env


_ENV = environment()


def render(name: str, **context: Any) -> str:
    """The template `name` rendered with `context` (which must hold `links`)."""
    return _ENV.get_template(name).render(**context)
