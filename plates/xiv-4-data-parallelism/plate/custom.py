"""The reader's own run: free inputs checked exactly as the content schema checks the same fields, then evaluated
like a preset. The checks are data (schema.NUMBER_RULES, the slider's range, the layer shape's rules, the messages),
which page_own reads, for the page (compiled: PAGE's own) and for the build alike."""
from __future__ import annotations

from dataclasses import dataclass, replace

from . import model, page_own
from .presets import (BATCH_SCHEMA, MODEL_SCHEMA, NETWORK_SCHEMA, WORKSHOP_SCHEMA, Batch, Model, Network,
                      Selection)
from .facts import Atlas, Facts, facts_data, gpus_of, inputs, layout_of
from generator.api import given, num, percent, plain, rules

CUSTOM = "custom"  # the id of the reader's own model, batch or network, in the controls and the URL
# Each free input: (the control it belongs to, its label, the schema kind of the same content field).
FIELDS = {
    "params": ("model", "Parameters", MODEL_SCHEMA["params"]),
    "layers": ("model", "Layers", MODEL_SCHEMA["layers"]),
    "d_model": ("model", "d_model", MODEL_SCHEMA["d_model"]),
    "ffn": ("model", "FFN width", MODEL_SCHEMA["ffn"]),
    "vocab": ("model", "Vocabulary", MODEL_SCHEMA["vocab"]),
    "tokens": ("batch", "Tokens per step", BATCH_SCHEMA["tokens"]),
    "gbps": ("network", "GB/s per GPU, per direction", NETWORK_SCHEMA["link_gbytes_per_s"]),
    "mfu": ("mfu", "MFU", WORKSHOP_SCHEMA["mfu"]),
}
SHAPE = ("layers", "d_model", "ffn", "vocab")  # optional, all or none (the timeline draws layers when given)
MFU_RANGE = (0.2, 0.7)  # the slider's ends, as fractions


def parse(text: str):
    """What a typed value is, as TOML would read it: a whole number (commas and underscores between digits
    allowed), a float (decimal point, exponent, inf, nan), or else the text itself (page_own.parse)."""
    return page_own.parse(text)["value"]


def shown(text: str) -> str:
    """The reader's text as a message quotes it."""
    return page_own.quoted(text)


GOT = "{why}, got {text}"  # a message beside a free input: why, then what the reader typed


def field_rules(field: str) -> list[tuple[tuple, str]]:
    """A free input's rules: its content field's, then (the MFU) the slider's range."""
    extra = [((("at_least", MFU_RANGE[0]), ("at_most", MFU_RANGE[1])),
              f"must be from {percent(MFU_RANGE[0])} to {percent(MFU_RANGE[1])}, the slider's range")]
    return rules(FIELDS[field][2]) + (extra if field == "mfu" else [])


def check(field: str, text: str) -> tuple[object, str | None]:
    """(the value, None) when text is a good value of field, else (None, the message shown beside it)."""
    value, message = page_own.check(field, text, {"fields": {field: {"rules": field_rules(field)}}, "got": GOT})
    return value, message


# The layer shape's rules: all of SHAPE or none; and params above factor × the product of `over` (the embedding and
# output head). "{least}" is that product, formatted as the page formats a count.
SHAPE_RULES = {
    "partial": "give all four of layers, d_model, FFN width and vocabulary, or none",
    "room": {"field": "params", "factor": 2, "over": ["vocab", "d_model"],
             "say": "must exceed the embedding and output head, 2 · vocab · d_model = {least}"},
}


def shape_problem(values: dict) -> tuple[str, str] | None:
    """(field, message) when the optional layer shape is half given or leaves no room beside the embeddings."""
    problem = page_own.shape_problem(values, list(SHAPE), SHAPE_RULES)
    return None if problem is None else tuple(problem)


def defaults(atlas: Atlas, default: Selection) -> dict[str, str]:
    """What the free inputs hold before the reader types: the default selection's own values, read off the presets
    (its link as facts.Facts.link_gbytes_per_s gives it)."""
    p = atlas.presets
    sel = atlas.complete(default)
    m = p.models[sel.model]
    link = p.networks[sel.network].link_bytes_per_s(gpus_of(p)[sel.gpu]) / model.GB
    return {"params": str(m.params), "layers": str(m.layers), "d_model": str(m.d_model), "ffn": str(m.ffn),
            "vocab": str(m.vocab), "tokens": str(p.batches[sel.batch].tokens), "gbps": given(link).replace(",", ""),
            "mfu": str(p.workshop.mfu)}


RESULTS = ("compute_s", "allreduce_s", "step_s", "efficiency", "tokens_per_replica", "states_bytes",
           "continuous_crossing")  # what build.check_grid requires finite of the presets
LARGEST = 1e21  # numbers the page writes digit by digit (JavaScript's toFixed turns exponential from here)
TOO_FAR = ("together with the other values, too large or too small for the model: some times or efficiencies "
           "come out infinite, undefined or beyond 10²¹")


def model_problem(f: Facts) -> str | None:
    """Values that pass each field's check can still overflow the model, as presets can (build.check_grid): the
    facts as the page holds them, read as the page reads them (page_own.model_problem)."""
    return page_own.model_problem(plain(facts_data(f)), {"results": list(RESULTS), "largest": LARGEST,
                                                         "too_far": TOO_FAR})


def page_data(atlas: Atlas, default: Selection) -> dict:
    """What the page needs to offer and check the free inputs: each field's rules and messages, the defaults."""
    return {
        "id": CUSTOM, "mfu_range": list(MFU_RANGE),
        "fields": {k: {"control": c, "label": label, "rules": [[list(tests), say] for tests, say in field_rules(k)]}
                   for k, (c, label, _) in FIELDS.items()},
        "shape": list(SHAPE), "shape_rules": SHAPE_RULES, "got": GOT, "defaults": defaults(atlas, default),
        "results": list(RESULTS),
        "largest": LARGEST, "too_far": TOO_FAR,
    }


def with_custom(controls: list) -> list:
    """The controls with a "Custom…" choice for each control that has free inputs."""
    owned = {c for c, _, _ in FIELDS.values()}
    return [(key, label, {**options, CUSTOM: "Custom…"} if key in owned else options)
            for key, label, options in controls]


@dataclass(frozen=True)
class OwnFacts(Facts):
    """Facts of a run with free inputs: the caption names the MFU when it is not the workshop's."""

    workshop_mfu: float = 0.0

    @property
    def caption(self) -> str:
        text = super().caption
        return text if self.workshop.mfu == self.workshop_mfu else f"{text} · MFU {percent(self.workshop.mfu)}"


def names(values: dict) -> dict[str, str]:
    """How captions name the reader's own model, batch and network."""
    out = {}
    sig_ = lambda v: given(v) if abs(v) < LARGEST else repr(v)  # noqa: E731 (model_problem refuses such runs)
    if "params" in values:
        out["model"] = f"custom {given(values['params'] / 1e9)}B model"
    if "tokens" in values:
        out["batch"] = f"{num(values['tokens'])} tokens"
    if "gbps" in values:
        out["network"] = f"{sig_(values['gbps'])} GB/s"
    return out


def own_facts(atlas: Atlas, sel: Selection, values: dict) -> Facts:
    """Facts for a selection whose model, batch or network may be the reader's own (id CUSTOM) and whose MFU
    may differ from the workshop's: the same model functions, evaluated for this one run."""
    p = atlas.presets
    sel = atlas.complete(sel)
    name = names(values)
    models, batches, networks = dict(p.models), dict(p.batches), dict(p.networks)
    if sel.model == CUSTOM:
        models[CUSTOM] = Model(CUSTOM, name["model"], values["params"],
                               *(values.get(k) or 0 for k in SHAPE))
    if sel.batch == CUSTOM:
        batches[CUSTOM] = Batch(CUSTOM, name["batch"], values["tokens"])
    if sel.network == CUSTOM:
        networks[CUSTOM] = Network(CUSTOM, name["network"], name["network"], values["gbps"])
    w = replace(p.workshop, mfu=values.get("mfu", p.workshop.mfu))
    q = replace(p, models=models, batches=batches, networks=networks, workshop=w)
    ins = inputs(q, sel)
    layout = layout_of(q, sel)
    run = model.evaluate(ins, model.replica_counts(w.max_replicas, layout.gpus))
    return OwnFacts(model=models[sel.model], batch=batches[sel.batch], network=networks[sel.network],
                    gpu=gpus_of(q)[sel.gpu], grid=run, index=(), selection=sel, workshop=w, inputs=ins,
                    layout=layout, workshop_mfu=p.workshop.mfu)
