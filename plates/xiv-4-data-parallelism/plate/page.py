"""XIV.4's page: its controls, the page script's data, the CSV, and what the page template fills in."""
from __future__ import annotations

import dataclasses

from generator.api import Content, Figure, csv_column, num, sig

from . import custom, measured, model
from platelib.layout import PUBLISHED

from .facts import CLUSTER_KEYS, CLUSTER_OPTIONS, CSV_COLUMNS, KEYS, OPTIONS, SELECTION_COLUMNS, Atlas, gpus_of
from .options import PUBLISHED_NAME
from .presets import Selection
from .words import TABLE_COLUMNS, words_context, words_of  # words_of: the default's words, PAGE's in Python

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
                  "model's published run used, else one GPU; the MFU includes the pipeline's bubble"}


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


def csv_text(atlas: Atlas) -> str:
    """The site's CSV: every model, batch and network under the workshop, one row per replica count; written a
    model at a time, column by column, so that a series of 100 models × 20 batches × 20 networks takes seconds."""
    parts = [",".join(CSV_COLUMNS)]
    for m in atlas.presets.models:
        cells = [csv_column(values) for values in atlas.columns(m).values()]
        parts += map(",".join, zip(*cells))
    return "\n".join(parts) + "\n"


def presets_data(content: Content) -> dict:
    """The presets as the page's facts read them (PAGE's facts, page_facts.facts): the inputs, not their results."""
    p = content.presets
    return {
        "workshop": dataclasses.asdict(p.workshop),
        "gpus": {i: dataclasses.asdict(g) for i, g in gpus_of(p).items()},
        "models": {i: dataclasses.asdict(m) for i, m in p.models.items()},
        "batches": {i: dataclasses.asdict(b) for i, b in p.batches.items()},
        "networks": {i: dataclasses.asdict(n) for i, n in p.networks.items()},
        "layouts": {i: dataclasses.asdict(l) for i, l in p.layouts.items()},
    }


def page_data(content: Content, atlas: Atlas, figures: list[Figure], dataflows: dict[str, dict] | None) -> dict:
    """Everything the page script needs, in one JSON object: presets, options, the default, the figures."""
    default = atlas.complete(content.plate.default)
    return {
        "keys": list(KEYS),
        "default": {k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        "cluster_keys": list(CLUSTER_KEYS),
        "choices": {**{k: list(v) for k, v in atlas.axes.items()}, **{k: list(v) for k, v in CLUSTER_OPTIONS.items()},
                    "layout": list(layout_choices(content.presets))},
        "presets": presets_data(content),
        "csv_columns": [c[0] for c in SELECTION_COLUMNS],  # over the rows of PAGE's csv_rows
        "csv_name": content.plate.data_file,
    }


def page(content: Content, atlas: Atlas, figures: list[Figure], dataflows: dict[str, dict] | None,
         store=None) -> dict:
    """What the page template fills in for this plate: the controls, the default's words and the script's data."""
    plate = content.plate
    default = atlas.complete(plate.default)
    default_facts = atlas.facts(default)
    words = words_of([default_facts], plate.plates, store)[0]
    p = content.presets
    names = {"model": p.models, "batch": p.batches, "network": p.networks, "gpu": gpus_of(p)}
    options = {**CLUSTER_OPTIONS, "layout": layout_choices(p)}
    controls = [(key, label, options[key] if key in options else
                 {i: (option_name(key, names[key][i]) if key in names else OPTIONS[key][i]) for i in atlas.axes[key]})
                for key, label in CONTROLS]
    controls = custom.with_custom(controls)
    data = page_data(content, atlas, figures, dataflows)
    data["own"] = custom.page_data(atlas, default)
    data["plates"] = plate.plates
    data["words_context"] = words_context([default_facts], plate.plates)  # W, as the build gives it to the words
    for key in {c for c, _, _ in custom.FIELDS.values()} & set(data["choices"]):
        data["choices"][key] = [*data["choices"][key], custom.CUSTOM]
    return dict(
        controls=controls, tips=TIPS, selected={k: getattr(default, k) for k in KEYS + CLUSTER_KEYS},
        readout=words["readout"], caption=default_facts.caption, columns=TABLE_COLUMNS,
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


def select_choices(content: Content) -> dict[str, list[str]]:
    """What `plate pdf --select` may choose: the presets' ids by control."""
    p = content.presets
    return {"model": list(p.models), "batch": list(p.batches), "network": list(p.networks)}
