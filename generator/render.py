"""Turn content, facts, figures and prose into the one HTML page (a string): readouts, tables, data, CSP."""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re

import jinja2
from markupsafe import Markup

from . import custom, jsmodules, model, publish, theme
from .charts import BUCKET_GROUPS, FACTS_DATA, GRID_DATA, MEMORY_DATA, TIMELINE_DATA, TIMELINE_FACTS, Figure
from .content import Content, Selection
from .facts import (CAPTIONS, CLUSTER_KEYS, CLUSTER_OPTIONS, CSV_COLUMNS, KEYS, OPTIONS, SELECTION_COLUMNS, Atlas,
                    Facts, gpus_of)
from .notation import data_size, fraction, gigabytes, num, percent, seconds, sig
from .prose import FILTERS, prose_html
from .runtime import Runtime
from .theme import TEMPLATES

# The controls beside the figures: (key, label); their options come from the presets and facts.OPTIONS.
CONTROLS = (("model", "Model"), ("batch", "Global batch"), ("network", "Network"), ("gpu", "GPU"),
            ("overlap", "Overlap"), ("precision", "Gradient precision"), ("topology", "Topology"),
            ("sharding", "Sharding"), ("bucket", "DDP bucket_cap_mb"),
            ("micro", "Micro-batches (no_sync)"))


# --- views of one selection: the page script (templates/page/texts.js) writes the same text for any other -------

def _sequences(share: float) -> str:
    """'0.500 of a sequence', '2 sequences', '1.50 sequences': a whole share is a count, any other a measure."""
    if share < 1:
        return f"{fraction(share)} of a sequence"
    if share == 1:
        return "one sequence"
    return f"{num(share) if float(share).is_integer() else sig(share)} sequences"


def _against(f: Facts) -> tuple[str, str]:
    """(what communicates, what it hides behind): the nouns of the readout and descriptions."""
    noun = "ZeRO-3's traffic" if f.sharding_stage == 3 else "the all-reduce"
    return noun, "the backward pass" if f.backward_only else "compute"


def readout(f: Facts) -> str:
    """The status for one selection, as one text: its paragraphs in order."""
    return " ".join(readout_paragraphs(f))


def readout_paragraphs(f: Facts) -> list[str]:
    """One short paragraph per question a reader brings: where communication stops hiding, what a step then
    costs, whether the model states fit (and with what sharding)."""
    return [hiding_text(f), cost_text(f), memory_text(f)]


def hiding_text(f: Facts) -> str:
    """Where communication outgrows the compute it hides behind: n*, and the first power of two past it."""
    noun, against = _against(f)
    star = num(f.continuous_crossing)
    if f.crossing_replicas is None:
        text = (f"{noun[0].upper()}{noun[1:]} stays hidden behind {against} all the way to {num(f.max_replicas)} "
                f"replicas (the lines would meet at n* ≈ {star}).")
    else:
        at = f.at_crossing
        window = at.compute_s * 2 / 3 if f.backward_only else at.compute_s
        text = (f"{noun[0].upper()}{noun[1:]} outgrows {against} at n* ≈ {star} replicas; "
                f"{num(f.crossing_replicas)} is the first power of two past it, where it takes "
                f"{seconds(at.comm_s)} against {seconds(window)} of {against.replace('the ', '')}.")
    if f.hypothetical_from is not None:
        text += (f" NVLink joins at most {num(f.hypothetical_from)} {f.gpu.name} GPUs "
                 f"({f.gpu.nvlink_domain_name}): beyond that the figures shade the NVLink ring as hypothetical.")
    return text


def cost_text(f: Facts) -> str:
    """What one step then costs: the wait beyond compute alone, the efficiency, each replica's share."""
    last = f.points[-1]
    if f.crossing_replicas is None:
        return (f"A step costs its compute alone: {seconds(last.step_s)} on {num(last.replicas)} replicas, "
                f"where communication takes {seconds(last.comm_s)}; efficiency still {percent(last.efficiency)}.")
    at = f.at_crossing
    # The times of that crossing are the paragraph above's; what is new is the wait they make.
    return (f"Each step there waits {seconds(at.exposed_s)} for communication beyond compute: "
            f"efficiency {percent(at.efficiency)}, and each replica processes {num(at.tokens_per_replica)} tokens "
            f"per step ({_sequences(at.sequences_per_replica)}); on {num(last.replicas)} replicas, "
            f"{seconds(last.step_s)} and {percent(last.efficiency)}.")


def _first_stage_that_fits(f: Facts) -> tuple[str, int] | None:
    """(the first ZeRO stage, the smallest replica count) at which the model states fit, or None."""
    x = f.inputs
    for k, label in list(enumerate(OPTIONS["sharding"].values()))[1:]:
        n = float(model.smallest_fitting_replicas(x.params, k, x.memory_bytes, x.state_bytes))
        if n == n:  # not NaN
            return label, int(n)
    return None


def memory_text(f: Facts) -> str:
    """Whether the model states fit on the chosen GPU (one unit: GB = 10⁹ B), and from how many replicas."""
    gpu = f"one {f.gpu.name} ({num(f.gpu_memory_gb)} GB)"  # the prose says once what GB means and leaves out
    first, last = f.points[0], f.points[-1]
    if f.sharding_stage == 0:
        fits = "fit on" if first.fits else "do not fit on"
        text = f"Model states: {gigabytes(first.states_gb)} per GPU, which {fits} {gpu}."
        other = None if first.fits else _first_stage_that_fits(f)
        if other is not None:
            text += f" Sharded with {other[0]} they would fit from {num(other[1])} replicas (plate XIV.5)."
        return text
    label = OPTIONS["sharding"][f.selection.sharding]
    text = (f"With {label}, model states per GPU fall from {gigabytes(first.states_gb)} on one replica to "
            f"{gigabytes(last.states_gb)} on {num(last.replicas)}; ")
    n, on_grid = f.smallest_fitting_replicas, f.smallest_fitting_on_grid
    if n is None:
        return text + f"they never fit on {gpu}."
    if on_grid is None:
        return text + f"they fit on {gpu} only from {num(n)} replicas, beyond the figures."
    grid = "" if on_grid == n else f" ({num(on_grid)} on the figures' powers of two)"
    return text + f"they fit on {gpu} from {num(n)} replicas{grid}."


# What each figure's data table shows, column by column; templates/page/texts.js fills the same columns for
# other selections.
TABLE_COLUMNS = {
    "fig-time": ("Replicas", "Compute per step", "All-reduce per step", "Real cluster's all-reduces"),
    "fig-efficiency": ("Replicas", "Tokens per replica", "Scaling efficiency", "Real cluster's efficiency"),
    "fig-timeline": ("Phase", "Starts", "Ends"),
    "fig-memory": ("Replicas", "Model states per GPU", "Fits on the GPU"),
}


def table_rows(f: Facts, figure_id: str) -> list[list[str]]:
    """A figure's data table for one selection, as text; the crossing's row says so."""
    if figure_id == "fig-timeline":
        return timeline_table(f)
    if figure_id == "fig-memory":
        return memory_table_rows(f)
    rows, c = [], f.cluster
    for r, p in enumerate(f.points):
        replicas = num(p.replicas) + (" (crossed)" if p.replicas == f.crossing_replicas else "")
        if figure_id == "fig-time":
            rows.append([replicas, seconds(p.compute_s), seconds(p.comm_s), seconds(c["comm_s"][r])])
        else:
            rows.append([replicas, num(p.tokens_per_replica), percent(p.efficiency), percent(c["efficiency"][r])])
    return rows


def timeline_table(f: Facts) -> list[list[str]]:
    """The step timeline's phases, when each starts and ends."""
    p = f.at(f.timeline_replicas)
    compute, tail, bound = p.compute_s, f.timeline_tail_s, f.timeline_bound_s
    forward = compute / 3
    rows = [["Forward pass", seconds(0), seconds(forward)],
            [f"Backward pass: output head, {num(f.model.layers)} layers, input embedding", seconds(forward),
             seconds(compute)]]
    if p.comm_s > 0 and not f.backward_only:
        rows.append(["All-reduce beside the whole step (the workshop's overlap)", seconds(0), seconds(p.comm_s)])
        rows.append(["Exposed tail", seconds(compute), seconds(compute + tail)])
        return rows
    if p.comm_s > 0:
        starts, _ = f.bucket_schedule
        rows.append([f"All-reduce of {num(len(starts))} buckets of whole tensors", seconds(starts[0]),
                     seconds(compute + tail)])
    rows.append(["Exposed tail", seconds(compute), seconds(compute + tail)])
    rows.append(["Perfect overlap within the backward pass (bound)", seconds(compute), seconds(compute + bound)])
    return rows


def describe_timeline(f: Facts) -> str:
    """The step timeline in words."""
    p = f.at(f.timeline_replicas)
    compute, tail, bound = p.compute_s, f.timeline_tail_s, f.timeline_bound_s
    text = (f"One optimiser step on each of {num(f.timeline_replicas)} replicas. The forward pass takes "
            f"{seconds(compute / 3)}, then the backward pass {seconds(compute * 2 / 3)}, from the output head through "
            f"{num(f.model.layers)} layers to the input embedding, so compute ends at {seconds(compute)} (grey rule). ")
    if p.comm_s == 0:
        return text + "With one replica there is nothing to reduce."
    if not f.backward_only:
        text += ("Below, the all-reduce runs beside the whole step from its first instant, as the workshop assumes; "
                 "a real step can send a gradient only once the backward pass has made it (choose \"backward pass "
                 "only\" for the buckets). ")
        if tail <= 0:
            return text + f"It ends at {seconds(p.comm_s)}, within compute: nothing is exposed."
        return text + f"It ends at {seconds(p.comm_s)}: an exposed tail of {seconds(tail)} after compute (bottom row)."
    sizes, _ = f.buckets
    text += (f"Below, the gradients go in {num(len(sizes))} buckets, each all-reduced as soon as the backward pass "
             f"fills it, one after another on the link; bars are darker where the link is busier. DDP closes a bucket once "
             f"it holds {_bucket_limit(f.bucket_cap_mb)} and never splits a tensor, so they hold from {data_size(min(sizes))} to "
             f"{data_size(max(sizes))}. ")
    if tail <= 0:
        return text + "The link finishes with compute: nothing is exposed."
    return text + (f"The last bucket finishes at {seconds(compute + tail)}: an exposed tail of {seconds(tail)} after "
                   f"compute (bottom row). Perfect overlap within the backward pass would leave {seconds(bound)} "
                   f"(dotted rule, the ideal); the buckets add {seconds(tail - bound)}.")


def _bucket_limit(cap_mb: float | None) -> str:
    """What bucket_cap_mb makes each bucket hold at least: '25 MiB (the first at 1 MiB)' when left unset."""
    return "25 MiB (the first at 1 MiB)" if cap_mb is None else f"{num(cap_mb)} MiB"


def describe(f: Facts, figure_id: str, seq_len: int) -> str:
    """A figure in words for one selection: what is drawn, how it runs, where it turns."""
    if figure_id == "fig-timeline":
        return describe_timeline(f)
    if figure_id == "fig-memory":
        return describe_memory(f)
    points = f.points
    first, last = points[0], points[-1]
    n_max = num(last.replicas)
    cross = f.crossing_replicas
    noun, against = _against(f)
    star = f"n* ≈ {num(f.continuous_crossing)}"
    if figure_id == "fig-time":
        text = (f"On log–log axes against replicas from 1 to {n_max}, compute per step (solid blue line, circles) "
                f"falls as 1/n, from {seconds(first.compute_s)} on one replica to {seconds(last.compute_s)} on "
                f"{n_max}. ")
        if len(points) > 1:
            text += (f"With one replica there is nothing to reduce; {noun} (dashed vermilion line, squares) takes "
                     f"{seconds(points[1].comm_s)} on 2 replicas and {seconds(last.comm_s)} on {n_max}, "
                     f"levelling off as n grows. ")
        if f.backward_only:
            text += "The dotted blue line is the backward pass, two thirds of compute: all the all-reduce can hide behind. "
        text += (f"{noun[0].upper()}{noun[1:]} outgrows {against} at {star} (dotted rule, the ideal point) and first on the grid at "
                 f"{num(cross)} replicas (solid rule)." if cross else
                 f"{noun[0].upper()}{noun[1:]} stays below {against} up to {n_max} replicas.")
        if len(points) > 1:
            text += (f" The dash-dotted line is DDP on a real cluster: its {num(f.cluster_bucket_count)} "
                     "buckets' all-reduces, each by NCCL's cheaper of ring and tree on 8-GPU nodes with a NIC per GPU, "
                     f"latency included: {seconds(f.cluster['comm_s'][1])} on 2 replicas and "
                     f"{seconds(f.cluster['comm_s'][-1])} on {n_max}.")
    else:
        full = [p.replicas for p in points if percent(p.efficiency) == "100%"]
        if cross is None:
            text = f"Scaling efficiency (solid blue line) stays at {percent(last.efficiency)} up to {n_max} replicas."
        elif full:
            text = (f"Scaling efficiency (solid blue line) is 100% up to {num(max(full))} replicas, "
                    f"then falls: {percent(f.at(cross).efficiency)} at {num(cross)} (solid rule; {star}, dotted) "
                    f"and {percent(last.efficiency)} at {n_max}.")
        else:
            text = (f"Scaling efficiency (solid blue line) is {percent(first.efficiency)} on one replica and "
                    f"{percent(last.efficiency)} at {n_max}.")
        text += (f" The dash-dotted line is DDP on a real cluster (NCCL on 8-GPU nodes, only the last "
                 f"micro-batch's backward pass hiding the buckets), {percent(f.cluster['efficiency'][-1])} on {n_max} replicas.")
    one_sequence = f.batch.tokens / seq_len
    if one_sequence < last.replicas:
        text += (f" Shaded beyond {num(one_sequence)} replicas, where a replica gets less than one "
                 f"{num(seq_len)}-token sequence per step.")
    if f.hypothetical_from is not None:
        text += (f" Shaded darker beyond {num(f.hypothetical_from)} GPUs, the most one {f.gpu.name} NVLink domain "
                 f"holds: there the NVLink ring is hypothetical.")
    return text


def reserved_heights(figures: list[Figure]) -> str:
    """CSS keeping each figure's box as tall as its live view will be (Vega fits the width, not the height), so
    swapping the static SVG for it shifts nothing; only where scripts run, else the static SVG sets the height."""
    rules = []
    for f in figures:
        height = re.search(r'<svg[^>]*\bheight="([\d.]+)"', f.svg)
        if height:
            rules.append(f"#{f.id} .chart {{ min-height: {float(height.group(1)):g}px; }}")
    return "\n@media screen and (scripting: enabled) {\n  " + "\n  ".join(rules) + "\n}\n" if rules else ""


# --- the memory figure in words and numbers (issue 10; templates/page/texts.js writes the same) ----------------

def memory_table_rows(f: Facts) -> list[list[str]]:
    """The memory figure's table: states per GPU at each replica count, and whether they fit."""
    return [[num(p.replicas), gigabytes(p.states_gb), "yes" if p.fits else "no"] for p in f.points]


def describe_memory(f: Facts) -> str:
    """The memory figure in words: the states' line against the GPU's memory, and where it passes under."""
    first, last = f.points[0], f.points[-1]
    stage = f.selection.sharding if f.selection else "none"
    how = "without sharding" if stage == "none" else f"with {OPTIONS['sharding'][stage]}"
    if f.sharding_stage == 0:
        shape = (f"a flat line: every replica holds all of them, {gigabytes(first.states_gb)} on each of 1 to "
                 f"{num(last.replicas)} replicas")
    elif f.sharding_stage == 3:
        shape = (f"a straight line falling as 1/n, from {gigabytes(first.states_gb)} on one replica to "
                 f"{gigabytes(last.states_gb)} on {num(last.replicas)}")
    else:
        shape = (f"falling from {gigabytes(first.states_gb)} on one replica and levelling off at the part each "
                 f"replica keeps whole, {gigabytes(last.states_gb)} on {num(last.replicas)}")
    text = (f"On log–log axes against replicas from 1 to {num(last.replicas)}, model states per GPU (solid blue "
            f"line, circles) {how} make {shape}. The dashed vermilion line is one {f.gpu.name}'s memory, "
            f"{num(f.gpu_memory_gb)} GB.")
    on_grid = f.smallest_fitting_on_grid
    if on_grid is None:
        return text + " The states stay above it at every replica count drawn."
    if on_grid == 1:
        return text + " The states fit from one replica on."
    return text + f" The states fit from {num(on_grid)} replicas on (solid rule)."


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


def page(content: Content, atlas: Atlas, figures: list[Figure], live: Runtime) -> str:
    """The whole plate as one HTML string, with live the Vega runtime its figures run on."""
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
    p = content.presets
    names = {"model": p.models, "batch": p.batches, "network": p.networks, "gpu": gpus_of(p)}
    controls = [(key, label, CLUSTER_OPTIONS[key] if key in CLUSTER_OPTIONS else
                 {i: (names[key][i].name if key in names else OPTIONS[key][i]) for i in atlas.axes[key]})
                for key, label in CONTROLS]
    controls = custom.with_custom(controls)
    data = page_data(content, atlas, figures, live.dataflows)
    data["own"] = custom.page_data(atlas, default)
    for key in {c for c, _, _ in custom.FIELDS.values()} & set(data["choices"]):
        data["choices"][key] = [*data["choices"][key], custom.CUSTOM]
    return env.get_template("page.html.j2").render(
        plate=plate, presets=p, terms=content.terms, sources=parts.sources,
        before=Markup(parts[0]), after=Markup(parts[1]), figures=figures, controls=controls,
        selected={k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        svgs={f.id: Markup(f.svg) for f in figures},
        readout=readout_paragraphs(default_facts), caption=default_facts.caption, csv_name=plate.data_file,
        url=publish.page_url(plate), preview=publish.PREVIEW_NAME,
        columns=TABLE_COLUMNS, tables={f.id: table_rows(default_facts, f.id) for f in figures},
        descriptions={f.id: describe(default_facts, f.id, p.workshop.seq_len) for f in figures},
        data=script_json(data), dataflows=dataflow_scripts(live.dataflows), own=data["own"],
        style=Markup(style), runtime=Markup(runtime_js), script=Markup(script_safe(script)),
        # The bundle (a function, window.vegaRuntime) is carried inert and run by the page script when the first
        # view is made: loading the page does not even parse it. vl-convert's fallback is a module, run at load.
        runtime_inert=live.dataflows is not None,
        csp_scripts=Markup(" ".join([csp_hash(runtime_js), csp_hash(script_safe(script))])),
        csp_style=Markup(csp_hash(style)),
    )
