"""What XIV.4's prose may name ({{ default.crossing_replicas }}, scenario(network="nvlink")), the checks of its
grid and its unused presets."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from generator.api import Problems, describe_value, locate, quote, shown_path, split_front_matter
from platelib.layout import PUBLISHED, WORKSHOP

from . import measured
from .facts import CLUSTER_OPTIONS, OPTIONS, Atlas, Facts, evaluate, extremes, gpus_of
from .presets import Batch, Gpu, Layout, Model, Network, Selection, WorkshopSettings

# The names a prose slot may use, as a mistake lists them: the plate's and the engine's (cite, compare, scales, check,
# plates).
PROSE_NAMES = ("default", "scenario", "cite", "workshop", "gpu", "gpus", "models", "batches", "networks", "layouts",
               "compare", "scales", "check", "plates")
# What the engine's slot check (checks.SlotNames) follows: the tables of presets and the roots' types.
SLOT_TABLES = {"models": Model, "batches": Batch, "networks": Network, "layouts": Layout}
SLOT_ROOTS = {"default": Facts, "workshop": WorkshopSettings, "gpu": Gpu}
SLOT_CALLS = {"scenario": Facts}  # what a call in a slot returns
SCENARIO_KEYS = {"model": "models", "batch": "batches", "network": "networks"}  # scenario()'s preset keywords


def scenario_ids(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """{scenario() keyword: the preset ids it may name}, from the ids presets.toml declares."""
    return {keyword: ids[table] for keyword, table in SCENARIO_KEYS.items()}


def model_of(content) -> Atlas:
    """The model's grid over the content's presets (facts.Atlas), which every other hook reads."""
    return Atlas(content.presets)


class Names:
    """The names of one content's prose: the workshop's facts for [default]'s presets, other scenarios, presets."""

    def __init__(self, content, atlas: Atlas):
        self.content, self.atlas = content, atlas

    def variables(self) -> dict:
        """The names a prose template can use, besides the engine's."""
        p = self.content.presets
        return {
            "default": self.atlas.facts(self.workshop()),
            "scenario": self.scenario,
            "workshop": p.workshop, "gpu": p.gpu, "gpus": gpus_of(p),
            "models": p.models, "batches": p.batches, "networks": p.networks, "layouts": p.layouts,
        }

    def workshop(self) -> Selection:
        """What the prose states: [default]'s model, batch and network under the workshop's GPU and options, on its
        one-GPU replicas (platelib.layout.WORKSHOP)."""
        # [default]'s other controls set the figures, readout and controls only: the prose argues from the workshop.
        d = self.content.plate.default
        return self.atlas.complete(Selection(d.model, d.batch, d.network, layout=WORKSHOP))

    def scenario(self, *args, **choice) -> Facts:
        """Facts for the workshop's selection with some presets or options swapped: scenario(network="nvlink"),
        scenario(overlap="backward"), scenario(gpu="b200", precision="fp32"), scenario(bucket="500", micro="4"),
        scenario(layout="tp8")."""
        keys = ("model", "batch", "network", "gpu", *OPTIONS, *CLUSTER_OPTIONS, "layout")
        if args or set(choice) - set(keys):
            given = ", ".join([describe_value(a) for a in args] + [f"{k}=" for k in choice if k not in keys])
            raise LookupError(f"scenario() takes only {'=, '.join(keys)}= (preset or option ids), got {given}")
        sel = replace(self.workshop(), **choice)
        p = self.content.presets
        tables = {"model": p.models, "batch": p.batches, "network": p.networks, "gpu": gpus_of(p), **OPTIONS,
                  **CLUSTER_OPTIONS, "layout": [WORKSHOP, PUBLISHED, *p.layouts]}
        for kind in keys:
            chosen, table = getattr(sel, kind), tables[kind]
            if not isinstance(chosen, str) or chosen not in table:
                raise LookupError(f"scenario(): {kind} {describe_value(chosen)} is not a "
                                  f"{'preset' if kind in ('model', 'batch', 'network', 'gpu') else 'choice'} "
                                  f"(known: {', '.join(table)})")
        return self.atlas.facts(sel)


def prose_names(content, atlas: Atlas) -> dict:
    """What XIV.4's prose slots may name besides the engine's."""
    return Names(content, atlas).variables()


MAX_STEP_SECONDS = 1e9  # about 32 years per step: beyond it a preset is a typo, and times no longer print


def check_model(atlas: Atlas, root: Path) -> None:
    """Presets that are each within bounds can still combine into absurd times (1e15 parameters on a
    0.001 TFLOP/s GPU): checked on the presets at the ends of each axis (facts.extremes), which bound every
    selection's values, and the longest step named at its model's line."""
    p = atlas.presets
    ends = extremes(p)
    g = evaluate(p, ends)
    arrays = (g.compute_s, g.allreduce_s, g.step_s, g.efficiency, g.tokens_per_replica, g.states_bytes,
              g.continuous_crossing)
    path = root / "presets.toml"
    problems = Problems(root)
    if not all(np.isfinite(a).all() for a in arrays):
        formula = _undefined_at(p, ends, root)
        if formula:  # no value overflowed on the way: the presets are in bounds, the formula gave no number
            problems.items.append(f"{formula}: a formula of the model gives an undefined number (NaN) for presets "
                                  f"each within their bounds (those at the ends of each axis): a mistake in the "
                                  f"formula, not in presets.toml")
        else:
            problems.add(path, None, "the presets are too large or too small for the model: some times or "
                                     "efficiencies come out infinite or undefined")
        problems.raise_if_any()
    worst = np.unravel_index(np.argmax(g.step_s), g.step_s.shape)
    if g.step_s[worst] > MAX_STEP_SECONDS:
        model, batch, network = (ends[k][i] for k, i in zip(("model", "batch", "network"), worst))
        text = path.read_text(encoding="utf-8-sig")
        problems.add(path, locate(text, ("models", model, "params")),
                     f"model {quote(model)} with batch {quote(batch)} over network "
                     f"{quote(network)}: one step would take {g.step_s[worst]:.3g} s, more than "
                     f"{MAX_STEP_SECONDS:,.0f} s (about 32 years); check params, tokens, peak_tflops, mfu and "
                     f"link_gbytes_per_s")
        problems.raise_if_any()


def _undefined_at(p, ends, root: Path) -> str | None:
    """FILE, line N of the formula (the plate's or platelib's) whose numpy operation first made a NaN from finite
    values, evaluating the extremes again with numpy raising there; None when a value overflowed first (the
    presets are too large or too small for the model) or nothing could be pinned."""
    try:
        with np.errstate(over="raise", invalid="raise"):
            evaluate(p, ends)
    except FloatingPointError as error:
        if "overflow" in str(error):
            return None
        import platelib
        library = Path(platelib.__file__).resolve().parent  # plates/lib, installed as platelib
        found = None
        tb = error.__traceback__
        while tb is not None:  # the innermost line of the plate's folder or of platelib
            file = Path(tb.tb_frame.f_code.co_filename).resolve()
            if file.is_relative_to(root.resolve()):
                found = (f"{shown_path(file, root.resolve())}", tb.tb_lineno)
            elif file.is_relative_to(library):
                found = (f"plates/lib/{file.relative_to(library).as_posix()}", tb.tb_lineno)
            tb = tb.tb_next
        return f"{found[0]}, line {found[1]}" if found else None
    return None


def unused(c) -> list[str]:
    """Warnings at file:line: selections of published runs no run of measured.toml names; a [default] GPU that is
    not the workshop's. (The catalogue's presets are all offered: the model, batch, network, GPU and layout
    controls.)"""
    import tomllib

    problems = Problems(c.root)
    try:
        presets_text = (c.root / "presets.toml").read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        presets_text = ""
    try:  # a selection is used where Table 1 (measured.toml) names it
        named = {run.get("selection") for run in measured.load(c.root).get("runs", []) if isinstance(run, dict)}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        named = set()
    for ident in getattr(c.presets, "selections", {}):
        if ident not in named:
            problems.add(c.root / "presets.toml", locate(presets_text, ("selections", ident)),
                         f"[selections.{ident}] is never used: no run of measured.toml names it")
    _default_gpu(c, problems)
    return problems.items


def _default_gpu(c, problems: Problems) -> None:
    """A warning at [default]'s gpu when it is not the workshop's: the figures open on it, but the prose (Names.workshop)
    argues from the workshop's GPU, so the page would describe two GPUs at once."""
    chosen, workshop = c.plate.default.gpu, c.presets.workshop.gpu
    if chosen in ("", workshop) or chosen not in c.presets.gpus:
        return
    path = c.root / "plate.md"
    try:
        parts = split_front_matter(Problems(c.root), path, path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError):
        parts = None
    line = locate(parts[0], ("default", "gpu"), 1) if parts else None
    problems.add(path, line, f"[default]: gpu {quote(chosen)} is not the workshop's GPU "
                             f"{quote(workshop)}: the figures and readout open on the "
                             f"{c.presets.gpus[chosen].name} while the prose describes the "
                             f"{c.presets.gpu.name}; set [workshop] gpu in presets.toml instead")
