"""Plate XIV.5's two figures, in the series' style: Altair specs compiled by the engine's charts.figure to Vega
(no data) and to a static SVG of a selection, described in page/words.js's words (no sentence of them here)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from generator import charts
from generator.cache import Cache
from generator.notation import num

from . import words
from .facts import Facts

if TYPE_CHECKING:
    import altair as alt

STATES_DATA, MEMORY_DATA = "states", "memory"  # each stage's states per GPU at each replica count; the GPU's line
TRAFFIC_DATA, TRAFFIC_LABELS = "traffic", "traffic_labels"  # bytes per GPU per step; a label per group of stages
# The series' colours, each a theme variable of templates/plate.css (charts.ink reads its light value; the CSS
# re-inks it by name for dark mode and print): stage 0 is plain data parallelism, the near-black of XIV.4's real
# cluster; stages 1 and 2 XIV.4's blue and vermilion; stage 3 Okabe–Ito's bluish green, --c-green (3.3:1 on the
# light page; its label shade --c-green-ink 5.1:1). Dash and direct labels tell the stages apart without colour.
STAGE_INK = ("--c-cluster", "--c-compute", "--c-reduce", "--c-green")
LABEL_INK = ("--c-cluster", "--c-compute", "--c-reduce-ink", "--c-green-ink")
STAGE_DASH = ([], [6, 3], [2, 3], [8, 3, 2, 3])
SELECTED_WIDTH, OTHER_WIDTH = 3.5, 1.8  # the selected stage's line is the heavier
LABEL_AT = 64  # replicas where the states figure names its lines: far enough along that they have come apart
STEEP_DECADES = 0.1  # a line falling more than this in one step would run through words set below it
LABEL_DECADES = 0.3  # about a name's height, in decades of the states axis as drawn (what the tests allow)


def stage_name(k: int) -> str:
    return f"stage {k}"


def _x(max_replicas: int) -> alt.X:
    """Replicas on a log₂ axis, powers of four labelled, as XIV.4 draws them."""
    import altair as alt
    return alt.X("replicas:Q", title="data-parallel replicas (GPUs)",
                 scale=alt.Scale(type="log", base=2, domain=[1, max_replicas], nice=False),
                 axis=alt.Axis(values=[4 ** k for k in range(0, 8) if 4 ** k <= max_replicas], format=",d",
                               grid=False, labelOverlap=True))


def _stage_encodings() -> dict:
    """Colour and dash by stage name, the selected stage's line heavier."""
    import altair as alt
    names = [stage_name(k) for k in range(4)]
    return {"color": alt.Color("stage:N", scale=alt.Scale(domain=names, range=[charts.ink(c) for c in STAGE_INK]),
                               legend=None),
            "strokeDash": alt.StrokeDash("stage:N", scale=alt.Scale(domain=names, range=list(STAGE_DASH)),
                                         legend=None),
            "strokeWidth": alt.StrokeWidth("selected:N", scale=alt.Scale(domain=[True, False],
                                                                          range=[SELECTED_WIDTH, OTHER_WIDTH]),
                                           legend=None)}


# --- (a) model states per GPU against replicas -------------------------------------------------------

def label_above(f: Facts) -> list[bool]:
    """Whether each stage's name goes above its line at LABEL_AT: into the wider gap to the lines next to it."""
    # In decades; stage order keeps the lines in order. Never below a line falling steeply through words set right
    # of the point. The ZeRO formulas fix the gaps' ratios at a given n, so the narrow gaps (under two names'
    # height, LABEL_DECADES each) hold one name at most: the tests check it over every selection.
    at = int(np.searchsorted(f.replicas, min(LABEL_AT, f.max_replicas)))
    level = [float(np.log10(s.states_bytes[at])) for s in f.stages]
    steep = [at + 1 < len(f.replicas) and y - float(np.log10(s.states_bytes[at + 1])) > STEEP_DECADES
             for y, s in zip(level, f.stages)]
    out = []
    for k, y in enumerate(level):
        up = level[k - 1] - y if k else np.inf
        down = y - level[k + 1] if k + 1 < len(level) else np.inf
        if steep[k]:  # it falls through words set below it
            down = 0.0
        out.append(bool(up >= down))
    return out


def states_rows(f: Facts) -> list[dict]:
    """One row per stage and replica count: the states per GPU in GB (10⁹ B), and where its name goes."""
    above = label_above(f)
    return [{"replicas": int(n), "stage": stage_name(s.stage), "states_gb": float(b) / 1e9,
             "selected": s.stage == f.stage_index, "label_above": above[s.stage]}
            for s in f.stages for n, b in zip(f.replicas, s.states_bytes)]


def memory_rows(f: Facts) -> list[dict]:
    """The GPU's memory, one row: its label goes above the rule when the unsharded states are under it."""
    return [{"memory_gb": f.memory_bytes / 1e9, "replicas": f.max_replicas,
             "label_above": f.unsharded_bytes <= f.memory_bytes,
             "gpu_label": f"{f.gpu.name} memory: {num(f.gpu.memory_gb)} GB"}]


def states_chart(max_replicas: int) -> alt.LayerChart:
    """Model states per GPU against replicas, log–log, a line per stage 0–3, the GPU's memory a dashed rule."""
    import altair as alt
    base = alt.Chart(alt.Data(name=STATES_DATA))
    y = alt.Y("states_gb:Q", title="model states per GPU (GB, 10⁹ B)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format=",~g", tickCount=6, grid=False))
    lines = base.mark_line().encode(x=_x(max_replicas), y=y, **_stage_encodings()).properties(name="stages")
    at = min(LABEL_AT, max_replicas)
    labels = [base.transform_filter(f"datum.replicas == {at} && datum.stage == '{stage_name(k)}'").mark_text(
        align="left", baseline=alt.ExprRef("datum.label_above ? 'bottom' : 'top'"), dx=4,
        dy=alt.ExprRef("datum.label_above ? -3 : 4"), fontSize=12, fontWeight="bold", color=charts.ink(LABEL_INK[k]),
    ).encode(x=alt.X("replicas:Q"), y=alt.Y("states_gb:Q"), text=alt.Text("stage:N")).properties(
        name=f"label_stage{k}") for k in range(4)]
    memory = alt.Chart(alt.Data(name=MEMORY_DATA))
    rule = memory.mark_rule(strokeWidth=1.5, strokeDash=[4, 4], color=charts.ink(charts.INK), aria=False).encode(
        y=alt.Y("memory_gb:Q")).properties(name="gpu_memory")
    rule_label = memory.mark_text(align="right", baseline=alt.ExprRef("datum.label_above ? 'bottom' : 'top'"),
                                  dy=alt.ExprRef("datum.label_above ? -4 : 4"), fontSize=11, fontWeight="bold",
                                  color=charts.ink(charts.INK)).encode(
        x=alt.XValue("width"), y=alt.Y("memory_gb:Q"), text=alt.Text("gpu_label:N")).properties(
        name="gpu_memory_label")
    return alt.layer(rule, rule_label, lines, *labels).properties(width=charts.WIDTH, height=charts.HEIGHT)


# --- (b) bytes each GPU sends per step against replicas ---------------------------------------------

def traffic_rows(f: Facts) -> list[dict]:
    """One row per stage and replica count: the bytes each GPU sends per step, in GB (10⁹ B)."""
    return [{"replicas": int(n), "stage": stage_name(s.stage), "traffic_gb": float(b) / 1e9,
             "selected": s.stage == f.stage_index}
            for s in f.stages for n, b in zip(f.replicas, s.traffic_bytes)]


def traffic_groups(f: Facts) -> list[tuple[list[int], float]]:
    """Stages that send the same bytes at the selected precision, [(stages, ratio to the all-reduce)], least first."""
    groups: dict[float, list[int]] = {}
    for s in f.stages:
        groups.setdefault(s.traffic_ratio, []).append(s.stage)
    return sorted(((stages, ratio) for ratio, stages in groups.items()), key=lambda g: g[1])


def _stages_text(stages: list[int]) -> str:
    if len(stages) == 1:
        return f"stage {stages[0]}"
    return "stages " + ", ".join(map(str, stages[:-1])) + f" and {stages[-1]}"


def traffic_label_rows(f: Facts) -> list[dict]:
    """A label per group of stages whose lines coincide, at the right end above them."""
    return [{"replicas": f.max_replicas, "traffic_gb": float(f.stage(stages[0]).traffic_bytes[-1]) / 1e9,
             "text": _stages_text(stages), "stage": stage_name(stages[0])} for stages, _ in traffic_groups(f)]


def traffic_chart(max_replicas: int) -> alt.LayerChart:
    """Bytes each GPU sends per step against replicas (log x, linear y from 0), a line per stage 0–3."""
    import altair as alt
    base = alt.Chart(alt.Data(name=TRAFFIC_DATA))
    y = alt.Y("traffic_gb:Q", title="sent per GPU per step (GB, 10⁹ B)", scale=alt.Scale(zero=True),
              axis=alt.Axis(format=",~r", tickCount=5, grid=True))
    lines = base.mark_line().encode(x=_x(max_replicas), y=y, **_stage_encodings()).properties(name="stages")
    names = [stage_name(k) for k in range(4)]
    labels = alt.Chart(alt.Data(name=TRAFFIC_LABELS)).mark_text(
        align="right", baseline="bottom", dx=-2, dy=-6, fontSize=12, fontWeight="bold").encode(
        x=alt.X("replicas:Q"), y=alt.Y("traffic_gb:Q"), text=alt.Text("text:N"),
        color=alt.Color("stage:N", scale=alt.Scale(domain=names, range=[charts.ink(c) for c in LABEL_INK]),
                        legend=None),
    ).properties(name="stage_labels")
    return alt.layer(lines, labels).properties(width=charts.WIDTH, height=charts.HEIGHT * 0.8)


# --- both, compiled ------------------------------------------------------------------------------------

TITLES = {"fig-states": "Model states per GPU, by ZeRO stage", "fig-traffic": "Bytes sent per GPU per step, by ZeRO stage"}


def figures(f: Facts, store: Cache | None = None,
            describe: dict[str, str] | None = None) -> list[charts.Figure]:
    """Both figures, compiled for the page (no data) and drawn for the selection f, described in page/words.js's
    words (describe: those words, if already made); with a store (the build cache), what it already holds is not
    made again."""
    store = store or Cache(None)
    describe = describe or words.of(f)["describe"]
    return [
        charts.figure("fig-states", TITLES["fig-states"], (states_chart, (f.max_replicas,)), describe["fig-states"],
                      {STATES_DATA: states_rows(f), MEMORY_DATA: memory_rows(f)}, store),
        charts.figure("fig-traffic", TITLES["fig-traffic"], (traffic_chart, (f.max_replicas,)),
                      describe["fig-traffic"], {TRAFFIC_DATA: traffic_rows(f), TRAFFIC_LABELS: traffic_label_rows(f)},
                      store),
    ]
