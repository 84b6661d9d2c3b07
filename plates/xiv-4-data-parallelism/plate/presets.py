"""XIV.4's presets: the series catalogue (platelib.catalogue: models, batches, networks, GPUs, layouts, the workshop)
with this plate's presets.toml laid over it, whose own table is [selections.<id>] (the selections real runs used);
the reader's Selection and the [default] that names one, checked against them."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from generator.api import Plate, Problems, Source, locate, quote

from platelib import catalogue
from platelib.catalogue import (BATCH_SCHEMA, MODEL_SCHEMA, NETWORK_SCHEMA, WORKSHOP_SCHEMA,  # noqa: F401
                                Batch, Gpu, Layout, Model, Network, WorkshopSettings, check_gpu_sources)
from platelib.layout import PUBLISHED

from .options import CLUSTER_OPTIONS, OPTIONS

OWN_TABLES = ("selections",)  # presets.toml's tables that are this plate's own, not the catalogue's


@dataclass(frozen=True)
class Selection:
    """One choice of model, global batch and network, by preset id, and of the options beyond the workshop
    (facts.OPTIONS; each defaults to the workshop's: its GPU, whole-step overlap, BF16, flat ring, no sharding)."""

    model: str
    batch: str
    network: str
    gpu: str = ""  # "" is the workshop's GPU
    overlap: str = "step"
    precision: str = "bf16"
    topology: str = "flat"
    sharding: str = "none"
    bucket: str = "default"  # DDP's bucket_cap_mb on the real cluster (facts.CLUSTER_OPTIONS): left unset
    micro: str = "1"  # micro-batches per step (no_sync on all but the last)
    layout: str = PUBLISHED  # a catalogue layout's id (t × p GPUs per replica), or the model's published one


@dataclass(frozen=True)
class RunSelection:
    """A published run's selection ([selections.<id>]): its name and the controls' ids that select it ({control
    key: id}; the controls it leaves out keep the workshop's)."""

    id: str
    name: str
    choices: dict[str, str]


@dataclass(frozen=True)
class Presets(catalogue.Presets):
    """The catalogue's presets, with this plate's selections of published runs."""

    selections: dict[str, RunSelection] = field(default_factory=dict)


# [default]: the page's first selection, by id; any control may be set (facts.OPTIONS and CLUSTER_OPTIONS name the
# allowed ids, the catalogue the GPUs and layouts), the rest keep the workshop's (Selection's own defaults).
DEFAULT_CONTROLS = ("gpu", "overlap", "precision", "topology", "sharding", "bucket", "micro", "layout")
DEFAULT_SCHEMA = {"model": "text", "batch": "text", "network": "text", **{key: "text" for key in DEFAULT_CONTROLS}}
DEFAULT_OPTIONAL = {key: getattr(Selection, key) for key in DEFAULT_CONTROLS}
PRESET_KEYS = {"model": "models", "batch": "batches", "network": "networks", "gpu": "gpus", "layout": "layouts"}


def load_presets(problems: Problems, root: Path) -> tuple[Presets | None, dict[str, list[str]] | None]:
    """The catalogue under root/presets.toml, and its [selections.<id>]; (presets, {table: ids declared})."""
    made = catalogue.read(problems, root, OWN_TABLES)
    if not made.readable:
        return None, None
    selections = _selections(problems, made)
    if made.presets is None:
        return None, made.ids
    return Presets(**{f: getattr(made.presets, f) for f in made.presets.__dataclass_fields__},
                   selections=selections), made.ids


def _selections(problems: Problems, made: catalogue.Read) -> dict[str, RunSelection]:
    """[selections.<id>]: each a name and control ids, all text, every mistake at its own line (which ids a control
    offers is checked with the rest of the content: check_content)."""
    out = {}
    if "selections" not in made.own:
        return out
    tables = made.own["selections"]
    path, text = made.own_file.path, made.own_file.text
    if not isinstance(tables, dict):
        problems.add(path, locate(text, ("selections",)), "[selections] must be tables [selections.<id>]")
        return out
    for ident, table in tables.items():
        if not isinstance(table, dict):
            problems.add(path, locate(text, ("selections", ident)),
                         f"[selections]: {ident} = … is not a [selections.<id>] table")
            continue
        ok = True
        if "name" not in table:
            problems.add(path, locate(text, ("selections", ident)), f"selection {quote(ident)}: missing key \"name\"")
            ok = False
        for key, value in table.items():
            if not isinstance(value, str):
                problems.add(path, locate(text, ("selections", ident, key)),
                             f"selection {quote(ident)}: {key} must be a string, the id of one of its choices "
                             f'({key} = "…")')
                ok = False
        if ok:
            out[ident] = RunSelection(id=ident, name=table["name"],
                                      choices={k: v for k, v in table.items() if k != "name"})
    return out


def _tables(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each control's allowed ids: the presets' and the options'."""
    return {**{key: list(ids[table]) for key, table in PRESET_KEYS.items()},
            **{key: list(choices) for key, choices in {**OPTIONS, **CLUSTER_OPTIONS}.items()}}


def _check_default(problems: Problems, path: Path, front: str, plate: Plate, ids: dict[str, list[str]]) -> None:
    """The default selection must name presets the catalogue declares and choices the controls offer."""
    tables = _tables(ids)
    tables["layout"] = [PUBLISHED, *tables["layout"]]
    for key, table in tables.items():
        chosen = getattr(plate.default, key)
        if key == "gpu" and chosen == "":  # not set: the workshop's
            continue
        if table and chosen not in table:  # no ids at all: the catalogue's own mistake is reported already
            close = difflib.get_close_matches(chosen, table, n=1)
            hint = f"did you mean {quote(close[0])}? " if close else ""
            what = "a preset" if key in PRESET_KEYS else "a choice"
            problems.add(path, locate(front, ("default", key), 1),
                         f"[default]: {key} {quote(chosen)} is not {what} ({hint}known: {', '.join(table) or 'none'})")


def _check_selections(problems: Problems, path: Path, presets: Presets, ids: dict[str, list[str]]) -> None:
    """Each [selections.<id>] names controls the page has and choices they offer."""
    tables = _tables(ids)
    tables["layout"] = [PUBLISHED, *tables["layout"]]
    text = path.read_text(encoding="utf-8")
    for run in presets.selections.values():
        for key, chosen in run.choices.items():
            if key not in tables:
                problems.add(path, locate(text, ("selections", run.id, key)),
                             f"selection {quote(run.id)}: {key} is not a control (known: {', '.join(tables)})")
            elif chosen not in tables[key]:
                problems.add(path, locate(text, ("selections", run.id, key)),
                             f"selection {quote(run.id)}: {key} {quote(chosen)} is not one of its choices "
                             f"(known: {', '.join(tables[key])})")
        for key in ("model", "batch", "network"):
            if key not in run.choices:
                problems.add(path, locate(text, ("selections", run.id)),
                             f"selection {quote(run.id)}: give its {key} (the other controls keep the workshop's)")


def run_selection(presets: Presets, ident: str) -> Selection:
    """The selection a [selections.<id>] names (the controls it leaves out keep the workshop's)."""
    return Selection(**presets.selections[ident].choices)


def check_content(problems: Problems, root: Path, front: str, plate: Plate | None, presets: Presets | None,
                  ids: dict[str, list[str]] | None, sources: dict[str, Source] | None) -> None:
    """What joins the files: [default] and [selections] name presets and choices; a GPU's source is in
    sources.toml."""
    if plate and ids:
        _check_default(problems, root / "plate.md", front, plate, ids)
    if presets and ids and presets.selections:
        _check_selections(problems, root / catalogue.PRESETS, presets, ids)
    if presets and sources is not None:
        made = catalogue.read(Problems(root), root, OWN_TABLES)  # where each GPU is written, for its line
        check_gpu_sources(problems, made, sources)
