"""What the engine asks of XIV.5 (docs/plates.md): its [default], presets, prose names, figures, CSV and page."""
from __future__ import annotations

import itertools
from pathlib import Path

from generator.api import Problems, default_choice, plain
from platelib import catalogue as shared  # the series catalogue: this plate's Model is its model of the page

from . import figures as plate_figures
from . import words as plate_words
from .facts import (CONTROLS, PRECISIONS, PROSE_NAMES as _FACT_NAMES, STAGES, Facts, Selection, facts, facts_data,
                    gpus_of, presets_data, prose_context, words_context)
from .page_rows import csv_rows

DEFAULT_SCHEMA = {key: "text" for key in CONTROLS}  # [default] sets every control, by id
DEFAULT_OPTIONAL: dict = {}
# The names a prose slot may use: the plate's (facts.prose_context) and the engine's.
PROSE_NAMES = (*(n for n in _FACT_NAMES if n != "plates"), "cite", "compare", "scales", "check", "plates")
SLOT_TABLES = {"models": shared.Model, "gpus": shared.Gpu, "networks": shared.Network}
SLOT_ROOTS = {"default": Facts, "gpu": shared.Gpu, "network": shared.Network, "workshop": shared.WorkshopSettings}
SLOT_CALLS = {"scenario": Facts}
FIGURES = plate_words.FIGURES
# The controls beside the figures, in the page's order: (key, label).
LABELS = {"model": "Model", "gpu": "GPU", "stage": "What is sharded", "precision": "Gradient precision",
          "network": "Network"}
# The stage's choices as its select names them, short enough to sit beside Figure 1 on a phone (STAGES, the words'
# names, say more); the engineer's terms go in the tips.
STAGE_OPTIONS = {"none": "nothing (stage 0)", "zero1": "optimiser (stage 1)", "zero2": "+ gradients (stage 2)",
                 "zero3": "+ weights (stage 3)"}
TIPS = {"stage": "ZeRO stage: 1 shards the optimiser states, 2 the gradients too, 3 the weights too (FSDP FULL_SHARD)",
        "precision": "The bytes each gradient travels in", "network": "The link between replicas, per GPU and direction"}
# What each figure's data table shows, column by column; page_words.table_rows fills the same columns for any
# selection.
TABLE_COLUMNS = {"fig-states": ("Replicas", "Stage 0", "Stage 1", "Stage 2", "Stage 3"),
                 "fig-traffic": ("Replicas", "Stage 0", "Stage 1", "Stage 2", "Stage 3")}


def load_presets(problems: Problems, root: Path):
    """The series catalogue beside this plate's folder, under a presets.toml of its own if it has one (each mistake
    at its file and line)."""
    return shared.load_presets(problems, root)


def check_content(problems: Problems, root: Path, front: str, plate, presets, ids, sources) -> None:
    """[default] names presets the catalogue declares and stages and precisions this plate offers."""
    if not (plate and ids):
        return
    tables = {"model": ids["models"], "gpu": ids["gpus"], "network": ids["networks"], "stage": list(STAGES),
              "precision": list(PRECISIONS)}
    if presets is not None:
        tables["gpu"] = list(gpus_of(presets))
    for key, table in tables.items():
        default_choice(problems, root, front, key, getattr(plate.default, key), table, "XIV.5's choices")


class Model:
    """What the other hooks read: the presets and the default's facts."""

    def __init__(self, content):
        self.content = content
        self.presets = content.presets
        self.default = facts(content.presets, content.plate.default)


def model_of(content) -> Model:
    return Model(content)


def check_model(model: Model, root: Path) -> None:
    """Nothing to refuse: the catalogue's checks bound every preset, and the ZeRO formulas stay finite within them."""


def prose_names(content, model: Model) -> dict:
    """The names plate.md's slots may read besides the engine's (cite, plates and its helpers)."""
    names = prose_context(model.presets, content.plate.default, content.plate.plates)
    names.pop("plates")
    return names


def scenario_ids(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """{scenario() keyword: ids it may name}."""
    return {"model": ids["models"], "gpu": ids["gpus"], "network": ids["networks"], "stage": list(STAGES),
            "precision": list(PRECISIONS)}


def unused(content) -> list[str]:
    """No warnings of its own."""
    return []


def figures(content, model: Model, store=None) -> list:
    """Both figures, drawn for the default and described in page_words's words."""
    words = plate_words.words_of([model.default], content.plate.plates, store)[0]
    return plate_figures.figures(model.default, store, words["describe"])


CSV_COLUMNS = ("model", "gpu", "precision", "network", "stage", "replicas", "states_gb", "traffic_gb", "traffic_s",
               "latency_s", "hypothetical")


def csv_cell(value) -> str:
    """A cell of the site's CSV: a float as Python writes it back (repr), anything else as str."""
    return repr(value) if isinstance(value, float) else str(value)


def csv_text(model: Model) -> str:
    """The site's CSV: every model, GPU, gradient precision and network, each stage at each replica count (the rows
    page_rows.csv_rows gives each selection, as the page's download has them)."""
    p = model.presets
    lines = [",".join(CSV_COLUMNS)]
    for m, g, b, n in itertools.product(p.models, gpus_of(p), PRECISIONS, p.networks):
        data = plain(facts_data(facts(p, Selection(m, g, "none", b, n))))
        lines += [",".join(map(csv_cell, row)) for row in csv_rows(data)]
    return "\n".join(lines) + "\n"


def page(content, model: Model, figures: list, dataflows, store=None) -> dict:
    """What the page template fills in: the controls, the default's words and the page script's data."""
    p, plate, f = model.presets, content.plate, model.default
    words = plate_words.words_of([f], plate.plates, store)[0]
    names = {"model": {i: m.name for i, m in p.models.items()}, "gpu": {i: g.name for i, g in gpus_of(p).items()},
             "stage": {i: STAGE_OPTIONS[i] for i in STAGES}, "precision": dict(PRECISIONS),
             "network": {i: n.name for i, n in p.networks.items()}}
    default = {k: getattr(plate.default, k) for k in CONTROLS}
    data = {
        "keys": list(CONTROLS), "default": default, "cluster_keys": [],
        "choices": {k: list(v) for k, v in names.items()},
        "presets": presets_data(p), "plates": plate.plates,
        "words_context": words_context([f], plate.plates),  # W, as the build gives it to the words
        "csv_name": plate.data_file, "csv_columns": list(CSV_COLUMNS),
    }
    return dict(controls=[(k, LABELS[k], names[k]) for k in CONTROLS], tips=TIPS, selected=default,
                readout=words["readout"], caption=facts_data(f)["caption"], columns=TABLE_COLUMNS,
                tables={fig.id: words["tables"][fig.id] for fig in figures},
                descriptions={fig.id: words["describe"][fig.id] for fig in figures}, data=data, presets=p,
                key_lines={fig.id: plate_figures.key_lines(fig.id) for fig in figures})


def select_choices(content) -> dict[str, list[str]]:
    """What `plate pdf --select` may choose."""
    p = content.presets
    return {"model": list(p.models), "gpu": list(gpus_of(p)), "stage": list(STAGES), "precision": list(PRECISIONS),
            "network": list(p.networks)}
