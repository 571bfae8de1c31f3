"""The live view's held text (`Renderer.on_held`, `terminal.Output`): streamed text written in one piece once the
consumer has caught up, never held past that or a short deadline, and never out of order with other lines."""

from __future__ import annotations

import io

import anyio

import harness_core.testing.scripted as scripted
from harness_core.cli.render import Renderer, terminal as term
from harness_core.events import Done, HarnessResult, Notice, ReasoningDelta, RunStatus, TextDelta
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec


class Stream(io.StringIO):
    """A terminal-like stream that counts its writes and flushes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.flushes = 0

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)

    def flush(self) -> None:
        self.flushes += 1


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def held_renderer(**kwargs: object) -> tuple[Renderer, Stream, Clock, list[int]]:
    out, clock, calls = Stream(), Clock(), []
    renderer = Renderer(out, clock=clock, **kwargs)  # type: ignore[arg-type]
    renderer.on_held = lambda: calls.append(1)
    return renderer, out, clock, calls


def test_without_an_owner_every_delta_is_written_and_flushed_at_once() -> None:
    out = Stream()
    renderer = Renderer(out)
    assert renderer.on_held is None
    for piece in ("one ", "two ", "three"):
        renderer.feed(TextDelta(text=piece))
        assert out.getvalue().endswith(piece) and out.flushes == out.writes
    assert out.getvalue() == "one two three"


def test_held_text_is_written_in_one_piece_when_the_owner_flushes() -> None:
    renderer, out, _clock, calls = held_renderer()
    for i in range(100):
        renderer.feed(TextDelta(text=f"t{i} "))
    assert out.getvalue() == "" and calls == [1]  # the owner is told once, when text starts being held
    renderer.flush()
    assert out.getvalue() == "".join(f"t{i} " for i in range(100)) and out.writes == 1
    renderer.feed(TextDelta(text="more"))
    assert calls == [1, 1]  # held again: told again
    renderer.flush()
    assert out.getvalue().endswith("more")


def test_text_still_coming_is_not_held_past_the_deadline() -> None:
    renderer, out, clock, _calls = held_renderer()
    renderer.feed(TextDelta(text="a"))
    clock.now += term.HOLD_TEXT_AT_MOST / 2
    renderer.feed(TextDelta(text="b"))
    assert out.getvalue() == ""
    clock.now += term.HOLD_TEXT_AT_MOST / 2
    renderer.feed(TextDelta(text="c"))
    assert out.getvalue() == "abc"


def test_other_lines_write_the_held_text_first_in_order() -> None:
    renderer, out, _clock, _calls = held_renderer()
    renderer.feed(TextDelta(text="partial answer"))
    renderer.feed(Notice(level="warning", code="x", message="reconnecting"))
    renderer.feed(TextDelta(text="rest\n"))
    renderer.feed(Done(result=HarnessResult(status=RunStatus.SUCCESS, final_text="partial answerrest")))
    renderer.close()
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["partial answer", "[warning] reconnecting", "rest"]
    assert lines[3].startswith("✓ success")


def test_tick_and_hold_write_the_held_text() -> None:
    renderer, out, _clock, _calls = held_renderer(live=True)
    renderer.feed(TextDelta(text="mid-line"))
    renderer.tick()  # no status line while text is mid-line, but the text is written
    assert out.getvalue() == "mid-line"
    renderer.feed(TextDelta(text=" more"))
    renderer.hold()  # a question is about to be asked: the screen must be complete
    assert out.getvalue() == "mid-line more\n"


def test_verbose_reasoning_is_held_like_text() -> None:
    renderer, out, _clock, calls = held_renderer(verbose=True)
    renderer.feed(ReasoningDelta(text="thinking", item_id="r1"))
    renderer.feed(ReasoningDelta(text=" more", item_id="r1"))
    assert out.getvalue() == "" and calls == [1]
    renderer.flush()
    assert out.getvalue() == "[thinking] thinking more"


def test_control_characters_are_dropped_from_held_text_too() -> None:
    renderer, out, _clock, _calls = held_renderer()
    renderer.feed(TextDelta(text="safe\x1b]52;c;evil\x07 text\ttab\n"))
    renderer.flush()
    assert out.getvalue() == "safe]52;c;evil text\ttab\n"


def test_the_run_drivers_consumer_writes_held_text_once_caught_up() -> None:
    """`cli.foreground.live._consume` with a renderer: the renderer holds text, the run's caught-up hook
    writes it, and nothing is left held or hooked at the end."""

    from harness_core import open_run
    from harness_core.cli.foreground import live as _live

    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
    out = Stream()
    renderer = Renderer(out, width=lambda: 200)  # a terminal wide enough for the final line on one line

    async def main() -> None:
        spec = AgentRunSpec(prompt="x", provider_options={"scenario": "say"})
        async with open_run(spec, "scripted", host=host, run_log=False) as live:
            await _live._consume(live, renderer.feed, renderer)
        renderer.close()

    anyio.run(main)
    assert renderer.on_held is None
    assert out.getvalue().rstrip().splitlines()[-1].startswith("✓ success")
    assert out.writes < out.getvalue().count(" ") + 2  # (fewer writes than words: deltas were batched or few)
