"""Charts as data, drawn as SVG text with the standard library only.

A :class:`Chart` holds marks (:class:`Line`, :class:`Band`, :class:`Bars`,
:class:`Rule`) in data units plus a title and axis labels; :func:`render`
turns it into one ``<svg>`` element (axes with ticks, a legend below the plot,
the title above).  The explorers of :mod:`lanes.display.explorers` build charts,
so the browser (Pyodide, no matplotlib) and JupyterLab (:func:`lanes.display.explorers.to_matplotlib`)
draw the same data.  Sizes are in CSS pixels: the book passes the width of
the explorer's box, so text stays at its real size on a phone; the SVG carries a
``viewBox`` and scales down further when its box shrinks.

>>> svg = render(Chart((Line((0, 1, 2), (0, 1, 4), "y = x^2"),), title="squares"), width=320)
>>> svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 ')
True
>>> 'y = x^2' in svg and '>squares</text>' in svg
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from .. import _checks

__all__ = ["Band", "Bars", "Chart", "Line", "Rule", "PALETTE", "nice_ticks", "render"]

#: Colours in mark order where a mark names none (matplotlib's tab10, which the static figures use).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


@dataclass(frozen=True)
class Line:
    """A polyline through ``(x[i], y[i])``; ``points=True`` draws dots only. ``None`` in ``y`` breaks the line."""

    x: tuple[float, ...]
    y: tuple[float | None, ...]
    label: str = ""
    color: str | None = None
    dash: bool = False
    points: bool = False
    width: float = 1.5


@dataclass(frozen=True)
class Band:
    """The area between ``lo`` and ``hi`` over ``x`` (a stacked layer when ``lo`` is the layer below)."""

    x: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    label: str = ""
    color: str | None = None
    opacity: float = 0.85


@dataclass(frozen=True)
class Bars:
    """Horizontal bars, one per category (top to bottom), with an optional note at each bar's end."""

    categories: tuple[str, ...]
    values: tuple[float, ...]
    notes: tuple[str, ...] = ()
    label: str = ""
    color: str | None = None


@dataclass(frozen=True)
class Rule:
    """A straight line across the plot at ``value`` on ``axis`` ("x": vertical, "y": horizontal)."""

    value: float
    axis: str = "y"
    label: str = ""
    color: str = "#000000"
    dash: bool = True


@dataclass(frozen=True)
class Chart:
    """One plot: marks in data units, labels, and optional limits (``None``: fitted to the marks).

    ``xlog``/``ylog`` draw that axis on a log scale (data must be positive).
    """

    marks: tuple
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    xlog: bool = False
    ylog: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "marks", tuple(_checks.sequence("marks", self.marks, what="Line, Band, Bars or Rule marks")))
        kinds = (Line, Band, Bars, Rule)
        bad = [type(m).__name__ for m in self.marks if not isinstance(m, kinds)]
        if bad:
            raise ValueError(f"marks must be Line, Band, Bars or Rule (got {', '.join(bad)})")
        if any(isinstance(m, Bars) for m in self.marks) and not all(isinstance(m, (Bars, Rule)) for m in self.marks):
            raise ValueError("a chart with Bars holds only Bars and Rules")


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2 or 5 times a power of ten apart) covering ``[lo, hi]``.

    >>> nice_ticks(0, 24)
    [0.0, 5.0, 10.0, 15.0, 20.0]
    >>> nice_ticks(0, 1)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    """
    lo, hi = _checks.number("lo", lo), _checks.number("hi", hi)
    count = _checks.integer("count", count, lo=1)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * 0.999)
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi * (1 + 1e-12) + 1e-12:
        ticks.append(round(k * step, 12) + 0.0)
        k += 1
    return ticks


def _label(v: float) -> str:
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    text = f"{v:,.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _num(v: float) -> str:
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _extent(values: list[float], log: bool) -> tuple[float, float]:
    vals = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        return 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi) + 1e-12)
    if lo == hi:
        return (lo - 1, hi + 1) if lo else (0.0, 1.0)
    return lo, hi


class _Scale:
    def __init__(self, lo: float, hi: float, a: float, b: float, log: bool):
        self.log = log
        self.lo, self.hi = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
        self.a, self.b = a, b

    def __call__(self, v: float) -> float:
        v = math.log10(max(v, 1e-300)) if self.log else v
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)

    def ticks(self) -> list[float]:
        if self.log:
            return [10.0 ** k for k in range(math.ceil(self.lo - 1e-9), math.floor(self.hi + 1e-9) + 1)]
        return [t for t in nice_ticks(self.lo, self.hi) if self.lo - 1e-9 <= t <= self.hi + 1e-9]


def _text(x: float, y: float, s: str, size: int, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{_num(x)}" y="{_num(y)}" font-size="{size}" text-anchor="{anchor}"{extra}>{escape(s)}</text>'


def _legend(entries: list[tuple[str, str, str]], width: int, top: float, font: int) -> tuple[list[str], float]:
    """Legend entries (label, colour, kind) laid out in rows that wrap at ``width``; returns parts and height."""
    parts, x, y, row_h = [], 8.0, top, font + 6
    for label, color, kind in entries:
        w = 22 + 0.58 * font * len(label) + 14
        if x + w > width and x > 8:
            x, y = 8.0, y + row_h
        cy = y + row_h / 2
        if kind == "band":
            parts.append(f'<rect x="{_num(x)}" y="{_num(cy - 5)}" width="16" height="10" fill="{color}"/>')
        else:
            dash = ' stroke-dasharray="5 3"' if kind == "dash" else ""
            parts.append(f'<line x1="{_num(x)}" y1="{_num(cy)}" x2="{_num(x + 16)}" y2="{_num(cy)}" stroke="{color}" stroke-width="2"{dash}/>')
        parts.append(_text(x + 22, cy + font * 0.35, label, font, "start"))
        x += w
    return parts, (y + row_h - top) if entries else 0.0


def render(chart: Chart, width: int = 640, height: int = 300, font: int = 13) -> str:
    """The chart as one ``<svg>`` element, ``width`` x (``height`` + legend) CSS pixels.

    Parameters
    ----------
    chart : Chart
        What to draw.
    width, height : int
        Size of the drawing (the legend adds rows below it), pixels; ``width`` at least 200.
    font : int
        Text size, pixels.
    """
    _checks.instance("chart", chart, Chart)
    if not isinstance(width, int) or width < 200:
        raise ValueError(f"width must be an integer >= 200 pixels (got {width!r})")
    if not isinstance(height, int) or height < 120:
        raise ValueError(f"height must be an integer >= 120 pixels (got {height!r})")
    bars = [m for m in chart.marks if isinstance(m, Bars)]
    colors = iter(PALETTE)
    color_of = {id(m): (getattr(m, "color", None) or next(colors)) for m in chart.marks if not isinstance(m, Rule)}
    cats = [c for b in bars for c in b.categories]
    left = 10 + (font + 4 if chart.ylabel else 0) + (max((len(c) for c in cats), default=0) * 0.58 * font if bars else 6 * 0.58 * font)
    top = 10 + (font + 10 if chart.title else 0)
    right, bottom = 16, height - (2 * font + 16 if chart.xlabel else font + 12)
    if bars:
        xs = [v for b in bars for v in b.values] + [0.0] + [r.value for r in chart.marks if isinstance(r, Rule) and r.axis == "x"]
        ys = [0.0, 1.0]
        right = 16 + max((len(n) for b in bars for n in b.notes), default=0) * 0.58 * font
    else:
        xs, ys = [], []
        for m in chart.marks:
            if isinstance(m, Line):
                xs += list(m.x)
                ys += [v for v in m.y if v is not None]
            elif isinstance(m, Band):
                xs += list(m.x)
                ys += list(m.lo) + list(m.hi)
            elif isinstance(m, Rule):
                (xs if m.axis == "x" else ys).append(m.value)
    xlim = chart.xlim or _extent(xs, chart.xlog)
    ylim = chart.ylim or _extent(ys, chart.ylog)
    sx = _Scale(*xlim, left, width - right, chart.xlog)
    sy = _Scale(*ylim, bottom, top, chart.ylog)
    out = [f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(width - right - left)}" height="{_num(bottom - top)}" fill="none" stroke="#444"/>']
    pw, ph = _num(width - right - left), _num(bottom - top)
    # The plot area is a nested <svg>: it clips the marks to the axes without an id (pages hold many charts).
    clip = f'<svg x="{_num(left)}" y="{_num(top)}" width="{pw}" height="{ph}" viewBox="{_num(left)} {_num(top)} {pw} {ph}" overflow="hidden">'
    for t in sx.ticks():
        x = sx(t)
        out.append(f'<line x1="{_num(x)}" y1="{_num(bottom)}" x2="{_num(x)}" y2="{_num(bottom + 4)}" stroke="#444"/>')
        out.append(_text(x, bottom + font + 4, _label(t), font))
    if not bars:
        for t in sy.ticks():
            y = sy(t)
            out.append(f'<line x1="{_num(left - 4)}" y1="{_num(y)}" x2="{_num(left)}" y2="{_num(y)}" stroke="#444"/>')
            out.append(_text(left - 6, y + font * 0.35, _label(t), font, "end"))
    plot = []
    legend: list[tuple[str, str, str]] = []
    for m in chart.marks:
        if isinstance(m, Band):
            c = color_of[id(m)]
            pts = [(sx(x), sy(v)) for x, v in zip(m.x, m.hi)] + [(sx(x), sy(v)) for x, v in reversed(list(zip(m.x, m.lo)))]
            plot.append(f'<polygon points="{" ".join(f"{_num(a)},{_num(b)}" for a, b in pts)}" fill="{c}" fill-opacity="{m.opacity:g}" stroke="none"/>')
            if m.label:
                legend.append((m.label, c, "band"))
        elif isinstance(m, Line):
            c = color_of[id(m)]
            if m.points:
                plot += [f'<circle cx="{_num(sx(x))}" cy="{_num(sy(y))}" r="4" fill="{c}"/>' for x, y in zip(m.x, m.y) if y is not None]
            else:
                runs, run = [], []
                for x, y in zip(m.x, m.y):
                    if y is None or (chart.ylog and y <= 0):
                        runs, run = runs + [run], []
                    else:
                        run.append(f"{_num(sx(x))},{_num(sy(y))}")
                dash = ' stroke-dasharray="6 4"' if m.dash else ""
                plot += [f'<polyline points="{" ".join(r)}" fill="none" stroke="{c}" stroke-width="{m.width:g}"{dash}/>' for r in runs + [run] if r]
            if m.label:
                legend.append((m.label, c, "dash" if m.dash else "line"))
        elif isinstance(m, Bars):
            c = color_of[id(m)]
            n = len(m.categories)
            band = (bottom - top) / max(n, 1)
            for i, (cat, v) in enumerate(zip(m.categories, m.values)):
                y0 = top + i * band + band * 0.15
                x0, x1 = sorted((sx(0.0), sx(v)))
                plot.append(f'<rect x="{_num(x0)}" y="{_num(y0)}" width="{_num(x1 - x0)}" height="{_num(band * 0.7)}" fill="{c}"/>')
                out.append(_text(left - 6, y0 + band * 0.35 + font * 0.35, cat, font, "end"))
                if i < len(m.notes):
                    out.append(_text(sx(v) + 4, y0 + band * 0.35 + font * 0.35, m.notes[i], font, "start"))
            if m.label:
                legend.append((m.label, c, "band"))
        elif isinstance(m, Rule):
            dash = ' stroke-dasharray="5 3"' if m.dash else ""
            if m.axis == "x":
                x = sx(m.value)
                plot.append(f'<line x1="{_num(x)}" y1="{_num(top)}" x2="{_num(x)}" y2="{_num(bottom)}" stroke="{m.color}" stroke-width="1.2"{dash}/>')
            else:
                y = sy(m.value)
                plot.append(f'<line x1="{_num(left)}" y1="{_num(y)}" x2="{_num(width - right)}" y2="{_num(y)}" stroke="{m.color}" stroke-width="1.2"{dash}/>')
            if m.label:
                legend.append((m.label, m.color, "dash" if m.dash else "line"))
    if chart.title:
        out.append(_text(width / 2, 10 + font, chart.title, font + 1, extra=' font-weight="bold"'))
    if chart.xlabel:
        out.append(_text((left + width - right) / 2, bottom + 2 * font + 10, chart.xlabel, font))
    if chart.ylabel:
        cy = (top + bottom) / 2
        out.append(_text(8 + font, cy, chart.ylabel, font, extra=f' transform="rotate(-90 {_num(8 + font)} {_num(cy)})"'))
    parts, legend_h = _legend(legend, width, height + 2, font)
    total = height + (legend_h + 6 if legend else 0)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {_num(total)}" width="100%" '
        f'style="max-width:{width}px;height:auto" font-family="DejaVu Sans, sans-serif" role="img" '
        f'aria-label="{escape(chart.title or chart.ylabel)}">'
        + "".join(out) + clip + "".join(plot) + "</svg>" + "".join(parts) + "</svg>"
    )
