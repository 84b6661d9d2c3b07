"""XIV.4's words: the facts its words read (page_words, which the page runs compiled), and one selection's words."""
from __future__ import annotations

from generator import texts

from . import page_words
from .facts import OPTIONS, Facts

FIGURES = ("fig-time", "fig-efficiency", "fig-timeline", "fig-memory")  # the figures the words know


def _point(p) -> dict:
    return {"replicas": p.replicas, "compute_s": p.compute_s, "allreduce_s": p.allreduce_s, "comm_s": p.comm_s,
            "step_s": p.step_s,
            "efficiency": p.efficiency, "exposed_s": p.exposed_s, "tokens_per_replica": p.tokens_per_replica,
            "sequences_per_replica": p.sequences_per_replica, "states_gb": p.states_gb, "fits": p.fits}


def facts_data(f: Facts) -> dict:
    """The facts the words read, named and shaped as the page's factsOf names them (templates/page/selection.js)."""
    x = f.inputs
    return {
        "points": [_point(p) for p in f.points], "max_replicas": f.max_replicas,
        "crossing_replicas": f.crossing_replicas, "continuous_crossing": f.continuous_crossing,
        "backward_only": f.backward_only, "sharding_stage": f.sharding_stage, "hypothetical_from": f.hypothetical_from,
        "gpu": {"name": f.gpu.name, "nvlink_domain_name": f.gpu.nvlink_domain_name,
                "interconnect": f.gpu.interconnect},
        "gpu_memory_gb": f.gpu_memory_gb, "smallest_fitting_replicas": f.smallest_fitting_replicas,
        "smallest_fitting_on_grid": f.smallest_fitting_on_grid,
        "inputs": {"params": float(x.params), "memory_bytes": float(x.memory_bytes),
                   "state_bytes": float(x.state_bytes), "sharding": int(x.sharding),
                   "bytes_per_grad": float(x.bytes_per_grad)},
        "model": {"layers": f.model.layers}, "batch": {"tokens": f.batch.tokens},
        "timeline_replicas": f.timeline_replicas, "timeline_tail_s": f.timeline_tail_s,
        "timeline_bound_s": f.timeline_bound_s, "forward_comm_s": f.forward_comm_s,
        "bucket_cap_mb": f.bucket_cap_mb,
        "buckets": [list(f.buckets[0])], "bucket_schedule": [list(f.bucket_schedule[0])],
        "cluster_buckets": [list(f.cluster_buckets[0])],
        "cluster": {"comm_s": list(f.cluster["comm_s"]), "efficiency": list(f.cluster["efficiency"])},
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
