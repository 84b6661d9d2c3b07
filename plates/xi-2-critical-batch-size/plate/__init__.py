"""Plate XI.2, "The Critical Batch Size": the plate module the engine loads from this folder (docs/plates.md, "The
contract"). Its numbers and words are page_facts, page_rows and page_words, which the page runs compiled and the
build runs as they are; the hooks below read the presets, draw the figures and fill the page."""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import make_dataclass
from pathlib import Path

from generator.api import Range, controls_page, csv_table, default_choice, fields, given, keyed, locate, quote
from platelib import catalogue  # the series catalogue: its models, GPUs, networks, batches and layouts
from platelib.layout import PUBLISHED

from . import figures as plate_figures
from . import page_facts, page_rows, page_words
from .page_facts import CONTROLS, STEPS

FOLDER = Path(__file__).resolve().parent.parent  # the plate's folder
LABELS = {"critical": "Critical batch", "size": "Run's size", "model": "Model", "gpu": "GPU", "network": "Network",
          "batch": "Fixed global batch", "per_replica": "Batch per replica", "layout": "GPUs per replica",
          "step": "Step time"}
TIPS = {"critical": "B_crit: set in tokens, or from a target loss through Kaplan et al.'s fit (on their corpus)",
        "size": "S_min: the fewest optimiser steps to the target, with an unbounded batch",
        "per_replica": "Figure 2's first way: the global batch grows with the replicas",
        "batch": "Figure 2's second way: the replicas share one global batch",
        "layout": "Tensor × pipeline parallelism; as published: the layout the model's published run used, else one "
                  "GPU",
        "step": "The workshop's bound (one flat ring at line rate, no latency), or DDP's buckets priced by NCCL's "
                "cost model (plate XIV.4)"}
# The choices a link to plate XIV.4 carries: those its URL reads too (the series' catalogue ids).
LINK_KEYS = {"data_parallelism": ["model", "batch", "network", "gpu", "layout"]}
PUBLISHED_NAME = "as published"  # the layout control's first choice (platelib.layout.PUBLISHED)


def option_name(key: str, choice: dict) -> str:
    """A choice as its select names it: the presets' name, but short enough to sit beside Figure 1 on a phone for
    the controls that do (the words keep the full names)."""
    if key == "critical" and choice.get("loss") is not None:
        return "loss " + given(choice["loss"]) + " nats (Kaplan)"
    if key == "size":
        return given(choice["min_steps"]) + " steps"
    if key == "per_replica":
        return given(choice["sequences"]) + (" sequence" if choice["sequences"] == 1 else " sequences")
    return choice["name"]
SETTINGS = {"kaplan_b_star": Range("positive", 1, 1e15, " tokens"), "kaplan_alpha_b": Range("positive", 0.01, 10),
            "region_factor": Range("positive", 1.5, 1000), "claim_factor": Range("positive", 1.5, 1000),
            "knee_saving": Range("fraction", 0.001, 0.5),
            "span_doublings": Range("count", 1, 40)}
CRITICAL = {"name": "text", "tokens": Range("count", 1, 2**50), "loss": Range("positive", 0.01, 100, " nats")}
SIZE = {"name": "text", "min_steps": Range("count", 1, 10**12)}
PER_REPLICA = {"name": "text", "sequences": Range("count", 1, 2**20)}
DEEPSEEK = {"batch_coefficient": "positive", "batch_exponent": "positive"}
LLAMA3 = {"first_batch_m": "positive", "first_seq_len": "count", "second_batch_m": "positive",
          "second_seq_len": "count", "second_after_tokens": "positive", "third_batch_m": "positive",
          "third_after_tokens": "positive"}
OWN_TABLES = ("settings", "critical", "size", "per_replica", "deepseek", "llama3")
CATALOGUE_TABLES = ("models", "gpus", "networks", "batches", "layouts")
TABLE_COLUMNS = {"fig-steps": ("Global batch (tokens)", "Steps", "Tokens"),
                 "fig-time": ("Replicas", "Fixed batch per replica", "Fixed global batch")}
CSV_COLUMNS = ["critical", "size", "model", "gpu", "network", "batch", "per_replica", "critical_batch_tokens", "way",
               "replicas", "global_batch_tokens", "steps", "step_s", "time_s"]
FIGURES = page_words.FIGURES
# The page's URL always writes the batch's controls; the model, GPU, network, layout and step only when not the
# default's.
HARDWARE_KEYS = ["model", "gpu", "network", "layout", "step"]
BATCH_KEYS = [key for key in CONTROLS if key not in HARDWARE_KEYS]

Selection = make_dataclass("Selection", [(key, str) for key in CONTROLS], frozen=True)  # one id per control


def load_presets(problems, root: Path):
    """The series catalogue under this plate's presets.toml, whose own tables are OWN_TABLES, as the page's plain
    data; and {table: ids declared} (mistakes at each file's line)."""
    made = catalogue.read(problems, root, OWN_TABLES)
    if not made.readable or made.own_file is None:
        if made.readable:
            problems.add(Path(root) / catalogue.PRESETS, None, "file is missing: XI.2's critical batches, run "
                                                               "sizes and batches per replica are written there")
        return None, None
    path, text, data = made.own_file.path, made.own_file.text, made.own
    settings = fields(problems, path, text, ("settings",), data.get("settings", {}), SETTINGS, label="[settings]")
    deepseek = fields(problems, path, text, ("deepseek",), data.get("deepseek", {}), DEEPSEEK, label="[deepseek]")
    llama3 = fields(problems, path, text, ("llama3",), data.get("llama3", {}), LLAMA3, label="[llama3]")
    critical = keyed(problems, path, text, data, "critical", CRITICAL, lambda ident, values: values,
                     optional={"tokens": None, "loss": None})
    for ident, choice in list(critical.items()):
        if (choice["tokens"] is None) == (choice["loss"] is None):
            problems.add(path, locate(text, ("critical", ident)),
                         f"critical {quote(ident)}: give either tokens (the critical batch) or loss (nats per token, "
                         f"through Kaplan et al.'s fit), " + ("not both" if choice["tokens"] else "one is missing"))
            del critical[ident]
    size = keyed(problems, path, text, data, "size", SIZE, lambda ident, values: values)
    per_replica = keyed(problems, path, text, data, "per_replica", PER_REPLICA, lambda ident, values: values)
    shared = made.presets
    ids = {"critical": list(critical), "size": list(size), "per_replica": list(per_replica),
           **{table: made.ids.get(table, []) for table in CATALOGUE_TABLES},
           "layout_choices": [PUBLISHED, *made.ids.get("layouts", [])], "steps": list(STEPS)}
    if None in (settings, deepseek, llama3, shared) or not (critical and size and per_replica):
        return None, ids
    presets = {"settings": settings, "critical": critical, "size": size, "per_replica": per_replica,
               "deepseek": deepseek, "llama3": llama3, "workshop": dataclasses.asdict(shared.workshop),
               "models": {i: dataclasses.asdict(m) for i, m in shared.models.items()},
               "gpus": {i: dataclasses.asdict(g) for i, g in {**shared.gpus, shared.workshop.gpu: shared.gpu}.items()},
               "networks": {i: dataclasses.asdict(n) for i, n in shared.networks.items()},
               "batches": {i: dataclasses.asdict(b) for i, b in shared.batches.items()},
               "layouts": {i: dataclasses.asdict(v) for i, v in shared.layouts.items()},
               "layout_choices": {PUBLISHED: {"name": PUBLISHED_NAME},
                                  **{i: {"name": v.name + (f" ({v.gpus:,} GPUs)" if v.gpus > 1 else "")}
                                     for i, v in shared.layouts.items()}},
               "steps": STEPS}
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

    def facts(self, selection) -> dict:
        """A selection's facts (a Selection, or a dict of ids), made as the page makes them."""
        ids = selection if isinstance(selection, dict) else dataclasses.asdict(selection)
        return page_facts.facts(ids, self.presets)

    def default(self) -> dict:
        return self.facts(self.content.plate.default)

    def scenario(self, **choice) -> dict:
        """The default's facts with some controls chosen otherwise: scenario(critical="l2")."""
        return self.facts({**dataclasses.asdict(self.content.plate.default), **choice})


def model_of(content) -> Model:
    return Model(content)


def prose_names(content, model: Model) -> dict:
    """What plate.md's slots read: {{ default.… }} (the default's facts), scenario(…) for another selection, the
    presets' tables ({{ settings.kaplan_alpha_b }}), and the words' formatters count(…) and given(…)."""
    return {"default": model.default(), "scenario": model.scenario, "count": page_words.count, "given": given,
            **content.presets}


def scenario_ids(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """{scenario() keyword: the ids it may name}, for the tables given (a table not given is not checked)."""
    return {key: ids[table] for key, table in CONTROLS.items() if table in ids}


def words_context(facts=None, plates: dict | None = None) -> dict:
    """W: the plates this one refers to (plate.md's [plates])."""
    return {"plates": dict(plates or {})}


def figures(content, model: Model, store) -> list:
    """Both figures, drawn for the default and described in page_words's words."""
    f = model.default()
    W = words_context(None, content.plate.plates)
    return plate_figures.figures(page_rows.datasets(f), {fid: page_words.describe(f, fid, W) for fid in FIGURES},
                                 store)


def _csv_selections(model: Model):
    """The site CSV's selections: every critical batch, model and network, at the default's size, GPU, global batch
    and batch per replica (the times scale with S_min; the page's download gives any selection's rows). More would
    pass the README's budget for the data file."""
    default = dataclasses.asdict(model.content.plate.default)
    p = model.presets
    for critical, m, net in itertools.product(p["critical"], p["models"], p["networks"]):
        yield {**default, "critical": critical, "model": m, "network": net}


def csv_text(model: Model) -> str:
    """The site's CSV, under CSV_COLUMNS: page_rows.csv_rows of each of its selections."""
    return csv_table(CSV_COLUMNS, (row for sel in _csv_selections(model)
                                   for row in page_rows.csv_rows(model.facts(sel))))


def page(content, model: Model, figures: list, dataflows, store=None) -> dict:
    """The controls, the default's words (page_words's, as the page makes them) and the page script's data."""
    return controls_page(content, model.default(), figures, page_words, keys=BATCH_KEYS, cluster_keys=HARDWARE_KEYS,
                         controls=CONTROLS, labels=LABELS, tips=TIPS, option_name=option_name,
                         columns=TABLE_COLUMNS, csv_columns=CSV_COLUMNS,
                         context=words_context(None, content.plate.plates))


# The page's functions by role (docs/plates.md, "The page"): the build makes the default's words, the figures' rows
# and the CSV with the same functions.
PAGE = {"facts": page_facts.facts, "datasets": page_rows.datasets, "readout": page_words.readout,
        "title": page_words.title,
        "describe": page_words.describe, "table_rows": page_words.table_rows, "csv_rows": page_rows.csv_rows}
