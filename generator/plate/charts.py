"""Figures: Altair charts compiled at build time to Vega (no data) and to a static SVG of the default selection;
a plate module defines its charts and rows (docs/plates.md), this module compiles and draws them."""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..site.cache import Cache
from ..page import theme as page_theme  # charts.theme() is the Vega-Lite config made from it

if TYPE_CHECKING:
    import altair as alt

WIDTH, HEIGHT = 720, 250  # WIDTH: what templates/page/views.js draws at most: static and live figures print alike
# Colours and the font are named by the page's theme variables (generator/page/theme.py: the :root block of
# templates/plate.css) and drawn with their light values; the page's CSS re-inks each for dark mode and print by
# the same name.
FONT = "--sans"
INK, MUTED = "--chart-ink", "--chart-muted"


def ink(name: str) -> str:
    """The colour a theme variable names, as the figures are drawn (the light theme)."""
    return page_theme.current()[name]


@dataclass(frozen=True)
class Figure:
    """One figure: its id, compiled Vega spec (no data), and static SVG of the default selection."""

    id: str
    title: str
    vega: dict
    svg: str


def theme() -> dict:
    """Vega-Lite config shared by the figures, from the page's theme variables (the CSS re-inks them by name)."""
    return {
        "font": page_theme.current().font(FONT),
        "background": None,
        "view": {"stroke": None},
        "axis": {"labelFontSize": 12, "titleFontSize": 12, "titleFontWeight": "normal",
                 "labelColor": ink(INK), "titleColor": ink(INK), "domainColor": ink("--chart-rule"),
                 "tickColor": ink("--chart-rule"), "gridColor": ink("--chart-grid")},
        # One room for every y-axis's labels, wide enough for most selections': the plots drawn against one x axis
        # start at the same x, one above the other, and a change whose labels still fit needs no second layout
        # pass in the page (autosize lays a view out again only when its label room changes).
        "axisY": {"minExtent": 58},
        "autosize": {"type": "fit-x", "contains": "padding"},
        # The figure's box is the image (role="img", named by its caption, described by its words and table):
        # Vega's per-mark ARIA labels would be hidden inside it anyway, and cost bytes in every static SVG.
        "mark": {"aria": False},
        "aria": False,
    }


def to_vega(chart: alt.TopLevelMixin, description: str) -> dict:
    """Compile an Altair chart to a Vega spec without data values."""
    import vl_convert as vlc
    # Not validated against Vega-Lite's schema here (a quarter of a second per build): the charts are code, and
    # tests/test_charts.py validates each of them.
    spec = chart.properties(description=description).to_dict(validate=False)
    spec["config"] = theme()
    spec.pop("datasets", None)
    vega = vlc.vegalite_to_vega(spec)
    vega.pop("$schema", None)
    return vega


def with_data(vega: dict, data: dict[str, list[dict]]) -> dict:
    """A copy of a Vega spec with values put into its named datasets."""
    spec = copy.deepcopy(vega)
    for entry in spec.get("data", []):
        if entry["name"] in data:
            entry["values"] = data[entry["name"]]
    return spec


def static_svg(vega: dict, data: dict[str, list[dict]], figure_id: str) -> str:
    """The figure for the default selection as SVG, with ids made unique to this figure."""
    import vl_convert as vlc
    svg = vlc.vega_to_svg(with_data(vega, data))
    svg = re.sub(r"<\?xml[^>]*>\s*", "", svg)
    return unique_ids(svg, figure_id).strip()


def unique_ids(svg: str, prefix: str) -> str:
    """Every id in an SVG (clip paths, gradients) and every url(#id) naming it, prefixed, so that two SVGs
    inlined in one page cannot take each other's."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if not ids:
        return svg
    pattern = re.compile(r'(\bid="|url\(#|href="#)(' + "|".join(map(re.escape, sorted(ids, key=len, reverse=True)))
                         + r')(?=[")])')
    return pattern.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)


def figure(fid: str, title: str, chart: tuple[Callable, tuple], description: str, data: dict[str, list[dict]],
           store: Cache) -> Figure:
    """One figure: chart = (function, arguments) compiled to Vega, and its SVG drawn with data; both are taken
    from the store when it holds them (keyed by all they are made of), and kept there when made."""
    make, args = chart
    vega = json.loads(store.kept(  # the theme's values are in the key: the stylesheet is not the generator's code
        "vega.json", (fid, make.__name__, args, description, page_theme.current().values),
        lambda: json.dumps(to_vega(make(*args), description), ensure_ascii=False), needs=("altair", "vl_convert")))
    rows = {entry["name"]: data[entry["name"]] for entry in vega.get("data", []) if entry["name"] in data}
    svg = store.kept("svg", (fid, vega, rows), lambda: static_svg(vega, rows, fid), needs=("vl_convert", "fonts"))
    return Figure(id=fid, title=title, vega=vega, svg=svg)
