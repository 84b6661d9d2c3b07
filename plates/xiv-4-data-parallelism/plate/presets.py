"""XIV.4's presets (presets.toml): the reader's Selection and the [default] that names one, checked against the
presets; the presets themselves (models, batches, networks, GPUs, the workshop) are the shared platelib.presets'."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from generator.content import Plate, Source
from generator.schema import Problems, locate, quote

from platelib.presets import (BATCH_SCHEMA, MODEL_SCHEMA, NETWORK_SCHEMA, WORKSHOP_SCHEMA,  # noqa: F401
                              Batch, Gpu, Model, Network, Presets, WorkshopSettings, check_gpu_sources, load_presets)


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
    replica_gpus: str = "1"  # GPUs per replica (tensor × pipeline parallel); the workshop's is one


# [default]: the page's first selection, by id; any control may be set (facts.OPTIONS and CLUSTER_OPTIONS name the
# allowed ids, presets.toml the GPUs), the rest keep the workshop's (Selection's own defaults).
DEFAULT_CONTROLS = ("gpu", "overlap", "precision", "topology", "sharding", "bucket", "micro", "replica_gpus")
DEFAULT_SCHEMA = {"model": "text", "batch": "text", "network": "text", **{key: "text" for key in DEFAULT_CONTROLS}}
DEFAULT_OPTIONAL = {key: getattr(Selection, key) for key in DEFAULT_CONTROLS}


def _check_default(problems: Problems, path: Path, front: str, plate: Plate, ids: dict[str, list[str]]) -> None:
    """The default selection must name presets that presets.toml declares and choices the controls offer."""
    from .facts import CLUSTER_OPTIONS, OPTIONS  # facts reads this module's dataclasses
    tables = {"model": ids["models"], "batch": ids["batches"], "network": ids["networks"], "gpu": ids["gpus"],
              **{key: list(choices) for key, choices in {**OPTIONS, **CLUSTER_OPTIONS}.items()}}
    for key, table in tables.items():
        chosen = getattr(plate.default, key)
        if key == "gpu" and chosen == "":  # not set: the workshop's
            continue
        if table and chosen not in table:  # no ids at all: presets.toml's own mistake is reported already
            close = difflib.get_close_matches(chosen, table, n=1)
            hint = f"did you mean {quote(close[0])}? " if close else ""
            what = "a preset in presets.toml" if key in ("model", "batch", "network", "gpu") else "a choice"
            problems.add(path, locate(front, ("default", key), 1),
                         f"[default]: {key} {quote(chosen)} is not {what} ({hint}known: {', '.join(table) or 'none'})")


def _check_layouts(problems: Problems, path: Path, presets: Presets, ids: dict[str, list[str]]) -> None:
    """Each [layouts.<id>] names controls the page has and choices they offer."""
    from .facts import CLUSTER_OPTIONS, OPTIONS
    tables = {"model": ids["models"], "batch": ids["batches"], "network": ids["networks"], "gpu": ids["gpus"],
              **{key: list(choices) for key, choices in {**OPTIONS, **CLUSTER_OPTIONS}.items()}}
    text = path.read_text(encoding="utf-8")
    for layout in presets.layouts.values():
        for key, chosen in layout.choices.items():
            if key not in tables:
                problems.add(path, locate(text, ("layouts", layout.id, key)),
                             f"layout {quote(layout.id)}: {key} is not a control (known: {', '.join(tables)})")
            elif chosen not in tables[key]:
                problems.add(path, locate(text, ("layouts", layout.id, key)),
                             f"layout {quote(layout.id)}: {key} {quote(chosen)} is not one of its choices "
                             f"(known: {', '.join(tables[key])})")
        for key in ("model", "batch", "network"):
            if key not in layout.choices:
                problems.add(path, locate(text, ("layouts", layout.id)),
                             f"layout {quote(layout.id)}: give its {key} (the other controls keep the workshop's)")


def layout_selection(presets: Presets, layout_id: str) -> Selection:
    """The selection a [layouts.<id>] names (the controls it leaves out keep the workshop's)."""
    return Selection(**presets.layouts[layout_id].choices)


def check_content(problems: Problems, root: Path, front: str, plate: Plate | None, presets: Presets | None,
                  ids: dict[str, list[str]] | None, sources: dict[str, Source] | None) -> None:
    """What joins the files: [default] and [layouts] name presets and choices; a GPU's source is in
    sources.toml."""
    if plate and ids:
        _check_default(problems, root / "plate.md", front, plate, ids)
    if presets and ids:
        _check_layouts(problems, root / "presets.toml", presets, ids)
    if presets and sources is not None:
        check_gpu_sources(problems, root / "presets.toml", presets, sources)
