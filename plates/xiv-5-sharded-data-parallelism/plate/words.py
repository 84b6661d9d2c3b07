"""Plate XIV.5's words for facts computed here: page_words's readout, descriptions and tables (the functions the page
runs compiled), made by the engine's texts runner (generator/plate/texts.py) on the facts as the page has them."""
from __future__ import annotations

import importlib

from generator.api import words as engine_words

from .facts import Facts
from .page_words import FIGURES  # noqa: F401 (the figures the words know: hooks.FIGURES)


def _package():
    """This plate module (its package), for the engine's texts runner."""
    return importlib.import_module(__package__)


def words_of(facts: list[Facts], plates: dict | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout: [paragraphs], describe: {figure: text}, tables: {figure: rows}}), by the
    engine's texts runner (generator/plate/texts.py; kept in store, a cache.Cache, when given)."""
    return engine_words(_package(), facts, plates, store)


def words(facts: list[Facts], plates: dict | None = None) -> list[dict]:
    """Each facts' words."""
    return words_of(facts, plates)


def of(f: Facts, plates: dict | None = None) -> dict:
    """One facts' words."""
    return words_of([f], plates)[0]
