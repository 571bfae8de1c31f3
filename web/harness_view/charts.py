"""A batch's charts as inline SVG drawn on the server: pass rate with its confidence interval, cost per solved
task, and the time each attempt took, one row per provider/model.

Knows the report's groups (`batch_report.Group`); every label is escaped. No style attributes (the page's CSP
allows none): colours come from classes in style.css.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from harness_view.batch_report import Group, percentile

__all__ = ["cost_chart", "pass_rate_chart", "time_chart"]

_WIDTH, _LABEL, _ROW, _TOP, _RIGHT = 720, 230, 30, 24, 70


def _frame(title: str, rows: int, body: list[str], axis: list[str]) -> Markup:
    height = _TOP + rows * _ROW + 26
    parts = [f'<svg class="chart" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" role="img" '
             f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
             f'<title>{escape(title)}</title>', *axis, *body, "</svg>"]
    return Markup("".join(parts))


def _x(fraction: float) -> float:
    return _LABEL + fraction * (_WIDTH - _LABEL - _RIGHT)


def _label(index: int, text: str) -> str:
    y = _TOP + index * _ROW + _ROW / 2 + 4
    return f'<text class="label" x="{_LABEL - 8}" y="{y:.1f}" text-anchor="end">{escape(_clip(text))}</text>'


def _clip(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _axis(rows: int, ticks: list[tuple[float, str]]) -> list[str]:
    bottom = _TOP + rows * _ROW
    out = [f'<line class="axis" x1="{_LABEL}" y1="{_TOP - 4}" x2="{_LABEL}" y2="{bottom}"/>']
    for fraction, text in ticks:
        x = _x(fraction)
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{_TOP - 4}" x2="{x:.1f}" y2="{bottom}"/>')
        out.append(f'<text class="tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{escape(text)}</text>')
    return out


def pass_rate_chart(groups: list[Group]) -> Markup:
    """Each group's pass rate (a bar) and its 95% Wilson interval (a whisker), 0-100%."""
    body: list[str] = []
    for i, group in enumerate(groups):
        y = _TOP + i * _ROW
        low, high = group.interval
        body.append(_label(i, group.label))
        body.append(f'<rect class="bar pass" x="{_LABEL}" y="{y + 6}" width="{_x(group.rate) - _LABEL:.1f}" '
                    f'height="{_ROW - 12}"><title>{escape(group.label)}: {group.passed_attempts}/{group.attempts} '
                    f'passed, 95% CI {low:.0%}–{high:.0%}</title></rect>')
        mid = y + _ROW / 2
        body.append(f'<line class="whisker" x1="{_x(low):.1f}" y1="{mid}" x2="{_x(high):.1f}" y2="{mid}"/>')
        for end in (low, high):
            body.append(f'<line class="whisker" x1="{_x(end):.1f}" y1="{mid - 6}" x2="{_x(end):.1f}" '
                        f'y2="{mid + 6}"/>')
        body.append(f'<text class="value" x="{_x(1) + 8}" y="{mid + 4}">{group.rate:.0%}</text>')
    ticks = [(f, f"{f:.0%}") for f in (0, 0.25, 0.5, 0.75, 1)]
    return _frame("Pass rate with 95% confidence interval", len(groups), body, _axis(len(groups), ticks))


def cost_chart(groups: list[Group]) -> Markup:
    """Each group's cost per solved task (no bar where none was reported or nothing was solved)."""
    values = [g.cost_per_solved for g in groups]
    top = max((v for v in values if v is not None), default=0.0) or 1.0
    body: list[str] = []
    for i, (group, value) in enumerate(zip(groups, values, strict=True)):
        y = _TOP + i * _ROW
        body.append(_label(i, group.label))
        if value is None:
            why = "no cost reported" if not group.costed else "nothing solved"
            body.append(f'<text class="none" x="{_LABEL + 8}" y="{y + _ROW / 2 + 4}">{why}</text>')
            continue
        body.append(f'<rect class="bar cost" x="{_LABEL}" y="{y + 6}" width="{_x(value / top) - _LABEL:.1f}" '
                    f'height="{_ROW - 12}"><title>{escape(group.label)}: ${value:.4f} per solved task</title></rect>')
        body.append(f'<text class="value" x="{_x(value / top) + 6:.1f}" y="{y + _ROW / 2 + 4}">${value:.4f}</text>')
    ticks = [(f, f"${top * f:.4f}") for f in (0, 0.5, 1)]
    return _frame("Cost per solved task", len(groups), body, _axis(len(groups), ticks))


def time_chart(groups: list[Group]) -> Markup:
    """Each attempt's time as a dot, over a box from the 25th to the 75th percentile with the median marked."""
    top = max((s for g in groups for s in g.seconds), default=0.0) or 1.0
    body: list[str] = []
    for i, group in enumerate(groups):
        y = _TOP + i * _ROW
        mid = y + _ROW / 2
        body.append(_label(i, group.label))
        q1, q2, q3 = (percentile(group.seconds, q) for q in (0.25, 0.5, 0.75))
        if q1 is not None and q2 is not None and q3 is not None:
            body.append(f'<rect class="box" x="{_x(q1 / top):.1f}" y="{y + 7}" '
                        f'width="{max(1.0, _x(q3 / top) - _x(q1 / top)):.1f}" height="{_ROW - 14}"/>')
            body.append(f'<line class="median" x1="{_x(q2 / top):.1f}" y1="{y + 4}" x2="{_x(q2 / top):.1f}" '
                        f'y2="{y + _ROW - 4}"><title>median {q2:.1f} s</title></line>')
        for seconds in group.seconds:
            body.append(f'<circle class="dot" cx="{_x(seconds / top):.1f}" cy="{mid}" r="3">'
                        f'<title>{seconds:.1f} s</title></circle>')
    ticks = [(f, f"{top * f:.0f} s" if top >= 10 else f"{top * f:.1f} s") for f in (0, 0.25, 0.5, 0.75, 1)]
    return _frame("Time per attempt", len(groups), body, _axis(len(groups), ticks))
