"""XIV.4's words: the facts its words read (page_words, which the page runs compiled), and one selection's words."""
from __future__ import annotations

from generator import texts

from . import page_words
from .facts import CLUSTER_KEYS, KEYS, OPTIONS, Facts

FIGURES = ("fig-time", "fig-efficiency", "fig-timeline", "fig-memory")  # the figures the words know


def _point(p) -> dict:
    return {"replicas": p.replicas, "compute_s": p.compute_s, "allreduce_s": p.allreduce_s, "comm_s": p.comm_s,
            "step_s": p.step_s,
            "efficiency": p.efficiency, "exposed_s": p.exposed_s, "tokens_per_replica": p.tokens_per_replica,
            "sequences_per_replica": p.sequences_per_replica, "states_gb": p.states_gb,
            "states_bytes": p.states_bytes, "fits": p.fits}


def facts_data(f: Facts) -> dict:
    """The facts the words, the figures' rows and the CSV read (page_words, page_rows), as plain data."""
    x, m = f.inputs, f.model
    return {
        "selection": {k: getattr(f.selection, k) for k in KEYS + CLUSTER_KEYS}, "caption": f.caption,
        "points": [_point(p) for p in f.points], "max_replicas": f.max_replicas,
        "crossing_replicas": f.crossing_replicas, "continuous_crossing": f.continuous_crossing,
        "backward_only": f.backward_only, "sharding_stage": f.sharding_stage, "hypothetical_from": f.hypothetical_from,
        "gpu": {"name": f.gpu.name, "nvlink_domain_name": f.gpu.nvlink_domain_name,
                "interconnect": f.gpu.interconnect},
        "gpu_memory_gb": f.gpu_memory_gb, "smallest_fitting_replicas": f.smallest_fitting_replicas,
        "smallest_fitting_on_grid": f.smallest_fitting_on_grid,
        "inputs": {name: getattr(x, name) for name in x.__dataclass_fields__},
        "model": {"params": m.params, "layers": m.layers, "d_model": m.d_model, "ffn": m.ffn, "vocab": m.vocab},
        "batch": {"tokens": f.batch.tokens},
        "timeline_replicas": f.timeline_replicas, "timeline_tail_s": f.timeline_tail_s,
        "timeline_bound_s": f.timeline_bound_s, "timeline_comm_s": f.timeline_comm_s,
        "forward_comm_s": f.forward_comm_s, "bucket_cap_mb": f.bucket_cap_mb,
        "buckets": [list(v) for v in f.buckets], "bucket_schedule": [list(v) for v in f.bucket_schedule],
        "cluster_buckets": [list(v) for v in f.cluster_buckets],
        "cluster": {name: list(values) for name, values in f.cluster.items()},
    }


def context(seq_len: int, plates: dict[str, str] | None = None) -> dict:
    """W, what the words need besides the facts: the sharding options' labels, the sequence length and the plates
    the content refers to by subject (plate.md's [plates])."""
    return {"sharding": [list(o) for o in OPTIONS["sharding"].items()], "seq_len": seq_len, "plates": plates or {}}


def words_context(facts: list[Facts], plates: dict[str, str] | None = None) -> dict:
    """W for these facts, which must share a workshop (one sequence length)."""
    seq_len = {f.workshop.seq_len for f in facts}
    if len(seq_len) > 1:
        raise ValueError("facts of different workshops: their words need one sequence length")
    return context(seq_len.pop() if seq_len else 0, plates)



# --- views of one selection: the words are page_words's, which the page runs compiled --------------------------

def readout(f: Facts, plates: dict[str, str] | None = None) -> str:
    """The status for one selection, as one text: its paragraphs in order."""
    return " ".join(readout_paragraphs(f, plates))


def readout_paragraphs(f: Facts, plates: dict[str, str] | None = None) -> list[str]:
    """One short paragraph per question a reader brings (hiding, cost, memory), as the page writes them."""
    return of(f, plates)["readout"]


def describe(f: Facts, figure_id: str, plates: dict[str, str] | None = None) -> str:
    """A figure in words for one selection, as the page writes it."""
    return of(f, plates)["describe"][figure_id]


def table_rows(f: Facts, figure_id: str) -> list[list[str]]:
    """A figure's data table for one selection, as text, as the page writes it."""
    return of(f)["tables"][figure_id]


# What each figure's data table shows, column by column; words.js fills the same columns for any selection.
TABLE_COLUMNS = {
    "fig-time": ("Replicas", "Compute per step", "All-reduce per step", "Real cluster's all-reduces"),
    "fig-efficiency": ("Replicas", "Tokens per replica", "Scaling efficiency", "Real cluster's efficiency"),
    "fig-timeline": ("Phase", "Starts", "Ends"),
    "fig-memory": ("Replicas", "Model states per GPU", "Fits on the GPU"),
}


def words_of(facts: list[Facts], plates: dict[str, str] | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout, describe, tables}), by page_words on the facts as the page holds them."""
    W = texts.plain(words_context(facts, plates))
    out = []
    for f in facts:
        data = texts.plain(facts_data(f))
        out.append({"readout": page_words.readout(data, W),
                    "describe": {fid: page_words.describe(data, fid, W) for fid in FIGURES},
                    "tables": {fid: page_words.table_rows(data, fid) for fid in FIGURES}})
    return out


def of(f: Facts, plates: dict[str, str] | None = None) -> dict:
    """One facts' words."""
    return words_of([f], plates)[0]
