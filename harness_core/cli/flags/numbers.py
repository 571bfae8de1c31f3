"""`Number`: the parameter type of every numeric option: a finite number (`inf` only where it means something, as
"no limit") inside the option's range, or a usage error saying what fits.

Layer: CLI start-up (click only). Knows nothing of runs, providers or specs.
"""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["Number"]


class Number(click.ParamType):  # type: ignore[type-arg]
    """An `int` (or, `real=True`, a `float`) with `low <= value <= high` (`low_open`/`high_open`: strictly);
    `inf` is accepted only with `inf_means` (what it stands for, e.g. "no idle timeout") and converts to None."""

    def __init__(self, *, real: bool = False, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, unit: str = "", inf_means: str | None = None,
                 example: str | None = None) -> None:
        self.real = real
        self.low, self.high = low, high
        self.low_open, self.high_open = low_open, high_open
        self.unit = unit
        self.inf_means = inf_means
        self.example = example
        self.name = "number" if real else "integer"

    def _range(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        low = None if self.low is None else f"{'more than' if self.low_open else 'at least'} {self.low:g}{unit}"
        high = None if self.high is None else f"{'less than' if self.high_open else 'at most'} {self.high:g}{unit}"
        what = " and ".join(part for part in (low, high) if part) or "any finite number"
        return what + (f" (or `inf` for {self.inf_means})" if self.inf_means else "")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            self.fail(f"{_shown(value)} is not a number: give {self._range()}", param, ctx)
        number = value if isinstance(value, (int, float)) else self._parse(str(value).strip(), param, ctx)
        if isinstance(number, float):  # an int is never inf or nan (and one past float's range cannot become one)
            if math.isinf(number) and number > 0 and self.inf_means:
                return None
            if not math.isfinite(number):
                self.fail(f"{_shown(value)} is not a finite number: give {self._range()}", param, ctx)
            if not self.real and number != int(number):
                self.fail(f"{_shown(value)} is not a whole number: give {self._range()}", param, ctx)
        try:
            number = float(number) if self.real else int(number)
        except OverflowError:
            self.fail(f"{_shown(value)} is out of range: give {self._range()}", param, ctx)
        too_low = self.low is not None and (number <= self.low if self.low_open else number < self.low)
        too_high = self.high is not None and (number >= self.high if self.high_open else number > self.high)
        if too_low or too_high:
            self.fail(f"{_shown(value)} is out of range: give {self._range()}", param, ctx)
        return number

    def _parse(self, text: str, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = int(text) if not self.real else float(text)
        except ValueError:
            if not self.real and text.lstrip("+-").isdigit():  # past Python's 4,300-digit limit
                self.fail(f"{_shown(text)} is out of range: give {self._range()}", param, ctx)
        else:
            overflowed = isinstance(number, float) and math.isinf(number)  # "1e999", 400 digits: never `inf`
            if overflowed and text.lower().lstrip("+-") not in ("inf", "infinity"):
                self.fail(f"{_shown(text)} is out of range: give {self._range()}", param, ctx)
            return number
        try:
            number = float(text)  # `nan`, `1.5` or `1e3` for a whole number: said precisely below
        except ValueError:
            example = f"; pass e.g. {self.example}" if self.example else ""
            self.fail(f"{_shown(text)} is not a number{example} ({self._range()})", param, ctx)
        if math.isfinite(number) and number == int(number) and not self.real:
            return int(number)
        return number


def _shown(value: Any) -> str:
    """`value` as an error names it: the start of a 400-digit number is enough to recognise it."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4,300-digit limit for str()
        return "a number of more than 4,300 digits"
    return text if len(text) <= 42 else f"{text[:30]}... ({len(text)} characters)"
