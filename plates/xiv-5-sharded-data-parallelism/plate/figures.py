"""Plate XIV.5's two figures, in the series' style: Altair specs compiled by the engine's figure() to Vega
(no data) and to a static SVG of a selection, whose rows are page_rows.datasets's (the page's too), described in
page_words's words (no sentence of them here)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from generator.api import Cache, Figure, HEIGHT, INK, WIDTH, figure, ink, plain

from . import words
from .facts import Facts, facts_data
from .page_rows import MEMORY_DATA, STATES_DATA, TRAFFIC_DATA, TRAFFIC_LABELS, datasets, stage_name

if TYPE_CHECKING:
    import altair as alt

# The series' colours, each a theme variable of templates/plate.css (ink reads its light value; the CSS
# re-inks it by name for dark mode and print): stage 0 is plain data parallelism, the near-black of XIV.4's real
# cluster; stages 1 and 2 XIV.4's blue and vermilion; stage 3 Okabe–Ito's bluish green, --c-green (3.3:1 on the
# light page; its label shade --c-green-ink 5.1:1). Dash and direct labels tell the stages apart without colour.
STAGE_INK = ("--c-cluster", "--c-compute", "--c-reduce", "--c-green")
LABEL_INK = ("--c-cluster", "--c-compute", "--c-reduce-ink", "--c-green-ink")
STAGE_DASH = ([], [6, 3], [2, 3], [8, 3, 2, 3])
# Figure 2's stages send equal bytes in groups (page_words.same_traffic: stages 0–2 in BF16; 1 with 2 and 0 with 3 in
# FP32), where a line drawn over another hid it. So there each stage inks one turn of BRAID_TURN px in a cycle of
# four, stage k the k-th (its dash opens on a gap of k turns), over a thin opaque track of the shared path (opaque,
# so that coinciding tracks look like one): a shared line shows each of its stages' colours in turn, a gap where a
# stage elsewhere would be. Every stage's mark is the same whichever stages share its line, so the drawn key is true
# of any selection, and no value leaves its place.
BRAID_TURN = 8
TRACK_INK, TRACK_WIDTH = "--chart-rule", 0.8
SELECTED_WIDTH, OTHER_WIDTH = 3.5, 1.8  # the selected stage's line is the heavier


def braid_dash(k: int, stages: int = 4) -> list[int]:
    """Stage k's dash in Figure 2: a gap of k turns, one turn inked, the rest of the cycle a gap."""
    return [0, k * BRAID_TURN, BRAID_TURN, (stages - 1 - k) * BRAID_TURN]


TRAFFIC_DASH = tuple(braid_dash(k) for k in range(4))
LABEL_DECADES = 0.3  # about a name's height, in decades of the states axis as drawn (what the tests allow)
FOOT_ROOM = 1.6  # a stage's name is set no lower than this times the axis's lowest value: clear of the x axis's words


def _x(max_replicas: int) -> alt.X:
    """Replicas on a log₂ axis, powers of four labelled, as XIV.4 draws them."""
    import altair as alt
    return alt.X("replicas:Q", title="data-parallel replicas (GPUs)",
                 scale=alt.Scale(type="log", base=2, domain=[1, max_replicas], nice=False),
                 axis=alt.Axis(values=[4 ** k for k in range(0, 8) if 4 ** k <= max_replicas], format=",d",
                               grid=False, labelOverlap=True))


def _stage_encodings(dashes=STAGE_DASH) -> dict:
    """Colour and dash (dashes, by stage) by stage name, the selected stage's line heavier."""
    import altair as alt
    names = [stage_name(k) for k in range(4)]
    return {"color": alt.Color("stage:N", scale=alt.Scale(domain=names, range=[ink(c) for c in STAGE_INK]),
                               legend=None),
            "strokeDash": alt.StrokeDash("stage:N", scale=alt.Scale(domain=names, range=list(dashes)),
                                         legend=None),
            "strokeWidth": alt.StrokeWidth("selected:N", scale=alt.Scale(domain=[True, False],
                                                                          range=[SELECTED_WIDTH, OTHER_WIDTH]),
                                           legend=None)}


# --- (a) model states per GPU against replicas -------------------------------------------------------

def rows(f: Facts) -> dict[str, list[dict]]:
    """{dataset: rows} of the selection f for both figures: page_rows.datasets of its facts as the page has them."""
    return datasets(plain(facts_data(f)))


def states_chart(max_replicas: int) -> alt.LayerChart:
    """Model states per GPU against replicas, log–log, a line per stage 0–3, the GPU's memory a dashed rule."""
    import altair as alt
    base = alt.Chart(alt.Data(name=STATES_DATA))
    # The span follows the selection (page_rows.states_span, in the memory row): stage 3 runs out of the foot.
    span = f"data('{MEMORY_DATA}')[0]"
    y = alt.Y("states_gb:Q", title="model states per GPU (GB, 10⁹ B)",
              scale=alt.Scale(type="log", nice=False, domainMin=alt.ExprRef(f"{span} ? {span}.low_gb : 0.001"),
                              domainMax=alt.ExprRef(f"{span} ? {span}.high_gb : 1000")),
              axis=alt.Axis(format=",~g", values=[10.0 ** k for k in range(-4, 7)], grid=False))
    lines = base.mark_line(clip=True).encode(x=_x(max_replicas), y=y, **_stage_encodings()).properties(name="stages")
    # Each stage named in the right margin, level with its line's end, where no mark is: inside the plot the names
    # met the lines and the memory rule. Stage 3, which runs out of the foot, is named just above it there. The
    # rule's GPU and memory are in the title and the key.
    end = base.transform_filter(f"datum.replicas == {max_replicas}").transform_calculate(
        label_gb=f"max(datum.states_gb, {span} ? {span}.low_gb * {FOOT_ROOM} : 0)")
    labels = [end.transform_filter(f"datum.stage == '{stage_name(k)}'").mark_text(
        align="left", baseline="middle", dx=6, fontSize=12, fontWeight="bold", color=ink(LABEL_INK[k]),
    ).encode(x=alt.XValue("width"), y=alt.Y("label_gb:Q"), text=alt.Text("stage:N")).properties(
        name=f"label_stage{k}") for k in range(4)]
    memory = alt.Chart(alt.Data(name=MEMORY_DATA))
    rule = memory.mark_rule(strokeWidth=1.5, strokeDash=[4, 4], color=ink(INK), aria=False).encode(
        y=alt.Y("memory_gb:Q")).properties(name="gpu_memory")
    return alt.layer(rule, lines, *labels).properties(width=WIDTH, height=HEIGHT)


# --- (b) bytes each GPU sends per step against replicas ---------------------------------------------

def traffic_chart(max_replicas: int) -> alt.LayerChart:
    """Bytes each GPU sends per step against replicas (log x, linear y from 0), a line per stage 0–3."""
    import altair as alt
    base = alt.Chart(alt.Data(name=TRAFFIC_DATA))
    y = alt.Y("traffic_gb:Q", title="sent per GPU per step (GB, 10⁹ B)", scale=alt.Scale(zero=True),
              axis=alt.Axis(format=",~r", tickCount=5, grid=True))
    lines = base.mark_line().encode(x=_x(max_replicas), y=y, **_stage_encodings(TRAFFIC_DASH)).properties(
        name="stages")
    track = base.mark_line(strokeWidth=TRACK_WIDTH, color=ink(TRACK_INK), aria=False).encode(
        x=_x(max_replicas), y=y, detail="stage:N").properties(name="track")
    names = [stage_name(k) for k in range(4)]
    labels = alt.Chart(alt.Data(name=TRAFFIC_LABELS)).mark_text(
        align="right", baseline="bottom", dx=-2, dy=-6, fontSize=12, fontWeight="bold").encode(
        x=alt.X("replicas:Q"), y=alt.Y("traffic_gb:Q"), text=alt.Text("text:N"),
        color=alt.Color("stage:N", scale=alt.Scale(domain=names, range=[ink(c) for c in LABEL_INK]),
                        legend=None),
    ).properties(name="stage_labels")
    return alt.layer(track, lines, labels).properties(width=WIDTH, height=HEIGHT * 0.8)


# --- their keys -------------------------------------------------------------------------------------------

STAGE_MEANINGS = ("stage 0 (plain data parallelism)", "stage 1", "stage 2", "stage 3")


def key_lines(figure_id: str) -> list[dict]:
    """The lines of a figure's drawn key (page/legend.html.j2), each stage's mark as the figure draws it, then the
    selected stage's weight: the engine's line macro's arguments."""
    braided = figure_id == "fig-traffic"
    dashes = TRAFFIC_DASH if braided else STAGE_DASH
    lines = [{"colour": STAGE_INK[k], "meaning": STAGE_MEANINGS[k], "dash": " ".join(str(d) for d in dashes[k]),
              "width": OTHER_WIDTH, "track": TRACK_INK if braided else "", "track_width": TRACK_WIDTH}
             for k in range(4)]
    return lines + [{"colour": INK, "meaning": "the selected stage: heavier", "dash": "", "width": SELECTED_WIDTH,
                     "track": "", "track_width": TRACK_WIDTH}]


# --- both, compiled ------------------------------------------------------------------------------------

TITLES = {"fig-states": "Model states per GPU, by ZeRO stage", "fig-traffic": "Bytes sent per GPU per step, by ZeRO stage"}


def figures(f: Facts, store: Cache | None = None,
            describe: dict[str, str] | None = None) -> list[Figure]:
    """Both figures, compiled for the page (no data) and drawn for the selection f, described in page/words.js's
    words (describe: those words, if already made); with a store (the build cache), what it already holds is not
    made again."""
    store = store or Cache(None)
    describe = describe or words.of(f)["describe"]
    made = rows(f)
    return [
        figure("fig-states", TITLES["fig-states"], (states_chart, (f.max_replicas,)), describe["fig-states"],
                      {STATES_DATA: made[STATES_DATA], MEMORY_DATA: made[MEMORY_DATA]}, store),
        figure("fig-traffic", TITLES["fig-traffic"], (traffic_chart, (f.max_replicas,)),
                      describe["fig-traffic"], {TRAFFIC_DATA: made[TRAFFIC_DATA], TRAFFIC_LABELS: made[TRAFFIC_LABELS]},
                      store),
    ]
