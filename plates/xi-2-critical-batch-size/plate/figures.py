"""Plate XI.2's two figures: Altair specs compiled by the engine's figure() to Vega (no data) and to a static SVG
of the default, whose rows are page_rows.datasets's (the page's too), described in page_words's words."""
from __future__ import annotations

from generator.api import HEIGHT, INK, WIDTH, figure, ink

from .page_rows import CRITICAL_DATA, CURVE_DATA, KNEE_DATA, TIME_DATA
from .page_words import WAY_NAMES

TITLES = {"fig-steps": "Steps and tokens to the target against the global batch",
          "fig-time": "Time to the target against replicas, two ways to add them"}
STEPS_INK, TOKENS_INK = "--c-compute", "--c-reduce"  # XIV.4's blue and vermilion
TOKENS_LABEL_INK = "--c-reduce-ink"
RULE_LABEL_PX = 170  # about the width of the critical batch's words ("critical batch: 16.0 million"), 11 px bold
LINE = 13  # px between the lines of a label (Vega sets a label's later lines below its first, whatever its baseline)


def steps_chart():
    """S(B) on the left axis and E(B) on the right, log–log against B, B_crit a rule and the two regions shaded."""
    import altair as alt
    x = alt.X("batch:Q", title="global batch (tokens)", scale=alt.Scale(type="log", nice=False),
              axis=alt.Axis(format="~s", grid=False))
    curve = alt.Chart(alt.Data(name=CURVE_DATA))
    steps = curve.mark_line(strokeWidth=2.5, color=ink(STEPS_INK)).encode(
        x=x, y=alt.Y("steps:Q", title="steps to the target", scale=alt.Scale(type="log", nice=False, zero=False),
                     axis=alt.Axis(format="~s", titleColor=ink(STEPS_INK), grid=False)))
    tokens = curve.mark_line(strokeWidth=2.5, strokeDash=[6, 3], color=ink(TOKENS_INK)).encode(
        x=x, y=alt.Y("tokens:Q", title="tokens to the target", scale=alt.Scale(type="log", nice=False, zero=False),
                     axis=alt.Axis(format="~s", orient="right", titleColor=ink(TOKENS_LABEL_INK),
                                   grid=False)))
    marks = alt.Chart(alt.Data(name=CRITICAL_DATA))
    band = ink("--chart-band")
    low = marks.mark_rect(opacity=0.15, color=band).encode(x=alt.X("smallest:Q"), x2=alt.X2("low:Q"))
    high = marks.mark_rect(opacity=0.15, color=band).encode(x=alt.X("high:Q"), x2=alt.X2("largest:Q"))
    rule = marks.mark_rule(strokeDash=[4, 4], strokeWidth=1.5, color=ink(INK)).encode(
        x=alt.X("critical:Q"))
    # The bands' words above the plot, clear of the curves, which run into its top corners; short lines, so that at a
    # phone's width they stay over their bands. The rule's words in a row above theirs, over the rule (inside the
    # plot they ran onto the shading's edge and the curves), kept within the plot's width.
    text = dict(fontSize=11, lineHeight=LINE, fontWeight="bold", color=ink(INK), lineBreak="\n")
    near = "scale('x', datum.critical)"
    rule_label = marks.mark_text(
        align=alt.ExprRef(f"{near} < {RULE_LABEL_PX / 2} ? 'left' : {near} > width - {RULE_LABEL_PX / 2} ? 'right' "
                          f": 'center'"), baseline="bottom", dy=-10 - 3 * LINE, **text).encode(
        x=alt.X("critical:Q"), y=alt.YValue(0), text=alt.Text("label:N"))
    low_label = marks.mark_text(align="left", baseline="bottom", dx=2, dy=-6 - 2 * LINE, **text).encode(
        x=alt.X("smallest:Q"), y=alt.YValue(0), text=alt.Text("low_label:N"))
    high_label = marks.mark_text(align="right", baseline="bottom", dx=-2, dy=-6 - 2 * LINE, **text).encode(
        x=alt.X("largest:Q"), y=alt.YValue(0), text=alt.Text("high_label:N"))
    shading = alt.layer(low, high, rule, rule_label, low_label, high_label)
    return alt.layer(shading, steps, tokens).resolve_scale(y="independent").properties(
        width=WIDTH, height=HEIGHT)


def time_chart():
    """Time to the target against replicas, log–log, a line per way to add them, each knee a labelled point."""
    import altair as alt
    names = list(WAY_NAMES.values())
    color = alt.Color("way:N", scale=alt.Scale(domain=names, range=[ink(STEPS_INK), ink(TOKENS_INK)]),
                      legend=None)  # the key below the figure names the lines (page/legend.html.j2)
    dash = alt.StrokeDash("way:N", scale=alt.Scale(domain=names, range=[[], [6, 3]]), legend=None)
    x = alt.X("replicas:Q", title="data-parallel replicas", scale=alt.Scale(type="log", base=2, nice=False),
              axis=alt.Axis(format=",d", grid=False, labelOverlap=True))
    y = alt.Y("hours:Q", title="time to the target (hours)",
              scale=alt.Scale(type="log", nice=False, zero=False, padding=24),
              axis=alt.Axis(format=",~g", tickCount=6, grid=True))
    lines = alt.Chart(alt.Data(name=TIME_DATA)).mark_line(strokeWidth=2.5).encode(x=x, y=y, color=color,
                                                                                 strokeDash=dash)
    knees = alt.Chart(alt.Data(name=KNEE_DATA))
    points = knees.mark_point(filled=True, size=70, shape="diamond", color=ink(INK)).encode(
        x=alt.X("replicas:Q"), y=alt.Y("hours:Q"))
    # Each knee a diamond; its limit is named in the figure's title (page_words.title), not beside it, where the
    # words ran onto the other way's line.
    return alt.layer(lines, points).properties(width=WIDTH, height=HEIGHT)


def figures(rows: dict, describe: dict, store) -> list:
    """Both figures, drawn with the default's rows and described in its words."""
    return [
        figure("fig-steps", TITLES["fig-steps"], (steps_chart, ()), describe["fig-steps"],
                      {CURVE_DATA: rows[CURVE_DATA], CRITICAL_DATA: rows[CRITICAL_DATA]}, store),
        figure("fig-time", TITLES["fig-time"], (time_chart, ()), describe["fig-time"],
                      {TIME_DATA: rows[TIME_DATA], KNEE_DATA: rows[KNEE_DATA]}, store),
    ]
