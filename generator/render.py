"""Turn content, facts, figures and prose into the one HTML page (a string): readouts, tables, data, CSP."""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re

import jinja2
from markupsafe import Markup

from . import custom, jsmodules, model, publish, texts, theme
from .charts import BUCKET_GROUPS, FACTS_DATA, GRID_DATA, MEMORY_DATA, TIMELINE_DATA, TIMELINE_FACTS, Figure
from .content import Content, Selection
from .facts import (CAPTIONS, CLUSTER_KEYS, CLUSTER_OPTIONS, CSV_COLUMNS, KEYS, OPTIONS, SELECTION_COLUMNS, Atlas,
                    Facts, gpus_of)
from .prose import FILTERS, prose_html
from .runtime import Runtime
from .theme import TEMPLATES

# The controls beside the figures: (key, label); their options come from the presets and facts.OPTIONS.
CONTROLS = (("model", "Model"), ("batch", "Global batch"), ("network", "Network"), ("gpu", "GPU"),
            ("overlap", "Overlap"), ("precision", "Gradient precision"), ("topology", "Topology"),
            ("sharding", "Sharding"), ("bucket", "DDP bucket_cap_mb"),
            ("micro", "Micro-batches (no_sync)"))


# --- views of one selection: the words are templates/page/words.js's, run under node (generator/texts.py) ---------

def readout(f: Facts, plates: dict[str, str] | None = None) -> str:
    """The status for one selection, as one text: its paragraphs in order."""
    return " ".join(readout_paragraphs(f, plates))


def readout_paragraphs(f: Facts, plates: dict[str, str] | None = None) -> list[str]:
    """One short paragraph per question a reader brings (hiding, cost, memory), as the page writes them."""
    return texts.of(f, plates)["readout"]


def describe(f: Facts, figure_id: str, plates: dict[str, str] | None = None) -> str:
    """A figure in words for one selection, as the page writes it."""
    return texts.of(f, plates)["describe"][figure_id]


def table_rows(f: Facts, figure_id: str) -> list[list[str]]:
    """A figure's data table for one selection, as text, as the page writes it."""
    return texts.of(f)["tables"][figure_id]


# What each figure's data table shows, column by column; words.js fills the same columns for any selection.
TABLE_COLUMNS = {
    "fig-time": ("Replicas", "Compute per step", "All-reduce per step", "Real cluster's all-reduces"),
    "fig-efficiency": ("Replicas", "Tokens per replica", "Scaling efficiency", "Real cluster's efficiency"),
    "fig-timeline": ("Phase", "Starts", "Ends"),
    "fig-memory": ("Replicas", "Model states per GPU", "Fits on the GPU"),
}


def reserved_heights(figures: list[Figure]) -> str:
    """CSS keeping each figure's box as tall as its live view will be (Vega fits the width, not the height), so
    swapping the static SVG for it shifts nothing; only where scripts run, else the static SVG sets the height."""
    rules = []
    for f in figures:
        height = re.search(r'<svg[^>]*\bheight="([\d.]+)"', f.svg)
        if height:
            rules.append(f"#{f.id} .chart {{ min-height: {float(height.group(1)):g}px; }}")
    return "\n@media screen and (scripting: enabled) {\n  " + "\n  ".join(rules) + "\n}\n" if rules else ""


_CSS_STRING_UNSAFE = re.compile(r'[\\"<>\x00-\x1f\x7f-\x9f\u2028\u2029]')


def running_heads(content: Content) -> str:
    """CSS for paper: the volume and plate at the head of every printed page, page numbers at the foot."""
    plate = content.plate

    def css_string(text: str) -> str:
        # Every control character and line separator as a CSS escape: a raw line break would end the string
        # (the rest would be live CSS), and HTML parsing turns CR into LF, so the hashed <style> would not match.
        return '"' + _CSS_STRING_UNSAFE.sub(lambda m: f"\\{ord(m.group(0)):x} ", text) + '"'
    left = css_string(f"Vol. {plate.volume} · {plate.volume_title}")
    right = css_string(f"Plate {plate.volume}.{plate.plate} · {plate.title}")
    box = "font: 8pt system-ui, sans-serif; color: #333;"
    return (f"\n@page {{ @top-left {{ content: {left}; {box} }} @top-right {{ content: {right}; {box} }} "
            f'@bottom-center {{ content: "Page " counter(page) " of " counter(pages); {box} }} }}\n'
            "@page :first { @top-left { content: none; } @top-right { content: none; } }\n")


def selection_key(sel: Selection, default: Selection | None = None) -> str:
    """How the page names a selection (data-shown): its ids in KEYS order, then the real cluster's choices that are
    not the plate's default's (DDP's defaults unless [default] sets them): "&bucket=500"."""
    base = default or Selection("", "", "")
    extra = [f"{k}={getattr(sel, k)}" for k in CLUSTER_KEYS if getattr(sel, k) != getattr(base, k)]
    return "&".join(["|".join(getattr(sel, k) for k in KEYS), *extra])


def csv_cell(value) -> str:
    """A number or id as the CSVs write it: Python's shortest round-trip text for a float, without the ".0" of a
    whole one; booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value) if isinstance(value, float) else str(value)
    return text[:-2] if text.endswith(".0") else text


def csv_column(values: list) -> list[str]:
    """csv_cell of every value of a column whose values are of one type, at a fraction of the calls."""
    if not values or isinstance(values[0], str):
        return values
    if isinstance(values[0], bool):
        return ["true" if v else "false" for v in values]
    if isinstance(values[0], float):
        return [t[:-2] if t[-2:] == ".0" else t for t in map(float.__repr__, values)]
    return list(map(csv_cell, values))


def csv_text(atlas: Atlas) -> str:
    """The site's CSV: every model, batch and network under the workshop, one row per replica count; written a
    model at a time, column by column, so that a series of 100 models × 20 batches × 20 networks takes seconds."""
    parts = [",".join(CSV_COLUMNS)]
    for m in atlas.presets.models:
        cells = [csv_column(values) for values in atlas.columns(m).values()]
        parts += map(",".join, zip(*cells))
    return "\n".join(parts) + "\n"


def presets_data(content: Content) -> dict:
    """The presets as the page's model reads them (templates/page/model.js `inputs`): the inputs, not their results."""
    p = content.presets
    return {
        "workshop": dataclasses.asdict(p.workshop),
        "gpus": {i: dataclasses.asdict(g) for i, g in gpus_of(p).items()},
        "models": {i: dataclasses.asdict(m) for i, m in p.models.items()},
        "batches": {i: dataclasses.asdict(b) for i, b in p.batches.items()},
        "networks": {i: dataclasses.asdict(n) for i, n in p.networks.items()},
    }


def live_figure(figure: Figure, dataflows: dict[str, dict] | None) -> dict:
    """How the page script makes a figure's live view: the names of the datasets it feeds (its dataflow, parsed at
    build time, is carried apart: see dataflow_scripts); or, with vl-convert's fallback runtime, the Vega spec that
    runtime parses."""
    if dataflows is None:
        return {"id": figure.id, "vega": figure.vega}
    return {"id": figure.id, "datasets": [d["name"] for d in figure.vega["data"]]}


def dataflow_scripts(dataflows: dict[str, dict] | None) -> dict[str, Markup]:
    """Each figure's dataflow as JSON of its own, read by the page script only when it makes that figure's view:
    most of the page's data (about 300 kB raw), which a load that makes no view need not parse."""
    return {fid: script_json(flow) for fid, flow in (dataflows or {}).items()}


def page_data(content: Content, atlas: Atlas, figures: list[Figure], dataflows: dict[str, dict] | None) -> dict:
    """Everything the page script needs, in one JSON object: presets, options, the default, the figures."""
    default = atlas.complete(content.plate.default)
    return {
        "keys": list(KEYS),
        "default": {k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        "cluster_keys": list(CLUSTER_KEYS),
        "choices": {**{k: list(v) for k, v in atlas.axes.items()}, **{k: list(v) for k, v in CLUSTER_OPTIONS.items()}},
        "options": {k: list(v.items()) for k, v in OPTIONS.items()},  # lists: JSON keys would be sorted
        "captions": [[k, v] for k, v in CAPTIONS.items()],
        "presets": presets_data(content),
        "data": {"grid": GRID_DATA, "facts": FACTS_DATA, "timeline": TIMELINE_DATA, "timeline_facts": TIMELINE_FACTS,
                 "memory": MEMORY_DATA},
        "bucket_groups": BUCKET_GROUPS,
        "csv_columns": [list(c) for c in SELECTION_COLUMNS], "csv_name": content.plate.data_file,
        "figures": [live_figure(f, dataflows) for f in figures],
    }


def script_json(data) -> Markup:
    """JSON safe inside <script>: no '</', '<!--', U+2028 or U+2029 can end or confuse the element."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def csp_hash(code: str) -> str:
    """A CSP source expression allowing exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode() + "'"


def raw_template(env: jinja2.Environment, name: str) -> str:
    """A template file's text as written (CSS and JavaScript are not Jinja templates)."""
    return env.loader.get_source(env, name)[0]


def script_safe(code: str) -> str:
    """JavaScript that cannot close its <script> element early (the page hashes this exact text)."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE).replace("<!--", "<\\!--")


def page_environment() -> jinja2.Environment:
    """Jinja for the page: autoescaped, strict about names."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(FILTERS)
    return env


def page(content: Content, atlas: Atlas, figures: list[Figure], live: Runtime, store=None) -> str:
    """The whole plate as one HTML string, with live the Vega runtime its figures run on; store (a cache.Cache)
    keeps the default's words between builds."""
    plate = content.plate
    parts = prose_html(content, atlas)
    env = page_environment()
    style = theme.current().page_css()  # templates/plate.css, the figures' rules keyed by the variables' values
    if live.minify:  # the templates only: a minifier would undo the escapes that keep content's text in its string
        style = live.minify(style, "css")
    modules = jsmodules.read(TEMPLATES / "page")
    script = jsmodules.concatenate(modules)  # checked on either path: what esbuild would rename, one scope refuses
    if live.bundle:
        script = live.bundle(modules)
    style += running_heads(content) + reserved_heights(figures)
    runtime_js = script_safe(live.code)
    default = atlas.complete(plate.default)
    default_facts = atlas.facts(default)
    words = texts.words([default_facts], plate.plates, store)[0]
    p = content.presets
    names = {"model": p.models, "batch": p.batches, "network": p.networks, "gpu": gpus_of(p)}
    controls = [(key, label, CLUSTER_OPTIONS[key] if key in CLUSTER_OPTIONS else
                 {i: (names[key][i].name if key in names else OPTIONS[key][i]) for i in atlas.axes[key]})
                for key, label in CONTROLS]
    controls = custom.with_custom(controls)
    data = page_data(content, atlas, figures, live.dataflows)
    data["own"] = custom.page_data(atlas, default)
    data["plates"] = plate.plates
    for key in {c for c, _, _ in custom.FIELDS.values()} & set(data["choices"]):
        data["choices"][key] = [*data["choices"][key], custom.CUSTOM]
    return env.get_template("page.html.j2").render(
        plate=plate, presets=p, terms=content.terms, sources=parts.sources,
        before=Markup(parts[0]), after=Markup(parts[1]), figures=figures, controls=controls,
        selected={k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        svgs={f.id: Markup(f.svg) for f in figures},
        readout=words["readout"], caption=default_facts.caption, csv_name=plate.data_file,
        url=publish.page_url(plate), preview=publish.PREVIEW_NAME,
        columns=TABLE_COLUMNS, tables={f.id: words["tables"][f.id] for f in figures},
        descriptions={f.id: words["describe"][f.id] for f in figures},
        data=script_json(data), dataflows=dataflow_scripts(live.dataflows), own=data["own"],
        style=Markup(style), runtime=Markup(runtime_js), script=Markup(script_safe(script)),
        # The bundle (a function, window.vegaRuntime) is carried inert and run by the page script when the first
        # view is made: loading the page does not even parse it. vl-convert's fallback is a module, run at load.
        runtime_inert=live.dataflows is not None,
        csp_scripts=Markup(" ".join([csp_hash(runtime_js), csp_hash(script_safe(script))])),
        csp_style=Markup(csp_hash(style)),
    )
