"""Hot-path event constructors for providers: the same events, made without pydantic's validation.

Layer: core models (a helper of `events`). Knows the event models' fields; nothing of runs or providers. Each
constructor makes an event equal in every way to the validated one (`tests/run/test_fast_events.py` checks it);
the caller guarantees the field types.
"""

from __future__ import annotations

from harness_core.events import TextDelta

__all__ = ["fast_text_delta"]


def fast_text_delta(text: str, item_id: str | None = None) -> TextDelta:
    """`TextDelta(text=text, item_id=item_id)` without pydantic's validation (half the cost), for a provider's
    hot path: the caller guarantees the types (`text` a str, `item_id` a str or None). The event is equal to the
    validated one in every way (fields, fields set, JSON, copy); a test checks it."""
    event = _new_event(TextDelta)
    _set_attr(event, "__dict__", {"run_id": "", "seq": -1, "ts": 0.0, "type": "text_delta", "text": text,
                                  "item_id": item_id})
    _set_attr(event, "__pydantic_fields_set__", {"text", "item_id"})
    _set_attr(event, "__pydantic_extra__", None)
    _set_attr(event, "__pydantic_private__", None)
    return event


_new_event = object.__new__
_set_attr = object.__setattr__
