"""The chart of the matrix page: where each bar, point and label goes.

Grouped bars (failing properties, known findings, new findings) per version and,
below, the mutation score per kind (lines, one segment per target). This module only
computes positions; ``ctxaudit/templates/chart.svg.j2`` draws the static inline SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxaudit.matrix.model import Matrix
from ctxaudit.templating import pct, render

SERIES = (  # (label, colour, pattern id or "")
    ("failing properties", "#a4161a", ""),
    ("known findings", "#e07b00", "hatch"),
    ("new findings", "#5a3e9b", "dots"),
)
_KIND_STYLE = {  # kind -> (colour, dash, marker, short label)
    "removed-write": ("#0b5cad", "", "circle", "rw"),
    "wrong-comparison": ("#b3006b", "6 3", "square", "wc"),
    "other": ("#4d5560", "2 3", "triangle", "oth"),
}
_DEFAULT_STYLE = ("#333333", "1 2", "diamond", "")
LEFT, RIGHT, SLOT, BAR_W = 56, 230, 104, 20
BAR_TOP, BAR_H = 40, 200


def style(kind: str) -> tuple[str, str, str, str]:
    """(colour, dash pattern, marker shape, short label) of a mutation kind."""
    colour, dash, shape, short = _KIND_STYLE.get(kind, _DEFAULT_STYLE)
    return colour, dash, shape, short or kind[:4]


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    height: float
    value: int
    label: str
    colour: str
    pattern: str

    @property
    def fill(self) -> str:
        return f"url(#{self.pattern})" if self.pattern else self.colour


@dataclass(frozen=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    title: str


@dataclass(frozen=True)
class ScoreText:
    text: str
    colour: str


@dataclass
class Slot:
    """One version's column: its bars, its labels, its scores as text."""

    label: str
    version: str
    target: str
    x: float  # centre
    bars: list[Bar]
    separator: int | None  # x of the dashed line before a new target
    scores: list[ScoreText] | None  # None: no mutation run


@dataclass
class Series:
    """One mutation kind: its segments (one per run of a target) and legend."""

    kind: str
    colour: str
    dash: str
    shape: str
    short: str
    segments: list[list[Point]]
    legend_y: int


@dataclass
class Chart:
    width: int
    height: int
    plot_right: int  # x where the plots end
    legend_x: int
    score_top: int
    score_h: int
    desc: str
    ticks: list[Tick]
    slots: list[Slot]
    score_ticks: list[Tick] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)

    left = LEFT
    bar_top = BAR_TOP
    bar_bottom = BAR_TOP + BAR_H
    legend = SERIES


def _desc(m: Matrix) -> str:
    parts = []
    for v in m.versions:
        text = (
            f"{v.label}: {len(v.failing)} failing properties, {len(v.affecting)} known "
            f"findings, {len(v.findings)} new findings"
        )
        if v.mutation:
            text += ", mutation score " + ", ".join(
                f"{k} {pct(ks.score)}" for k, ks in v.mutation.kinds.items()
            )
        parts.append(text)
    return "; ".join(parts) + "."


def layout(m: Matrix) -> Chart:
    vs = m.versions
    n = len(vs)
    has_scores = any(v.mutation for v in vs)
    score_top = BAR_TOP + BAR_H + 84
    score_h = 160 if has_scores else 0
    counts = [(len(v.failing), len(v.affecting), len(v.findings)) for v in vs]
    peak = max([c for row in counts for c in row] + [1])
    step = max(1, -(-peak // 5))
    ymax = step * -(-peak // step)

    def xc(i: int) -> float:
        return LEFT + SLOT * i + SLOT / 2

    def yb(value: float) -> float:
        return BAR_TOP + BAR_H - BAR_H * value / ymax

    def ys(value: float) -> float:
        return score_top + score_h - score_h * value / 100

    slots = []
    for i, (v, row) in enumerate(zip(vs, counts, strict=True)):
        x0 = xc(i) - 1.5 * BAR_W - 3
        bars = [
            Bar(x0 + j * (BAR_W + 3), yb(value), BAR_TOP + BAR_H - yb(value), value, *s)
            for j, (value, s) in enumerate(zip(row, SERIES, strict=True))
        ]
        new_target = bool(i) and vs[i - 1].target != v.target
        scores = None
        if v.mutation:
            scores = [
                ScoreText(f"{style(ks.kind)[3]} {pct(ks.score)}", style(ks.kind)[0])
                for ks in v.mutation.kinds.values()
            ]
        slots.append(
            Slot(
                v.label,
                v.version,
                v.target,
                xc(i),
                bars,
                LEFT + SLOT * i if new_target else None,
                scores,
            )
        )
    chart = Chart(
        width=LEFT + RIGHT + SLOT * max(n, 1),
        height=score_top + score_h + (60 if has_scores else -30),
        plot_right=LEFT + SLOT * n,
        legend_x=LEFT + SLOT * n + 16,
        score_top=score_top,
        score_h=score_h,
        desc=_desc(m),
        ticks=[Tick(yb(k), str(k)) for k in range(0, ymax + 1, step)],
        slots=slots,
    )
    if not has_scores:
        return chart
    chart.score_ticks = [Tick(ys(k), f"{k}%") for k in range(0, 101, 25)]
    kinds = list(dict.fromkeys(k for v in vs if v.mutation for k in v.mutation.kinds))
    for j, kind in enumerate(kinds):
        colour, dash, shape, short = style(kind)
        dx = (j - (len(kinds) - 1) / 2) * 7  # side by side, so equal scores stay visible
        segments: list[list[Point]] = []
        prev_target = None
        for i, v in enumerate(vs):
            ks = v.mutation.kinds.get(kind) if v.mutation else None
            if ks is None or ks.score is None:
                prev_target = None
                continue
            if prev_target != v.target:
                segments.append([])
            title = f"{v.label}: {kind} {pct(ks.score)}"
            segments[-1].append(Point(xc(i) + dx, ys(ks.score), title))
            prev_target = v.target
        chart.series.append(
            Series(kind, colour, dash, shape, short, segments, score_top + 10 + j * 22)
        )
    return chart


def chart_svg(m: Matrix) -> str:
    """The chart as a static inline SVG (no script)."""
    return render("chart.svg.j2", c=layout(m)).rstrip("\n")
