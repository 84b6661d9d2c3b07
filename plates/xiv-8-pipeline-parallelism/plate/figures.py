"""Plate XIV.8's three figures: Altair specs compiled by the engine's figure to Vega (no data) and to a static
SVG of the default, whose rows are page_rows.datasets's (the page's too), described in page_words's words."""
from __future__ import annotations

from generator.api import HEIGHT, INK, WIDTH, figure, ink

from .page_rows import BUSY, CURVES_DATA, HELD_DATA, LANES_DATA, MARKS_DATA, OPS_DATA
from .page_words import KIND_NAMES

TITLES = {"fig-schedule": "The schedule: every micro-batch's passes on every stage",
          "fig-bubble": "The bubble against micro-batches per step",
          "fig-step": "What each stage holds in flight, and the step"}
KIND_INKS = ["--c-compute", "--c-reduce", "--c-green", "--chart-muted"]  # forward, backward (input gradient),
# weight gradient, and passes merged where they are too short to draw apart
SCHEDULE_NAMES = ["GPipe", "1F1B", "interleaved 1F1B", "ZB-H1"]  # page_facts.SCHEDULES's names, in ORDER
SCHEDULE_INKS = ["--chart-muted", "--c-compute", "--c-reduce", "--c-green"]
SCHEDULE_DASHES = [[2, 3], [], [6, 3], [1, 0]]
SCHEDULE_SHAPES = ["square", "circle", "triangle-up", "diamond"]
IDLE_INK = "--chart-grid"


def schedule_chart():
    """One row per stage, each operation a block from its start to its end, coloured by its kind; idle behind."""
    import altair as alt
    y = alt.Y("stage:O", title="stage", axis=alt.Axis(grid=False))
    x = alt.X("start:Q", title="time in the step (s)", axis=alt.Axis(grid=False, format="~g"))
    lanes = alt.Chart(alt.Data(name=LANES_DATA)).mark_bar(color=ink(IDLE_INK), height={"band": 0.8}).encode(
        x=x, x2=alt.X2("end:Q"), y=y)
    kinds = alt.Color("kind:N", scale=alt.Scale(domain=KIND_NAMES + [BUSY], range=[ink(c) for c in KIND_INKS]),
                      legend=None)  # the key below the figure names them (page/legend.html.j2)
    blocks = alt.Chart(alt.Data(name=OPS_DATA)).mark_bar(
        height={"band": 0.8}, stroke=ink("--paper"), strokeWidth=0.5).encode(
        x=x, x2=alt.X2("end:Q"), y=y, color=kinds)
    return alt.layer(lanes, blocks).properties(width=WIDTH, height=HEIGHT)


def bubble_chart():
    """The idle share of a step against m (log scale), a line per schedule; m = 4p a dashed rule, Llama 3 a point."""
    import altair as alt
    colour = alt.Color("schedule:N", scale=alt.Scale(domain=SCHEDULE_NAMES,
                                                     range=[ink(c) for c in SCHEDULE_INKS]), legend=None)
    dash = alt.StrokeDash("schedule:N", scale=alt.Scale(domain=SCHEDULE_NAMES, range=SCHEDULE_DASHES), legend=None)
    shape = alt.Shape("schedule:N", scale=alt.Scale(domain=SCHEDULE_NAMES, range=SCHEDULE_SHAPES), legend=None)
    x = alt.X("m:Q", title="micro-batches per step", scale=alt.Scale(type="log", base=2, nice=False),
              axis=alt.Axis(format=",d", grid=False))
    y = alt.Y("share:Q", title="idle share of the step", scale=alt.Scale(domain=[0, 1]),
              axis=alt.Axis(format="%", grid=True))
    curves = alt.Chart(alt.Data(name=CURVES_DATA))
    lines = curves.mark_line(strokeWidth=2.5).encode(x=x, y=y, color=colour, strokeDash=dash)
    points = curves.mark_point(filled=True, size=36).encode(x=x, y=y, color=colour, shape=shape)
    marks = alt.Chart(alt.Data(name=MARKS_DATA))
    rule = marks.mark_rule(strokeDash=[4, 4], strokeWidth=1.5, color=ink(INK)).encode(
        x=alt.X("rule_m:Q"))
    llama = marks.mark_point(shape="diamond", size=120, filled=False, strokeWidth=2,
                             color=ink(INK)).encode(x=alt.X("llama_m:Q"), y=alt.Y("llama_share:Q"))
    return alt.layer(lines, points, rule, llama).properties(width=WIDTH, height=HEIGHT)


def held_chart():
    """Micro-batches held at each stage's peak, a line per schedule, stage by stage."""
    import altair as alt
    colour = alt.Color("schedule:N", scale=alt.Scale(domain=SCHEDULE_NAMES,
                                                     range=[ink(c) for c in SCHEDULE_INKS]), legend=None)
    dash = alt.StrokeDash("schedule:N", scale=alt.Scale(domain=SCHEDULE_NAMES, range=SCHEDULE_DASHES), legend=None)
    shape = alt.Shape("schedule:N", scale=alt.Scale(domain=SCHEDULE_NAMES, range=SCHEDULE_SHAPES), legend=None)
    x = alt.X("stage:Q", title="stage", scale=alt.Scale(nice=False, zero=False),
              axis=alt.Axis(format="d", grid=False, tickMinStep=1))
    y = alt.Y("held:Q", title="micro-batches held at the peak", scale=alt.Scale(zero=True),
              axis=alt.Axis(format=",~g", grid=True))
    rows = alt.Chart(alt.Data(name=HELD_DATA))
    lines = rows.mark_line(strokeWidth=2.5).encode(x=x, y=y, color=colour, strokeDash=dash)
    points = rows.mark_point(filled=True, size=36).encode(x=x, y=y, color=colour, shape=shape)
    return alt.layer(lines, points).properties(width=WIDTH, height=HEIGHT)


CHARTS = {"fig-schedule": schedule_chart, "fig-bubble": bubble_chart, "fig-step": held_chart}
DATA = {"fig-schedule": (LANES_DATA, OPS_DATA), "fig-bubble": (CURVES_DATA, MARKS_DATA), "fig-step": (HELD_DATA,)}


def figures(rows: dict, describe: dict, store) -> list:
    """The three figures, drawn with the default's rows and described in its words."""
    return [figure(fid, TITLES[fid], (CHARTS[fid], ()), describe[fid], {name: rows[name] for name in DATA[fid]},
                          store) for fid in CHARTS]
