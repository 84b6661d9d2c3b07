"""Turn content, facts, figures and prose into the one HTML page (a string): readouts, tables, data, CSP."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import math
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import jinja2
from markupsafe import Markup

from . import publish
from .charts import FACTS_DATA, GRID_DATA, SIGNALS, Figure, facts_rows, grid_rows
from .content import Content, Selection
from .facts import CSV_COLUMNS, Atlas, Facts
from .prose import FILTERS, fraction, num, prose_html

# An installed package carries the templates as package data (generator/templates, mapped from the
# repository's templates/ by pyproject.toml); a source checkout reads templates/ beside generator/.
_HERE = Path(__file__).resolve().parent
TEMPLATES = _HERE / "templates" if (_HERE / "templates" / "page.html.j2").is_file() else _HERE.parent / "templates"


# --- views of the grid ---------------------------------------------------------------------------

def shown(value: float, digits: int = 0) -> str:
    """A number as the readout and the figures' tables print it: ties away from zero and thousands separated,
    exactly as the page script's `fixed` (JavaScript's toFixed) prints the same value."""
    exact = Decimal(float(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{exact:,.{digits}f}"


def step_time(value: float) -> str:
    """A time per step as the page data carries it (6 significant digits): '0.64 s', '0.071 s', 'none'."""
    value = _round(float(value))
    return "none" if value == 0 else f"{shown(value, 3 if value < 0.1 else 2)} s"


def efficiency_text(fraction: float) -> str:
    """An efficiency as the page data carries it: '69%'."""
    return f"{shown(_round(float(fraction)) * 100)}%"


def caption(content: Content, sel: Selection) -> str:
    """'Llama 3 8B · 4M tokens · 400 Gb/s': what a figure shows."""
    return content.presets.caption(sel)


def readout(f: Facts) -> str:
    """The status line for one selection: crossing, all-reduce, tokens per replica, memory."""
    n_max = int(f.grid.replicas[-1])
    if f.crossing_replicas is None:
        crossing = (f"Compute stays longer than the all-reduce ({step_time(f.at(n_max).allreduce_s)}) "
                    f"all the way to {num(n_max)} replicas: efficiency is still "
                    f"{efficiency_text(f.at(n_max).efficiency)}.")
    else:
        at = f.at_crossing
        share = at.sequences_per_replica
        seqs = f"{fraction(share)} of a sequence" if share < 1 else f"{num(share, 0 if share >= 10 else 1)} sequences"
        crossing = (f"The lines cross at {num(f.crossing_replicas)} replicas: the all-reduce takes "
                    f"{step_time(at.allreduce_s)} against {step_time(at.compute_s)} of compute, "
                    f"efficiency {efficiency_text(at.efficiency)}, and each replica processes "
                    f"{num(at.tokens_per_replica)} tokens per step ({seqs}).")
    fits = "fit on" if f.fits_in_memory else "do not fit on"
    memory = (f"Model states: {num(f.model_states_gb, 1)} GB per replica, which {fits} one "
              f"{f.gpu.name} ({num(f.gpu_memory_gb)} GB).")
    return f"{crossing} {memory}"


# What each figure's data table shows, column by column; plate.js fills the same columns for other selections.
TABLE_COLUMNS = {
    "fig-time": ("Replicas", "Compute per step", "All-reduce per step"),
    "fig-efficiency": ("Replicas", "Tokens per replica", "Scaling efficiency"),
}


def table_rows(f: Facts, figure_id: str) -> list[list[str]]:
    """A figure's data table for one selection, as text; the crossing's row says so."""
    rows = []
    for p in f.points:
        replicas = num(p.replicas) + (" (cross)" if p.replicas == f.crossing_replicas else "")
        if figure_id == "fig-time":
            rows.append([replicas, step_time(p.compute_s), step_time(p.allreduce_s)])
        else:
            rows.append([replicas, shown(f.batch.tokens / p.replicas), efficiency_text(p.efficiency)])
    return rows


def describe(f: Facts, figure_id: str, seq_len: int) -> str:
    """A figure in words for one selection: what is drawn, how it runs, where it turns."""
    points = f.points
    first, last = points[0], points[-1]
    n_max = num(last.replicas)
    cross = f.crossing_replicas
    if figure_id == "fig-time":
        reduce = [p.allreduce_s for p in points if p.replicas > 1]
        text = (f"Log–log lines against replicas from 1 to {n_max}. Compute per step (solid blue line, circles) "
                f"falls from {step_time(first.compute_s)} on one replica to {step_time(last.compute_s)} on "
                f"{n_max}; the all-reduce (dashed vermilion line, squares) rises from {step_time(reduce[0])} on "
                f"2 replicas to {step_time(reduce[-1])} on {n_max}. ")
        text += (f"The lines cross at {num(cross)} replicas (vertical rule)." if cross else
                 f"The lines do not cross within {n_max} replicas.")
    else:
        full = [p.replicas for p in points if efficiency_text(p.efficiency) == "100%"]
        if cross is None:
            text = f"Scaling efficiency (solid blue line) stays at {efficiency_text(last.efficiency)} up to {n_max} replicas."
        else:
            text = (f"Scaling efficiency (solid blue line) is 100% up to {num(max(full))} replicas, "
                    f"then falls: {efficiency_text(f.at(cross).efficiency)} at {num(cross)} (vertical rule) and "
                    f"{efficiency_text(last.efficiency)} at {n_max}." if full else
                    f"Scaling efficiency (solid blue line) is {efficiency_text(first.efficiency)} on one replica and "
                    f"{efficiency_text(last.efficiency)} at {n_max}.")
    one_sequence = f.batch.tokens / seq_len
    if one_sequence < last.replicas:
        text += (f" Shaded beyond {num(one_sequence)} replicas, where a replica gets less than one "
                 f"{num(seq_len)}-token sequence per step.")
    return text


def running_heads(content: Content) -> str:
    """CSS for paper: the volume and plate at the head of every printed page, page numbers at the foot."""
    plate = content.plate

    def css_string(text: str) -> str:
        return '"' + re.sub(r'[\\"<>\n]', lambda m: f"\\{ord(m.group(0)):x} ", text) + '"'
    left = css_string(f"Vol. {plate.volume} · {plate.volume_title}")
    right = css_string(f"Plate {plate.volume}.{plate.plate} · {plate.title}")
    box = "font: 8pt system-ui, sans-serif; color: #333;"
    return (f"\n@page {{ @top-left {{ content: {left}; {box} }} @top-right {{ content: {right}; {box} }} "
            f'@bottom-center {{ content: "Page " counter(page) " of " counter(pages); {box} }} }}\n'
            "@page :first { @top-left { content: none; } @top-right { content: none; } }\n")


def selection_key(sel: Selection) -> str:
    """How the page looks up a selection's texts."""
    return f"{sel.model}|{sel.batch}|{sel.network}"


def csv_text(atlas: Atlas) -> str:
    """The grid as CSV, one row per model, batch, network and replica count."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in atlas.rows():
        writer.writerow({k: (repr(v) if isinstance(v, float) else str(v).lower() if isinstance(v, bool) else v)
                         for k, v in row.items()})
    return out.getvalue()


def _round(value):
    """Floats to 6 significant digits for the page (the CSV keeps full precision)."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.6g}")
    return value


def page_data(content: Content, atlas: Atlas, figures: list[Figure]) -> dict:
    """Everything the page script needs, in one JSON object."""
    p = content.presets
    return {
        "signals": dict(zip(("model", "batch", "network"), SIGNALS)),
        "default": {"model": content.plate.default.model, "batch": content.plate.default.batch,
                    "network": content.plate.default.network},
        "choices": {"model": list(p.models), "batch": list(p.batches), "network": list(p.networks)},
        "datasets": {
            GRID_DATA: [{k: _round(v) for k, v in r.items()} for r in grid_rows(atlas)],
            FACTS_DATA: facts_rows(atlas),
        },
        "texts": {selection_key(s): {"readout": readout(atlas.facts(s)), "caption": caption(content, s),
                                     "describe": {f.id: describe(atlas.facts(s), f.id, p.workshop.seq_len)
                                                  for f in figures}}
                  for s in atlas.selections},
        "figures": [{"id": f.id, "vega": f.vega} for f in figures],
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


def page(content: Content, atlas: Atlas, figures: list[Figure], runtime_js: str) -> str:
    """The whole plate as one HTML string."""
    plate = content.plate
    parts = prose_html(content, atlas)
    env = page_environment()
    style = raw_template(env, "plate.css") + running_heads(content)
    script = raw_template(env, "plate.js")
    runtime_js = script_safe(runtime_js)
    default_facts = atlas.facts(plate.default)
    return env.get_template("page.html.j2").render(
        plate=plate, presets=content.presets, terms=content.terms, sources=parts.sources,
        before=Markup(parts[0]), after=Markup(parts[1]), figures=figures,
        svgs={f.id: Markup(f.svg) for f in figures},
        readout=readout(default_facts), caption=caption(content, plate.default), csv_name=plate.data_file,
        url=publish.page_url(plate), preview=publish.PREVIEW_NAME,
        columns=TABLE_COLUMNS, tables={f.id: table_rows(default_facts, f.id) for f in figures},
        descriptions={f.id: describe(default_facts, f.id, content.presets.workshop.seq_len) for f in figures},
        data=script_json(page_data(content, atlas, figures)),
        style=Markup(style), runtime=Markup(runtime_js), script=Markup(script),
        csp_scripts=Markup(" ".join([csp_hash(runtime_js), csp_hash(script)])), csp_style=Markup(csp_hash(style)),
    )
