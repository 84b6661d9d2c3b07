"""Plate XIV.4, "Data Parallelism": the plate module the engine loads from this folder (docs/plates.md, "The
contract"). Its numbers and words are page_facts, page_rows and page_words, which the page runs compiled and the
build runs as they are; the hooks below read the presets, draw the figures and fill the page."""
from __future__ import annotations

import importlib
import itertools

import numpy as np

from generator.api import Content, Figure, csv_column, num, sig, words
from platelib.layout import PUBLISHED

from . import custom, measured, model
from . import figures as figures_module
from . import page_facts, page_own, page_rows, page_words
from .facts import (CLUSTER_KEYS, CLUSTER_OPTIONS, KEYS, OPTIONS, Atlas, evaluate, evaluate_inputs, gpus_of,
                    layout_of, presets_data)
from .options import PUBLISHED_NAME
from .page_rows import SELECTION_COLUMNS
from .presets import DEFAULT_OPTIONAL, DEFAULT_SCHEMA, Selection, load_presets  # noqa: F401
from .presets import check_content as check_joins
from .slots import (PROSE_NAMES, SLOT_CALLS, SLOT_ROOTS, SLOT_TABLES, check_model, model_of,  # noqa: F401
                    prose_names, scenario_ids, unused)

FIGURES = ("fig-time", "fig-efficiency", "fig-timeline", "fig-memory")  # the figures the words know
# What each figure's data table shows, column by column; page_words fills the same columns for any selection.
# The site's CSV: every model, batch and network under the workshop (its GPU and options) at every replica count,
# its columns named as page_rows.SELECTION_COLUMNS (a selection's CSV, which the page writes) names them; the
# workshop's own values (GPU, MFU, precisions, options) are in presets.toml, not repeated on every row.
CSV_COLUMNS = ("model", "batch", "network", "replicas", "gpus_per_replica", "params", "global_batch_tokens",
               "link_gbytes_per_s", "compute_s", "allreduce_s", "step_s", "efficiency", "tokens_per_replica",
               "sequences_per_replica", "model_states_gb", "fits_in_memory")
TABLE_COLUMNS = {
    "fig-time": ("Replicas", "Compute per step", "Communication per step, as drawn", "Real cluster's all-reduces"),
    "fig-efficiency": ("Replicas", "Tokens per replica", "Scaling efficiency", "Real cluster's efficiency"),
    "fig-timeline": ("Phase", "Starts", "Ends"),
    "fig-memory": ("Replicas", "Model states per GPU", "Fits on the GPU"),
}

# The controls beside the figures: (key, label), named as readers would; their options come from the presets and
# facts.OPTIONS. TIPS: the engineer's term for a control, in its tip.
CONTROLS = (("model", "Model"), ("batch", "Global batch"), ("network", "Network"), ("gpu", "GPU"),
            ("overlap", "All-reduce hides behind"), ("precision", "Gradient precision"), ("topology", "Ring layout"),
            ("sharding", "Sharding"), ("bucket", "Bucket size"),
            ("micro", "Micro-batches per step"), ("layout", "GPUs per replica"))
TIPS = {"network": "An InfiniBand or Ethernet NIC, or the GPU's own link; per GPU and direction",
        "overlap": "Compute–communication overlap", "topology": "All-reduce topology",
        "sharding": "ZeRO stage (FSDP: stage 3)", "bucket": "DDP's bucket_cap_mb",
        "micro": "Gradient accumulation (DDP's no_sync)",
        "layout": "Tensor × pipeline parallelism: the GPUs that hold one replica; as published: the layout the "
                  "model's published run used, else one GPU; the MFU includes the pipeline's bubble as in that run: with "
                  "fewer micro-batches per replica the bubble grows (plate XIV.8) and the step here is optimistic"}


def option_name(key: str, preset) -> str:
    """A preset as its select names it: a network by its short name (its medium is in the tip), so that the three
    controls beside Figure 1 fit a phone's width; any other by its name."""
    return preset.short if key == "network" else preset.name


def layout_choices(presets) -> dict[str, str]:
    """The layout control's choices, {id: name}: the model's published layout, then the catalogue's, each with the
    GPUs it takes: "TP 8 × PP 16 (128 GPUs)"."""
    return {PUBLISHED: PUBLISHED_NAME, **{i: l.name + (f" ({l.gpus:,} GPUs)" if l.gpus > 1 else "")
                                          for i, l in presets.layouts.items()}}


def selection_key(sel: Selection, default: Selection | None = None) -> str:
    """How the page names a selection (data-shown): its ids in KEYS order, then the real cluster's choices that are
    not the plate's default's (DDP's defaults unless [default] sets them): "&bucket=500"."""
    base = default or Selection("", "", "")
    extra = [f"{k}={getattr(sel, k)}" for k in CLUSTER_KEYS if getattr(sel, k) != getattr(base, k)]
    return "&".join(["|".join(getattr(sel, k) for k in KEYS), *extra])


def csv_columns(atlas: Atlas, model_id: str) -> dict[str, list]:
    """One model's part of the site's CSV, column by column (CSV_COLUMNS): every batch and network under the
    workshop (its GPU and options), a row per replica count, evaluated at once."""
    p = atlas.presets
    choices = {"model": [model_id], "gpu": [p.workshop.gpu], **{k: list(v)[:1] for k, v in OPTIONS.items()}}
    ax = {**atlas.axes, **choices}
    axis = model.replica_counts(p.workshop.max_replicas, layout_of(p, Selection(model_id, "", "")).gpus)
    run, ins = evaluate(p, choices, axis), evaluate_inputs(p, choices)
    repeat = len(axis)
    sels = [Selection(*combo) for combo in itertools.product(*(ax[k] for k in KEYS))]
    declared = {name: (source, field, divisor) for name, source, field, divisor in SELECTION_COLUMNS}
    out = {}
    for name in CSV_COLUMNS:
        source, field, divisor = declared[name]
        if source == "selection":
            out[name] = [getattr(s, field) for s in sels for _ in range(repeat)]
            continue
        value = np.asarray(getattr(ins if source == "inputs" else run, field))
        if source == "inputs":  # one per selection, on each of its rows
            value = np.repeat(value.reshape(-1), repeat)
        else:
            value = np.broadcast_to(value, run.step_s.shape).reshape(-1)
        out[name] = (value if value.dtype == bool or divisor == 1 else value / divisor).tolist()
    return out


def csv_text(atlas: Atlas) -> str:
    """The site's CSV: every model, batch and network under the workshop, one row per replica count; written a
    model at a time, column by column, so that a series of 100 models × 20 batches × 20 networks takes seconds."""
    parts = [",".join(CSV_COLUMNS)]
    for m in atlas.presets.models:
        cells = [csv_column(values) for values in csv_columns(atlas, m).values()]
        parts += map(",".join, zip(*cells))
    return "\n".join(parts) + "\n"


def page_data(content: Content, atlas: Atlas, figures: list[Figure], dataflows: dict[str, dict] | None) -> dict:
    """Everything the page script needs, in one JSON object: presets, options, the default, the figures."""
    default = atlas.complete(content.plate.default)
    return {
        "keys": list(KEYS),
        "default": {k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        "cluster_keys": list(CLUSTER_KEYS),
        "choices": {**{k: list(v) for k, v in atlas.axes.items()}, **{k: list(v) for k, v in CLUSTER_OPTIONS.items()},
                    "layout": list(layout_choices(content.presets))},
        "presets": presets_data(content.presets),
        "csv_columns": [c[0] for c in SELECTION_COLUMNS],  # over the rows of PAGE's csv_rows
        "csv_name": content.plate.data_file,
    }


def page(content: Content, atlas: Atlas, figures: list[Figure], dataflows: dict[str, dict] | None,
         store=None) -> dict:
    """What the page template fills in for this plate: the controls, the default's words and the script's data."""
    plate = content.plate
    default = atlas.complete(plate.default)
    data = page_data(content, atlas, figures, dataflows)
    f = page_facts.facts(data["default"], data["presets"])  # the default's facts, made as the page makes them
    words = words_of([f], plate.plates, store)[0]
    p = content.presets
    names = {"model": p.models, "batch": p.batches, "network": p.networks, "gpu": gpus_of(p)}
    options = {**CLUSTER_OPTIONS, "layout": layout_choices(p)}
    controls = [(key, label, options[key] if key in options else
                 {i: (option_name(key, names[key][i]) if key in names else OPTIONS[key][i]) for i in atlas.axes[key]})
                for key, label in CONTROLS]
    controls = custom.with_custom(controls)
    data["own"] = custom.page_data(atlas, default)
    data["plates"] = plate.plates
    data["words_context"] = words_context([f], plate.plates)  # W, as the build gives it to the words
    for key in {c for c, _, _ in custom.FIELDS.values()} & set(data["choices"]):
        data["choices"][key] = [*data["choices"][key], custom.CUSTOM]
    return dict(
        controls=controls, tips=TIPS, selected={k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        readout=words["readout"], caption=f["caption"], columns=TABLE_COLUMNS,
        tables={f.id: words["tables"][f.id] for f in figures},
        descriptions={f.id: words["describe"][f.id] for f in figures},
        data=data, own=data["own"], presets=p, static_tables=static_tables(content, atlas, default),
    )


def static_tables(content: Content, atlas: Atlas, default: Selection) -> list[dict]:
    """The page's tables that follow no control (docs/plates.md): published measurements beside the model."""
    rows = measured.rows(atlas, content.root, default)
    if not rows:
        return []
    labels = {i: (s.label, f"#source-{i}") for i, s in content.sources.items()}
    return [{"id": "measured", "title": "Measured beside the model", "columns": measured.COLUMNS,
             "caption": ("Published measurements and the model's values for the same setup: each collective at "
                         "the links' line rates (the workshop's) and at the real cluster's achieved rates, whose "
                         f"in-node ({num(model.NVLINK_MEASURED_GBPS)} of {num(model.NVLINK_LINE_GBPS)} GB/s) and "
                         f"NIC ({num(model.NIC_MEASURED_GBPS)} of {num(model.NIC_LINE_GBPS)} GB/s) factors two "
                         "expected figures set; Llama 3's two runs as the one thing the model predicts of them, "
                         "what doubling the replicas costs. Each ratio is the model's value over the measured one."
                         + _capped(rows)),
             "rows": measured.table(rows, labels), "note": measured.error_sentence(rows),
             "print": False}]  # the plate's four printed pages have no room for it


def _capped(rows: list) -> str:
    """Where a NIC figure sets its factor but NVLink's achieved rate caps the model below it, a sentence saying so."""
    nic = [r for r in rows if r.calibrates == "nic" and r.achieved < model.NIC_MEASURED_GBPS]
    if not nic:
        return ""
    return (f" {num(model.NODE_GPUS)} NICs at {num(model.NIC_MEASURED_GBPS)} GB/s would pass the H100's achieved "
            f"{num(model.NVLINK_MEASURED_GBPS)} GB/s inside its node, so the model's ring across H100 nodes runs at "
            f"{sig(nic[0].achieved, 3)} GB/s per NIC.")


def check_content(problems, root, front: str, plate, presets, ids, sources) -> None:
    """What joins the files ([default] and [selections] name presets and choices, each GPU's source is cited:
    presets.check_content), then measured.toml (measured.check)."""
    check_joins(problems, root, front, plate, presets, ids, sources)
    measured.check(problems, root, presets, sources, ids)


def select_choices(content: Content) -> dict[str, list[str]]:
    """What `plate pdf --select` may choose: the presets' ids by control."""
    p = content.presets
    return {"model": list(p.models), "batch": list(p.batches), "network": list(p.networks)}


def context(seq_len: int, plates: dict[str, str] | None = None) -> dict:
    """W, what the words need besides the facts: the sharding options' labels, the sequence length and the plates
    the content refers to by subject (plate.md's [plates])."""
    return {"sharding": [list(o) for o in OPTIONS["sharding"].items()], "seq_len": seq_len, "plates": plates or {}}


def words_context(facts: list[dict], plates: dict[str, str] | None = None) -> dict:
    """W for these facts (page_facts.facts's), which must share a workshop (one sequence length)."""
    seq_len = {int(f["inputs"]["seq_len"]) for f in facts}
    if len(seq_len) > 1:
        raise ValueError("facts of different workshops: their words need one sequence length")
    return context(seq_len.pop() if seq_len else 0, plates)


def words_of(facts: list[dict], plates: dict[str, str] | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout, title, describe, tables}): PAGE's words, in Python, on facts as the page holds
    them (page_facts.facts's; facts.facts_data makes them of a facts.Facts)."""
    return words(importlib.import_module(__name__), facts, plates, store)


def figures(content, atlas: Atlas, store=None) -> list:
    """The figures, compiled and drawn for the content's default selection."""
    return figures_module.figures(atlas, content.plate.default, store)


# What the page runs compiled from this Python (generator/page/compiler.py; docs/plates.md): each number and sentence once.
PAGE = {"facts": page_facts.facts, "datasets": page_rows.datasets, "readout": page_words.readout,
        "title": page_words.title,
        "describe": page_words.describe, "table_rows": page_words.table_rows, "csv_rows": page_rows.csv_rows,
        "own": page_own.own}
