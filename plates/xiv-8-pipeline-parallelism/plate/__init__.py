"""Plate XIV.8, "Pipeline Parallelism": the plate module the engine loads from this folder (docs/plates.md, "The
contract"). Its numbers and words are schedule, page_facts, page_rows and page_words, which the page runs compiled and
the build runs as they are; the hooks below read the presets, draw the figures and fill the page."""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import make_dataclass
from pathlib import Path

from generator.api import Range, controls_page, csv_table, default_choice, fields, given, keyed
from platelib import catalogue  # the series catalogue: its models, GPUs, networks and layouts

from . import figures as plate_figures
from . import page_facts, page_rows, page_words
from .page_facts import CONTROLS, SCHEDULES

LABELS = {"schedule": "Schedule", "layout": "Stages", "micro": "Micro-batches", "chunks": "Chunks per GPU",
          "model": "Model", "gpu": "GPU", "network": "Network"}
TIPS = {"schedule": "The order each stage runs its forward and backward passes in",
        "layout": "Pipeline stages p (and tensor parallelism t inside each): t·p GPUs per replica",
        "micro": "m: the micro-batches each step's batch is cut into, per pipeline",
        "chunks": "v: interleaving's model chunks per GPU (Figure 2 draws it at this v)",
        "network": "The link between stages, for the activations each micro-batch sends"}
# The choices a link to another plate carries: the series catalogue's ids every one of them reads from its URL (not
# the stages, whose choices include this plate's own [layouts.pp4]).
LINK_KEYS = {subject: ["model", "gpu", "network"] for subject in ("data_parallelism", "sharding", "critical_batch")}
SETTINGS = {"micro_sequences": Range("count", 1, 1024), "backward_ratio": Range("positive", 0.5, 10),
            "weight_share": Range("fraction", 0.01, 0.99), "bubble_target": Range("fraction", 0.001, 0.9),
            "rule_factor": Range("count", 1, 64), "largest_micro": Range("count", 1, 1024),
            "llama_stages": Range("count", 1, 64), "llama_micro": Range("count", 1, 1024),
            "llama_gpus": Range("count", 1, 10**6)}
COUNT = {"name": "text", "count": Range("count", 1, 256)}
CHUNKS = {"name": "text", "count": Range("count", 1, 8)}
OWN_TABLES = ("settings", "micro", "chunks")
CATALOGUE_TABLES = ("models", "gpus", "networks", "layouts")
MOST_STAGES = 64  # the simulation's bound on p: a layout with more stages is not offered
TABLE_COLUMNS = {"fig-schedule": ("Stage", "First pass starts", "Last pass ends", "Idle share"),
                 "fig-bubble": ("Micro-batches", "GPipe", "1F1B", "Interleaved 1F1B", "ZB-H1"),
                 "fig-step": ("Schedule", "Step", "Idle share", "Held by stage 1", "Held at most",
                              "Sent per boundary, GPU and direction")}
CSV_COLUMNS = ["layout", "micro", "chunks", "model", "gpu", "network", "schedule", "stages", "micro_batches",
               "chunks_per_gpu", "step_s", "idle_share", "most_held", "p2p_bytes_per_micro_batch"]
FIGURES = page_words.FIGURES
FIRST_KEYS = ["schedule", "layout", "micro", "chunks"]  # always in the URL; the catalogue's only when not the default's
HARDWARE_KEYS = ["model", "gpu", "network"]

def option_name(key: str, choice: dict) -> str:
    """A choice as its select names it, short enough for the three controls beside Figure 1 to share a phone's width
    (the caption and words keep the full names): stages as "16 (TP 8)", interleaved 1F1B as "interleaved"."""
    if key == "layout":
        return given(choice["pipeline"]) + (" (TP " + given(choice["tensor"]) + ")" if choice["tensor"] > 1 else "")
    if key == "schedule" and choice["name"].startswith("interleaved"):
        return "interleaved"
    return choice["name"]


Selection = make_dataclass("Selection", [(key, str) for key in CONTROLS], frozen=True)  # one id per control


def load_presets(problems, root: Path):
    """The series catalogue under this plate's presets.toml, whose own tables are OWN_TABLES, as the page's plain
    data; and {table: ids declared} (mistakes at each file's line)."""
    made = catalogue.read(problems, root, OWN_TABLES)
    if not made.readable or made.own_file is None:
        if made.readable:
            problems.add(Path(root) / catalogue.PRESETS, None, "file is missing: XIV.8's settings, micro-batch "
                                                               "counts and chunks are written there")
        return None, None
    path, text, data = made.own_file.path, made.own_file.text, made.own
    settings = fields(problems, path, text, ("settings",), data.get("settings", {}), SETTINGS, label="[settings]")
    micro = keyed(problems, path, text, data, "micro", COUNT, lambda ident, values: values)
    chunks = keyed(problems, path, text, data, "chunks", CHUNKS, lambda ident, values: values)
    shared = made.presets
    layouts = {} if shared is None else {i: v for i, v in shared.layouts.items() if 2 <= v.pipeline <= MOST_STAGES}
    ids = {"micro": list(micro), "chunks": list(chunks), "pipelines": list(layouts), "schedules": list(SCHEDULES),
           **{table: made.ids.get(table, []) for table in CATALOGUE_TABLES}}
    if None in (settings, shared) or not (micro and chunks and layouts):
        if shared is not None and not layouts:
            problems.add(path, None, "no layout of the catalogue or of this file has 2 to "
                                     f"{MOST_STAGES} pipeline stages: the stages control needs one")
        return None, ids
    presets = {"settings": settings, "micro": micro, "chunks": chunks, "schedules": SCHEDULES,
               "workshop": dataclasses.asdict(shared.workshop),
               "models": {i: dataclasses.asdict(m) for i, m in shared.models.items()},
               "gpus": {i: dataclasses.asdict(g) for i, g in {**shared.gpus, shared.workshop.gpu: shared.gpu}.items()},
               "networks": {i: dataclasses.asdict(n) for i, n in shared.networks.items()},
               "pipelines": {i: {"name": v.name + f" ({v.gpus:,} GPUs)" if v.gpus != v.pipeline else v.name,
                                 "tensor": v.tensor, "pipeline": v.pipeline} for i, v in layouts.items()}}
    return presets, ids


def check_content(problems, root: Path, front: str, plate, presets, ids, sources) -> None:
    """[default] names a choice of every control."""
    if not (plate and ids):
        return
    for key, table in CONTROLS.items():
        default_choice(problems, root, front, key, getattr(plate.default, key), ids.get(table, []),
                       f"the choices of [{table}]")


class Model:
    """The presets, and the facts of any selection (page_facts.facts)."""

    def __init__(self, content):
        self.content, self.presets = content, content.presets
        self.made = {}  # facts by selection: the prose asks for a few selections several times

    def facts(self, selection) -> dict:
        """A selection's facts (a Selection, or a dict of ids), made as the page makes them."""
        ids = selection if isinstance(selection, dict) else dataclasses.asdict(selection)
        key = tuple(sorted(ids.items()))
        if key not in self.made:
            self.made[key] = page_facts.facts(ids, self.presets)
        return self.made[key]

    def default(self) -> dict:
        return self.facts(self.content.plate.default)

    def scenario(self, **choice) -> dict:
        """The default's facts with some controls chosen otherwise: scenario(micro="m64")."""
        return self.facts({**dataclasses.asdict(self.content.plate.default), **choice})


def model_of(content) -> Model:
    return Model(content)


def prose_names(content, model: Model) -> dict:
    """What plate.md's slots read: {{ default.… }} (the default's facts), scenario(…) for another selection, the
    presets' tables ({{ settings.rule_factor }}) and count(…)."""
    return {"default": model.default(), "scenario": model.scenario, "count": page_words.count, **content.presets}


def scenario_ids(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """{scenario() keyword: the ids it may name}, for the tables given (a table not given is not checked)."""
    return {key: ids[table] for key, table in CONTROLS.items() if table in ids}


def words_context(facts=None, plates: dict | None = None) -> dict:
    """W: the plates this one refers to (plate.md's [plates])."""
    return {"plates": dict(plates or {})}


def figures(content, model: Model, store) -> list:
    """The three figures, drawn for the default and described in page_words's words."""
    f = model.default()
    W = words_context(None, content.plate.plates)
    return plate_figures.figures(page_rows.datasets(f), {fid: page_words.describe(f, fid, W) for fid in FIGURES},
                                 store)


def _csv_selections(model: Model):
    """The site CSV's selections: every stage count and micro-batch count at the default's chunks, model, GPU and
    network (each gives a row per schedule; the page's download gives any selection's rows)."""
    default = dataclasses.asdict(model.content.plate.default)
    p = model.presets
    for layout, micro in itertools.product(p["pipelines"], p["micro"]):
        yield {**default, "layout": layout, "micro": micro}


def csv_text(model: Model) -> str:
    """The site's CSV, under CSV_COLUMNS: page_rows.csv_rows of each of its selections."""
    return csv_table(CSV_COLUMNS, (row for sel in _csv_selections(model)
                                   for row in page_rows.csv_rows(model.facts(sel))))


def page(content, model: Model, figures: list, dataflows, store=None) -> dict:
    """The controls, the default's words (page_words's, as the page makes them) and the page script's data."""
    return controls_page(content, model.default(), figures, page_words, keys=FIRST_KEYS, cluster_keys=HARDWARE_KEYS,
                         controls=CONTROLS, labels=LABELS, tips=TIPS, option_name=option_name,
                         columns=TABLE_COLUMNS, csv_columns=CSV_COLUMNS,
                         context=words_context(None, content.plate.plates))


# The page's functions by role (docs/plates.md, "The page"): the build makes the default's words, the figures' rows
# and the CSV with the same functions.
PAGE = {"facts": page_facts.facts, "datasets": page_rows.datasets, "readout": page_words.readout,
        "title": page_words.title, "describe": page_words.describe, "table_rows": page_words.table_rows,
        "csv_rows": page_rows.csv_rows}
