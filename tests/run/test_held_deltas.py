"""A secret streamed in pieces never reaches the run log whole: `HeldDeltas` holds a delta back while its tail may be
the start of a known value, and masks the value across the pieces once the next delta completes it. The run log as
a whole is checked in `tests/run/test_replay.py` (a real child saying a `spec.env` value in two pieces)."""

from __future__ import annotations

import itertools

import pytest

from harness_core._run.held_deltas import HeldDeltas, pending_start
from harness_core.events import TextDelta

SECRET = "sk-live-0123456789abcdef"


def _stream(pieces: list[str], known: tuple[str, ...] = (SECRET,)) -> list[str]:
    """What the run log gets for `pieces` streamed one delta each, then another event."""
    held, written = HeldDeltas(known), []
    for piece in pieces:
        event = TextDelta(text=piece)
        if held.events or pending_start(piece, held.known) is not None:
            written += [text for _, text in held.hold(event, piece)]
        else:
            written.append(piece)
    return written + [text for _, text in held.release()]


@pytest.mark.parametrize("cuts", [[3], [9], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                              22, 23], [5, 17]])
def test_a_secret_streamed_in_pieces_is_masked_across_them(cuts: list[int]) -> None:
    text = f"the key is {SECRET}, keep it"
    bounds = [0, *(len("the key is ") + c for c in cuts), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    written = _stream(pieces)
    assert len(written) == len(pieces)  # one line per delta, in order
    assert "".join(written) == "the key is ***, keep it"
    assert all(SECRET[:8] not in w for w in written)


def test_a_prefix_that_goes_elsewhere_is_written_as_it_was() -> None:
    pieces = ["we use sk-", "live", " keys", " daily"]
    assert _stream(pieces) == pieces


def test_deltas_without_a_prefix_of_a_secret_are_never_held() -> None:
    held = HeldDeltas((SECRET,))
    assert pending_start("plain words, nothing here", held.known) is None
    assert pending_start("ends with sk", held.known) == len("ends with ")



def test_the_quick_look_agrees_with_the_full_one() -> None:
    """`may_begin` (three set lookups first) says what `pending_start` says, on every cut of text around secrets."""
    known = (SECRET, "another-secret-value-xyz")
    held = HeldDeltas(known)
    text = f"a {SECRET} b sk-l an another-secret-value-xyz s, sk-live-0 done"
    for end in range(len(text) + 1):
        for start in range(0, end, 7):
            piece = text[start:end]
            assert held.may_begin(piece) is (pending_start(piece, held.known) is not None), piece
