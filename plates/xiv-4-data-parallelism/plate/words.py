"""XIV.4's words for the build: the facts as the page holds them, W, and one selection's words (PAGE's, in Python)."""
from __future__ import annotations

import importlib

from generator.api import words

from .facts import CLUSTER_KEYS, KEYS, OPTIONS, Facts, facts_data  # noqa: F401 - facts_data: read by the plate

FIGURES = ("fig-time", "fig-efficiency", "fig-timeline", "fig-memory")  # the figures the words know


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


# What each figure's data table shows, column by column; page_words fills the same columns for any selection.
TABLE_COLUMNS = {
    "fig-time": ("Replicas", "Compute per step", "Communication per step, as drawn", "Real cluster's all-reduces"),
    "fig-efficiency": ("Replicas", "Tokens per replica", "Scaling efficiency", "Real cluster's efficiency"),
    "fig-timeline": ("Phase", "Starts", "Ends"),
    "fig-memory": ("Replicas", "Model states per GPU", "Fits on the GPU"),
}


def words_of(facts: list[Facts], plates: dict[str, str] | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout, describe, tables}): PAGE's words, in Python, on the facts as the page holds them."""
    return words(importlib.import_module(__package__), facts, plates, store)


def of(f: Facts, plates: dict[str, str] | None = None) -> dict:
    """One facts' words."""
    return words_of([f], plates)[0]
