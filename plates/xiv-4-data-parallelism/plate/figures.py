"""XIV.4's four figures: their Altair charts, drawn with the default's rows (page_rows.datasets, the page's own) and
compiled by the engine's figure()."""
from __future__ import annotations

from typing import TYPE_CHECKING

from generator.api import Cache, Figure, HEIGHT, INK, MUTED, WIDTH, figure, ink, plain

from . import page_facts, page_rows
from .facts import CLUSTER_KEYS, KEYS, Atlas, presets_data

if TYPE_CHECKING:
    import altair as alt

GRID_DATA = "grid"  # the shown selection's rows, one per replica count; the page computes and inserts them
FACTS_DATA = "facts"  # one row: the selection's label, crossings, where a sequence runs out, the GPU's own link's reach
# Okabe–Ito blue and vermilion: distinct under the common colour-vision deficiencies, at least 3:1
# against the light page, and told apart by dash and point shape too. Their direct labels use shades that reach
# 4.5:1 as text. The real cluster beside the workshop (issue 22): near-black (white in dark mode), dash-dotted,
# without points; apart from blue and vermilion under each colour-vision deficiency, as the page's accessibility
# test checks.
SERIES = {"compute": ("--c-compute", []), "all-reduce": ("--c-reduce", [6, 3]),
          "real cluster": ("--c-cluster", [8, 3, 2, 3]), "backward pass": ("--c-compute", [2, 3])}
LABEL_INK = {"compute": "--c-compute", "all-reduce": "--c-reduce-ink", "real cluster": "--c-cluster",
             "backward pass": "--c-compute"}
LEFT_OF_RULE = 16  # from this crossing on, its label sits left of the rule (else right, to stay in the frame)
# The rules' words of Figures 1 and 2 in two rows above the plot, where no line, rule or shading is, so none can
# run into a mark or the other whatever the selection: the first crossing nearer the plot, n* above it (inside the
# plot they were struck through by the rules and the shading's edge). 11 px text is 13 px tall. The shading is named
# by the key below the figure (page/legend.html.j2), not in the plot, where its words crossed the rules.
ROW_CROSSED, ROW_STAR = -4, -19
LOW_LABEL_PX = 40  # a series label this near the plot's foot goes above its line (below, it would meet the axis)
ROOM_PX = 34  # px the all-reduce's label needs below a line: the cluster's, if it runs this near under it, counts
FOOT_PX = 24  # px between the line and the plot's foot that the words need below it (8 + 13 tall, and a margin)


TIMELINE_DATA = "timeline"  # the timeline's bars: forward, backward layer by layer, bucket groups, the tail
TIMELINE_FACTS = "timeline_facts"  # its rules and labels


# Encodings name their channel class (alt.X("f:Q"), alt.YValue(0)), never a bare "f:Q" or alt.value(0): Altair
# matches those against its whole schema to find the class, about 10 ms each, half a second per build.
def _x(max_replicas: int) -> alt.X:
    import altair as alt  # here, not at the top: a build whose figures are all cached never loads Altair
    # The domain is the data's, 1 to the selection's last replica count: the axis stops where the replicas' GPUs
    # reach the series' cap (platelib.compute.replica_counts), whatever the layout.
    return alt.X("replicas:Q", title="data-parallel replicas",
                 scale=alt.Scale(type="log", base=2, nice=False),
                 axis=alt.Axis(values=[4 ** k for k in range(0, 8)], format=",d", grid=False, labelOverlap=True))


def hidden_when(condition: str) -> dict:
    """A text mark's properties that hide it while condition (a Vega expression) holds: transparent, and cut to a
    pixel, since Vega fits the plot to the extent of every mark, drawn or not (a hidden caption 750 px long
    squeezed a phone's plot to nothing)."""
    import altair as alt
    return {"opacity": alt.ExprRef(f"{condition} ? 0 : 1"), "limit": alt.ExprRef(f"{condition} ? 1 : 0")}


def _band_and_rule(max_replicas: int) -> list:
    """Shading (under one sequence per replica; the GPU's own link beyond a real domain), the crossing's rule and n*'s.
    Shapes are hidden from assistive technology (aria=False: an empty layer would be an unnamed image); the
    figure's description and table say what they mark."""
    import altair as alt
    facts = alt.Chart(alt.Data(name=FACTS_DATA))
    band = facts.mark_rect(opacity=0.13, color=ink("--chart-band"), aria=False).encode(
        x=alt.X("one_sequence:Q", scale=alt.Scale(type="log", base=2)), x2=alt.X2("max_replicas:Q"),
    ).transform_filter("datum.one_sequence < datum.max_replicas").properties(name="band")
    # Over the GPU's own link past its largest real domain: a ring nobody can build, shaded and said so.
    reach = facts.transform_filter("datum.hypothetical_from != null")
    hypothetical = reach.mark_rect(opacity=0.16, color=ink(MUTED), aria=False).encode(
        x=alt.X("hypothetical_from:Q"), x2=alt.X2("max_replicas:Q")).properties(name="hypothetical")
    hypothetical_rule = reach.mark_rule(strokeDash=[2, 2], color=ink(MUTED), aria=False).encode(
        x=alt.X("hypothetical_from:Q")).properties(name="hypothetical_rule")
    crossed = facts.transform_filter("datum.crossing != null")
    rule = crossed.mark_rule(strokeWidth=1.5, color=ink(INK), aria=False).encode(x=alt.X("crossing:Q")).properties(
        name="rule")
    rule_label = crossed.transform_calculate(
        label="'first crossed: ' + format(datum.crossing, ',d')",
    ).mark_text(align=alt.ExprRef(f"datum.crossing >= {LEFT_OF_RULE} ? 'right' : 'left'"), baseline="bottom",
                dx=alt.ExprRef(f"datum.crossing >= {LEFT_OF_RULE} ? -4 : 4"), dy=ROW_CROSSED,
                fontSize=11, fontWeight="bold", color=ink(INK)).encode(
        x=alt.X("crossing:Q"), y=alt.YValue(0), text=alt.Text("label:N")).properties(name="rule_label")
    # n*, where the drawn lines meet (not a power of two): a dotted rule, labelled a row above the crossing's words.
    star = facts.transform_filter("datum.n_star <= datum.max_replicas")
    star_rule = star.mark_rule(strokeWidth=1, strokeDash=[1, 3], color=ink(INK), aria=False).encode(
        x=alt.X("n_star:Q")).properties(name="n_star_rule")
    star_label = star.mark_text(align=alt.ExprRef(f"datum.n_star >= {LEFT_OF_RULE} ? 'right' : 'left'"),
                                baseline="bottom", dx=alt.ExprRef(f"datum.n_star >= {LEFT_OF_RULE} ? -4 : 4"),
                                dy=ROW_STAR, fontSize=11, color=ink(INK)).encode(
        x=alt.X("n_star:Q"), y=alt.YValue(0), text=alt.Text("n_star_text:N")).properties(name="n_star_label")
    return [band, hypothetical, hypothetical_rule, rule, rule_label, star_rule, star_label]


REACHED_BY_LABELS = ("data('facts')[0].hypothetical_from != null && "
                     "scale('x', data('facts')[0].hypothetical_from) - scale('x', 2) < 90")

CLUSTER_UNDER = ("datum.cluster_s > 0 && scale('y', datum.cluster_s) >= scale('y', datum.seconds) - 2 && "
                 "scale('y', datum.cluster_s) - scale('y', datum.seconds) < 28")


def time_chart(max_replicas: int) -> alt.LayerChart:
    """Figure 1: per-step compute and gradient all-reduce time against replicas, log–log; under backward-only
    overlap also the backward pass, the part of compute that can hide the all-reduce."""
    import altair as alt
    names, colours = list(SERIES), [ink(c) for c, _ in SERIES.values()]
    base = alt.Chart(alt.Data(name=GRID_DATA)).transform_fold(
        ["compute_s", "comm_s", "cluster_s", "window_s"], as_=["series", "seconds"],
    ).transform_calculate(
        series="datum.series == 'compute_s' ? 'compute' : datum.series == 'comm_s' ? 'all-reduce' : "
               "datum.series == 'cluster_s' ? 'real cluster' : 'backward pass'",
    ).transform_filter("datum.seconds > 0")
    colour = alt.Color("series:N", scale=alt.Scale(domain=names, range=colours), legend=None)
    dash = alt.StrokeDash("series:N", scale=alt.Scale(domain=names, range=[d for _, d in SERIES.values()]),
                          legend=None)
    # padding: every line at least FOOT_PX + 2 above the plot's foot, so the all-reduce's words always fit under it
    y = alt.Y("seconds:Q", title="seconds per step", scale=alt.Scale(type="log", padding=FOOT_PX + 2),
              axis=alt.Axis(format=",~g", tickCount=5, grid=False))
    lines = base.mark_line(strokeWidth=2.5).encode(x=_x(max_replicas), y=y, color=colour, strokeDash=dash,
                                                   ).properties(name="series")
    dots = base.transform_filter("datum.series == 'compute' || datum.series == 'all-reduce'").mark_point(
        filled=True, size=28).encode(
        x=alt.X("replicas:Q"), y=alt.Y("seconds:Q"), color=colour,
        shape=alt.Shape("series:N", scale=alt.Scale(domain=names[:2], range=["circle", "square"]), legend=None),
    ).properties(name="series_points")
    # Direct labels, so colour is never the only key to the series: compute above its line; all-reduce below its
    # line (which rises to the right, away from the words), or below the real cluster's where that runs just under
    # it, and above only where the plot's foot leaves no room; the
    # backward pass under its line, left of 8 replicas (the line rises to the left, away from the words). All at 2
    # replicas, left of the first NVLink domain's edge (8). On a narrow figure they would reach past that edge: the
    # key below the figure names the lines there, as it names the real cluster's everywhere (at the right end its
    # words met the rules and the compute line).
    low = f"scale('y', datum.seconds) > height - {LOW_LABEL_PX}"
    y_at = "scale('y', datum.seconds)"
    y_cluster = "scale('y', datum.cluster_s)"
    under = (f"(datum.cluster_s > 0 && {y_cluster} >= {y_at} && {y_cluster} - {y_at} < {ROOM_PX} ? "
             f"{y_cluster} : {y_at})")  # the lowest of the two where the words would go
    below = f"({under} <= height - {FOOT_PX})"
    labels = [
        base.transform_filter(f"datum.replicas == {where} && datum.series == '{name}'").mark_text(
            align=align, fontSize=12, fontWeight="bold", color=ink(LABEL_INK[name]),
            **({"baseline": alt.ExprRef(f"{low} ? 'bottom' : 'top'"), "dy": alt.ExprRef(f"{low} ? -6 : {dy}")}
               if baseline == "top" else
               {"baseline": alt.ExprRef(f"{below} ? 'top' : 'bottom'"),
                "dy": alt.ExprRef(f"{below} ? {under} - {y_at} + 8 : {dy}")}
               if baseline == "auto" else {"baseline": baseline, "dy": dy}), dx=dx,
            # no room left of 8; nor left of the hypothetical shading when it starts within a label's length of 2;
            # the backward pass's words not where the real cluster's line, rising to the right, runs through them
            **hidden_when(f"width < 600 || {CLUSTER_UNDER if name == 'backward pass' else REACHED_BY_LABELS}"),
        ).encode(x=alt.X("replicas:Q"), y=alt.Y("seconds:Q"), text=alt.Text("series:N")).properties(
            name=f"label_{name.replace('-', '').replace(' ', '')}")
        for name, where, align, baseline, dx, dy in (("compute", 2, "left", "bottom", 6, -6),
                                                     ("all-reduce", 2, "left", "auto", 6, -9),
                                                     ("backward pass", 8, "right", "top", -4, 8))
    ]
    return alt.layer(*_band_and_rule(max_replicas), lines, dots, *labels).properties(width=WIDTH, height=HEIGHT)


def efficiency_chart(max_replicas: int) -> alt.LayerChart:
    """Figure 2: scaling efficiency (compute / step time) against replicas: the workshop's, and beside it the real
    cluster's (dash-dotted, as in Figure 1, whose direct label and the legend name it: here a label would meet
    the rules' words, which move with every selection)."""
    import altair as alt
    base = alt.Chart(alt.Data(name=GRID_DATA))
    line = base.mark_line(strokeWidth=2.5, color=ink(SERIES["compute"][0]),
                          point=alt.OverlayMarkDef(filled=True, size=28, color=ink(SERIES["compute"][0])),
                          ).properties(name="efficiency").encode(
        x=_x(max_replicas),
        y=alt.Y("efficiency:Q", title="scaling efficiency", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1], grid=True)),
    )
    colour, dash = SERIES["real cluster"]
    y = alt.Y("cluster_efficiency:Q")
    cluster = base.mark_line(strokeWidth=2.5, color=ink(colour), strokeDash=dash).encode(x=alt.X("replicas:Q"), y=y
                                                                                     ).properties(name="cluster")
    return alt.layer(*_band_and_rule(max_replicas), line, cluster).properties(width=WIDTH, height=HEIGHT * 0.72)


TIMELINE_ROWS = ["compute", "all-reduce", "exposed", "label"]  # the last row holds words, not bars
TIMELINE_INK = {"forward": "--c-compute", "head": "--chart-muted", "layer": "--c-compute",
                "embedding": "--chart-muted", "buckets": "--c-reduce", "tail": "--c-reduce-ink"}


def timeline_chart() -> alt.LayerChart:
    """Figure 3: one training step on a time axis: compute above, the bucketed all-reduce below, and the
    tail communication leaves after compute."""
    import altair as alt
    bars = alt.Chart(alt.Data(name=TIMELINE_DATA)).mark_rect(height=18).encode(
        x=alt.X("start:Q", title="seconds into the step", scale=alt.Scale(nice=False, zero=True),
                axis=alt.Axis(format=",~g", tickCount=6, grid=False)),
        x2=alt.X2("end:Q"),
        y=alt.Y("row:N", title=None, sort=TIMELINE_ROWS, scale=alt.Scale(domain=TIMELINE_ROWS),
                axis=alt.Axis(labelFontSize=12, ticks=False, domain=False,
                              labelExpr="datum.value == 'label' ? '' : datum.value")),
        color=alt.Color("kind:N", legend=None, scale=alt.Scale(domain=list(TIMELINE_INK),
                                                               range=[ink(c) for c in TIMELINE_INK.values()])),
        opacity=alt.Opacity("shade:Q", legend=None, scale=None),
    ).properties(name="bars")
    marks = alt.Chart(alt.Data(name=TIMELINE_FACTS))
    bars_only = {"y": alt.YValue(0), "y2": alt.Y2Value(alt.ExprRef("height * 0.75"))}  # not through the words
    # Grey, not the solid black rule, which marks a verdict on the grid in every figure (the legend says so).
    compute_end = marks.mark_rule(color=ink(MUTED), strokeWidth=1, aria=False).encode(
        x=alt.X("compute_end:Q"), **bars_only).properties(name="compute_end")
    bound = marks.mark_rule(color=ink(INK), strokeDash=[1, 3], aria=False).encode(
        x=alt.X("bound_end:Q"), **bars_only).properties(name="bound_rule")
    # Words on the last row: the tail's length under the tail (anchored at its middle, towards the centre),
    # and which step this is on the other side.
    right = "scale('x', datum.tail_middle) > width / 2"
    words = marks.transform_calculate(row="'label'", tail_middle="(datum.compute_end + datum.step_end) / 2")
    y_label = alt.Y("row:N", sort=TIMELINE_ROWS, scale=alt.Scale(domain=TIMELINE_ROWS))
    tail_label = words.mark_text(align=alt.ExprRef(f"{right} ? 'right' : 'left'"), baseline="middle", fontSize=11,
                                 fontWeight="bold", color=ink(LABEL_INK["all-reduce"])).encode(
        x=alt.X("tail_middle:Q"), y=y_label, text=alt.Text("tail_text:N")).properties(name="tail_label")
    # (left out on a narrow figure, where it would run into the tail's words; the description says it)
    where = words.mark_text(align=alt.ExprRef(f"{right} ? 'left' : 'right'"), baseline="middle", fontSize=11,
                            color=ink(MUTED), **hidden_when("width < 560")).encode(
        x=alt.XValue(alt.ExprRef(f"{right} ? 0 : width")), y=y_label, text=alt.Text("replicas_text:N"),
    ).properties(name="replicas_label")
    return alt.layer(bars, compute_end, bound, tail_label, where).properties(width=WIDTH, height=HEIGHT * 0.52)


# --- Figure: model-state memory per GPU (issue 10) ----------------------------------------------------

MEMORY_DATA = "memory"  # the shown selection's states per GPU at each replica count, and the GPU's memory


def memory_chart(max_replicas: int) -> alt.LayerChart:
    """Model-state GB per GPU against replicas for the selected sharding, log–log, with the GPU's memory as a
    horizontal rule and the first replica count of the grid at which the states fit marked."""
    import altair as alt
    base = alt.Chart(alt.Data(name=MEMORY_DATA))
    # Ticks at powers of ten only, the domain rounded out to them: a flat line (no sharding) sat on a log axis
    # ticked 10, 20, 100, 200, 1,000.
    y = alt.Y("states_gb:Q", title="model states per GPU (GB, 10⁹ B)", scale=alt.Scale(type="log", nice=True),
              axis=alt.Axis(format=",~g", values=[10.0 ** k for k in range(-4, 7)], grid=False))
    line = base.mark_line(strokeWidth=2.5, color=ink(SERIES["compute"][0]),
                          point=alt.OverlayMarkDef(filled=True, size=28, color=ink(SERIES["compute"][0])),
                          ).encode(x=_x(max_replicas), y=y).properties(name="states")
    one = base.transform_filter("datum.replicas == 1")
    # Black, as XIV.5's memory rule: a limit, not a series (vermilion is communication's colour).
    memory = one.mark_rule(strokeWidth=1.5, strokeDash=[4, 4], color=ink(INK), aria=False).encode(
        y=alt.Y("memory_gb:Q")).properties(name="gpu_memory")
    # Not labelled in the plot (its words met the states' line and the fit's rule): the title says the GPU's memory,
    # the key below names the rule.
    fit = base.transform_filter("datum.first_fit")
    fit_rule = fit.mark_rule(strokeWidth=1.5, color=ink(INK), aria=False).encode(x=alt.X("replicas:Q")).properties(
        name="fit_rule")
    # Above the plot, as Figures 1 and 2 set their rules' words: at its foot they met the states' line (flat there
    # when the states fit from one replica) and the x axis.
    fit_label = fit.transform_calculate(label="'fits from ' + format(datum.replicas, ',d')").mark_text(
        align=alt.ExprRef(f"datum.replicas >= {LEFT_OF_RULE} ? 'right' : 'left'"), baseline="bottom",
        dx=alt.ExprRef(f"datum.replicas >= {LEFT_OF_RULE} ? -4 : 4"), dy=ROW_CROSSED, fontSize=11,
        fontWeight="bold", color=ink(INK)).encode(x=alt.X("replicas:Q"), y=alt.YValue(0),
                                                  text=alt.Text("label:N")).properties(name="fit_label")
    return alt.layer(memory, fit_rule, fit_label, line).properties(width=WIDTH, height=HEIGHT * 0.72)


def figures(atlas: Atlas, default, store: Cache | None = None) -> list[Figure]:
    """The figures, compiled for the page (no data) and drawn for the default selection: its facts made as the page
    makes them (page_facts.facts), and page_rows's datasets of them; with a store (the build cache), what it already
    holds is not made again."""
    store = store or Cache(None)
    sel = atlas.complete(default)
    f = page_facts.facts({k: getattr(sel, k) for k in KEYS + CLUSTER_KEYS}, presets_data(atlas.presets))
    rows = page_rows.datasets(plain(f))
    data = {name: rows[name] for name in (GRID_DATA, FACTS_DATA, TIMELINE_DATA, TIMELINE_FACTS)}
    made = []
    for fid, title, chart, description, drawn in (
        ("fig-time", "Compute and all-reduce time per step", (time_chart, (f["max_replicas"],)),
         "Per-step compute time and gradient all-reduce time against data-parallel replicas, log–log.", data),
        ("fig-efficiency", "Scaling efficiency", (efficiency_chart, (f["max_replicas"],)),
         "Scaling efficiency against data-parallel replicas.", data),
        ("fig-timeline", "One training step as a timeline", (timeline_chart, ()),
         "One optimiser step: forward and backward compute, the gradient all-reduce (in buckets when only the backward pass hides it), the exposed tail.",
         data),
        ("fig-memory", "Model states per GPU", (memory_chart, (f["max_replicas"],)),
         "Model-state memory per GPU against data-parallel replicas, with the GPU's memory as a line.",
         {MEMORY_DATA: rows[MEMORY_DATA]}),
    ):
        made.append(figure(fid, title, chart, description, drawn, store))
    return made
