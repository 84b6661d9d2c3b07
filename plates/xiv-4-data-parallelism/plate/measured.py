"""Published measurements beside the model (measured.toml): the file's checks, each setup priced by the model's own
functions at line rate and at the real cluster's achieved rates, and Table 1 and its error sentence made of them."""
from __future__ import annotations

import re
import tomllib
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path

from generator.api import Problems, Range, fields, num, percent, quote, sig

from . import model
from .facts import Atlas, inputs
from .presets import Selection, run_selection

FILE = "measured.toml"
LARGE_BYTES = 2**33  # an 8 GiB all-reduce: nccl-tests' largest sizes, where bandwidth alone counts
COLUMNS = ["Measurement", "Measured", "Model, line rate", "Line ÷ measured", "Model, achieved", "Achieved ÷ measured",
           "Source"]
ALGORITHMS = ("ring", "nvls", "default")  # what NCCL ran: the model's ring, in-switch reduction, NCCL's own pick
BASES = ("run", "expectation")  # a measurement, or a maintainer's figure of what one should see
CALIBRATES = {"nvlink": "NVLINK_MEASURED_GBPS", "nic": "NIC_MEASURED_GBPS"}  # the factor a figure sets
KINDS = ("busbw", "per_nic")
GBPS = Range("positive", 0.1, 100_000, " GB/s")  # 0.37 (TB/s) or 370,000 (MB/s) is a unit slip
COLLECTIVE = {"setup": "text", "algorithm": "text", "basis": "text", "calibrates": "text", "gpu": "text",
              "network": "text", "gpus": Range("count", 1, 1_000_000), "what": "text", "low": GBPS, "high": GBPS,
              "thread": "url", "source": "text"}
COLLECTIVE_OPTIONAL = {"calibrates": "", "thread": "", "source": ""}
RUN = {"setup": "text", "selection": "text", "replicas": Range("count", 1, 1_000_000),
       "tflops": Range("positive", 1, 100_000, " TFLOP/s"), "thread": "url", "source": "text"}
RUN_OPTIONAL = {"thread": "", "source": ""}
THREAD = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull)/[0-9]+")


@dataclass(frozen=True)
class Row:
    """One measurement beside the model's values for the same setup."""

    kind: str  # "busbw", "per_nic" (GB/s) or "scaling" (a ratio of two runs' throughput per GPU)
    setup: str
    low: float  # the measured value, or the two ends of the range the source gives
    high: float
    line: float | None  # the model at the links' line rates (None where it has no such value)
    achieved: float  # the model at the real cluster's achieved rates (platelib.cluster)
    source: str
    algorithm: str = ""  # a collective's: "ring", "nvls" or "default" (NCCL's pick)
    thread: str = ""  # a GitHub thread's address, where the source is one entry for several
    basis: str = "run"  # "run" or "expectation"
    calibrates: str = ""  # "nvlink" or "nic": the factor this figure sets, so no test of the model
    nodes: int = 1  # the 8-GPU nodes the collective spans
    href: str = ""  # the page's link to the selection the row's setup is, where it is one

    @property
    def measured(self) -> float:
        """The measured value the ratios divide by: the middle of a range."""
        return (self.low + self.high) / 2

    @property
    def ratio(self) -> float:
        """The model at achieved rates over the measurement."""
        return self.achieved / self.measured

    @property
    def line_ratio(self) -> float | None:
        """The model at line rate over the measurement."""
        return None if self.line is None else self.line / self.measured

    @property
    def test(self) -> bool:
        """Whether the row tests the model: a run it did not calibrate on."""
        return self.basis == "run" and not self.calibrates


def load(root: Path) -> dict:
    """measured.toml of the plate folder, as TOML gives it (nothing where there is none)."""
    if not (root / FILE).exists():
        return {}
    return tomllib.loads((root / FILE).read_text(encoding="utf-8"))


# --- the file's checks -------------------------------------------------------------------------------------------

def _blocks(text: str, section: str) -> list[tuple[int, str]]:
    """Each [[section]] entry of TOML text: (the line before its header, its text up to the next header)."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if re.match(r"^\s*\[", line)]
    out = []
    for k, i in enumerate(heads):
        if re.match(rf"^\s*\[\[\s*{re.escape(section)}\s*\]\]\s*(#.*)?$", lines[i]):
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            out.append((i, "\n".join(lines[i:end])))
    return out


def _key_line(offset: int, block: str, key: str) -> int:
    """The file's line of key in one entry's text (its header's when the key is not written there)."""
    for n, line in enumerate(block.splitlines()):
        if re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return offset + n + 1
    return offset + 1


def check(problems: Problems, root: Path, presets=None, sources=None, ids=None) -> None:
    """measured.toml, each mistake at its line: TOML syntax, unknown tables and keys, each value's kind, range and
    unit (GB/s, TFLOP/s), NaN and text where a number belongs, low ≤ high, and the ids it names (a GPU, network or
    selection of presets.toml, a source of sources.toml)."""
    path = root / FILE
    if not path.exists():
        return
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        problems.add(path, None, f"cannot be read: {error}")
        return
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"at line (\d+)", str(error))
        problems.add(path, int(found.group(1)) if found else None,
                     f"TOML syntax error: {re.sub(r' [(]at line .*[)]$', '', str(error))}")
        return
    ids = dict(ids or {})
    try:  # the selections presets.toml declares, each with or without mistakes of its own
        declared = tomllib.loads((root / "presets.toml").read_text(encoding="utf-8-sig")).get("selections", {})
        ids["selections"] = list(declared) if isinstance(declared, dict) else []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        ids["selections"] = []
    for name in data:
        if name not in ("collectives", "runs"):
            line = next((n + 1 for n, s in enumerate(text.splitlines())
                         if re.match(rf"^\s*(\[\[?\s*{re.escape(name)}\s*\]\]?|{re.escape(name)}\s*=)", s)), None)
            problems.add(path, line, f"unknown table {quote(name)} (known: [[collectives]], [[runs]])")
    for section, schema_, optional in (("collectives", COLLECTIVE, COLLECTIVE_OPTIONAL), ("runs", RUN, RUN_OPTIONAL)):
        entries = data.get(section, [])
        blocks = _blocks(text, section)
        if not isinstance(entries, list) or len(blocks) != len(entries):
            problems.add(path, blocks[0][0] + 1 if blocks else None,
                         f"{section} must be written as [[{section}]] tables, one per measurement")
            continue
        for (offset, block), entry in zip(blocks, entries):
            label = f"[[{section}]] {quote(entry.get('setup', '?')) if isinstance(entry, dict) else ''}".rstrip()
            values = fields(problems, path, block, (section,), entry, schema_, optional, line_offset=offset,
                            label=label)
            if values is not None:
                _check_entry(problems, path, offset, block, section, values, label, presets, sources, ids)


def _check_entry(problems, path, offset, block, section, values, label, presets, sources, ids) -> None:
    """One entry's values against each other and the ids they name (an id presets.toml declares, even with a
    mistake of its own there, is no second mistake here)."""
    def add(key, message):
        problems.add(path, _key_line(offset, block, key), f"{label}: {message}")

    def one_of(key, allowed):
        if values[key] not in allowed:
            add(key, f"{key} {quote(values[key])} is not one of {', '.join(quote(a) for a in allowed)}")

    if section == "collectives":
        one_of("algorithm", ALGORITHMS)
        one_of("basis", BASES)
        one_of("what", KINDS)
        if values["calibrates"]:
            one_of("calibrates", tuple(CALIBRATES))
        if values["low"] > values["high"]:
            add("high", f"high {as_given(values['high'])} is below low {as_given(values['low'])}: a range is written "
                        "low first")
        if presets is not None:
            for key, table in (("gpu", {**presets.gpus, presets.workshop.gpu: presets.gpu, **dict.fromkeys(
                                   ids.get("gpus", []))}), ("network", {**presets.networks,
                                                                        **dict.fromkeys(ids.get("networks", []))})):
                if values[key] not in table:
                    add(key, f"{key} {quote(values[key])} is not a preset of presets.toml "
                             f"(known: {', '.join(table)})")
    elif presets is not None and values["selection"] not in {*presets.selections, *ids.get("selections", [])}:
        add("selection", f"selection {quote(values['selection'])} is not a [selections.<id>] of presets.toml "
                         f"(known: {', '.join(presets.selections) or 'none'})")
    if bool(values["thread"]) == bool(values["source"]):
        add("setup", "give either thread (a GitHub thread's address) or source (an id of sources.toml)")
    elif values["thread"] and not THREAD.fullmatch(values["thread"]):
        add("thread", f"thread {quote(values['thread'])} is not a GitHub issue or pull request's address "
                      "(https://github.com/<owner>/<repository>/issues/<number>)")
    elif values["source"] and sources is not None and values["source"] not in sources:
        add("source", f"source {quote(values['source'])} is not an id of sources.toml")


# --- the rows ----------------------------------------------------------------------------------------------------

def busbw(link_bytes_per_s: float, nvlink_bytes_per_s: float, gpus: int) -> float:
    """nccl-tests' bus bandwidth the model gives a large ring all-reduce over gpus ranks (bytes/s): the buffer over
    the real cluster's ring bandwidth term (collectives.nccl_allreduce), × 2(n−1)/n."""
    costs = model.nccl_allreduce(LARGE_BYTES, link_bytes_per_s, nvlink_bytes_per_s, gpus)
    return LARGE_BYTES / costs[1] * model.RING_FACTOR * (gpus - 1) / gpus


def collective_row(atlas: Atlas, entry: dict, default: Selection) -> Row:
    """A collective's measurement and the model's bus bandwidth (or per NIC) for its GPU and network, in GB/s, at
    the links' line rates and at the real cluster's achieved rates."""
    x = inputs(atlas.presets, replace(default, gpu=entry["gpu"], network=entry["network"]))
    gpus = int(entry["gpus"])
    link, nvlink = float(x.link_bytes_per_s), float(x.nvlink_bytes_per_s)
    per = min(gpus, model.NODE_GPUS) if entry["what"] == "per_nic" else 1  # each GPU's own NIC carries its channel
    line = busbw(link, nvlink, gpus) / per / model.GB
    achieved = busbw(link * model.NIC_ACHIEVED, nvlink * model.NVLINK_ACHIEVED, gpus) / per / model.GB
    return Row(entry["what"], entry["setup"], float(entry["low"]), float(entry["high"]), line, achieved,
               entry.get("source", ""), entry["algorithm"], entry.get("thread", ""), entry.get("basis", "run"),
               entry.get("calibrates", ""), model.nodes(gpus))


def run_efficiency(atlas: Atlas, entry: dict) -> float:
    """The real cluster's scaling efficiency for a training run's selection at its replicas."""
    f = atlas.facts(run_selection(atlas.presets, entry["selection"]))
    return float(f.cluster_at(int(entry["replicas"]))["efficiency"])


def rows(atlas: Atlas, root: Path, default: Selection) -> list[Row]:
    """Every collective of measured.toml beside the model, then one row for the runs: the last run's throughput per
    GPU over the first's, beside the model's scaling efficiency there over the first's (all the model predicts of
    them: it prices the gradient all-reduce, not the rest of a run's MFU)."""
    data = load(root)
    out = [collective_row(atlas, e, default) for e in data.get("collectives", [])]
    runs = data.get("runs", [])
    if len(runs) >= 2:
        first, last = runs[0], runs[-1]
        href = "#" + urllib.parse.urlencode(atlas.presets.selections[last["selection"]].choices)
        measured = float(last["tflops"]) / float(first["tflops"])
        out.append(Row("scaling", f"{first['setup']} → {last['setup']}, TFLOP/s per GPU", measured, measured,
                       None, run_efficiency(atlas, last) / run_efficiency(atlas, first), last.get("source", ""),
                       thread=last.get("thread", ""), href=href))
    return out


def _value(kind: str, value: float) -> str:
    """A model value: a ratio to 3 figures; GB/s whole from 100, else to 3 figures."""
    if kind == "scaling":
        return sig(value, 3)
    return (num(value) if value >= 100 else sig(value, 3)) + " GB/s"


def as_given(value: float) -> str:
    """A measurement to the decimals its source wrote: 370 → '370', 368.76 → '368.76'."""
    written = repr(float(value)).split("e")[0]
    decimals = 0 if float(value).is_integer() or "." not in written else len(written.split(".")[1])
    return num(value, decimals)


def _measured(row: Row) -> str:
    """The measured cell: a value or a low–high range as the source gives it, an expectation marked."""
    if row.kind == "scaling":
        return sig(row.low, 3)
    shown = as_given(row.low) if row.low == row.high else f"{as_given(row.low)}–{as_given(row.high)}"
    return shown + " GB/s"


def _notes(row: Row) -> str:
    """What the measurement cell adds: an expectation, not a run; the figure a factor is set from."""
    notes = [n for n, on in (("expected, not a run", row.basis == "expectation"),
                             ("sets the model's factor", bool(row.calibrates))) if on]
    return f" ({'; '.join(notes)})" if notes else ""


def thread_label(address: str) -> str:
    """A GitHub thread's short name, by its repository: "nccl-tests #212"."""
    parts = address.rstrip("/").split("/")
    return f"{parts[-3]} #{parts[-1]}"


def table(rows_: list[Row], labels: dict[str, str]) -> list[list]:
    """The table's cells, a row per measurement: what and where (an expectation, and a figure that sets a factor,
    said there), measured, the model at line rate and its ratio, at achieved rates and its ratio, source."""
    what = {"busbw": "busbw", "per_nic": "busbw per NIC", "scaling": "scaling"}

    def head(r: Row):
        text = f"{what[r.kind]}: {r.setup}{_notes(r)}"
        return [text, r.href] if r.href else text

    return [[head(r), _measured(r),
             "—" if r.line is None else _value(r.kind, r.line), "—" if r.line is None else sig(r.line_ratio, 3),
             _value(r.kind, r.achieved), sig(r.ratio, 3),
             [thread_label(r.thread), r.thread] if r.thread else labels.get(r.source, r.source)] for r in rows_]


def _off(ratio: float) -> str:
    """'6.5% optimistic' for a model above the measurement, '2.1% pessimistic' below it."""
    return f"{percent(abs(ratio - 1))} {'optimistic' if ratio >= 1 else 'pessimistic'}"


def _span(ratios: list[float]) -> str:
    """The ratios' spread as the error sentence says it: '0.336% to 6.47% optimistic', 'from 2.1% pessimistic to
    6.47% optimistic'."""
    low, high = min(ratios), max(ratios)
    if sig(low, 3) == sig(high, 3):
        return _off(low)
    if (low >= 1) == (high >= 1):
        near, far = (low, high) if low >= 1 else (high, low)
        return f"{percent(abs(near - 1))} to {_off(far)}"
    return f"from {_off(low)} to {_off(high)}"


def error_sentence(rows_: list[Row]) -> str:
    """The model's error in one sentence, its numbers read off the rows: the runs of what it prices (a ring, or NCCL's
    pick on more than two nodes) at achieved and at line rates; in-switch reduction (NVLS), which it leaves out; a
    two-node run of NCCL's pick; and the runs' scaling."""
    priced = [r for r in rows_ if r.test and r.kind != "scaling" and (r.algorithm == "ring" or (
        r.algorithm == "default" and r.nodes > 2))]
    nvls = [r for r in rows_ if r.test and r.kind != "scaling" and r.nodes == 1 and r.algorithm in ("nvls", "default")]
    pair = [r for r in rows_ if r.test and r.algorithm == "default" and r.nodes == 2]
    scaling = [r for r in rows_ if r.kind == "scaling"][:1]
    parts = []
    if priced:
        parts.append(f"against the runs it can price (a ring, or NCCL's pick on more than two nodes), the model at "
                     f"achieved rates is "
                     f"{_span([r.ratio for r in priced])} (at line rate, {_span([r.line_ratio for r in priced])})")
    if nvls:
        parts.append(f"in-switch reduction (NVLS), which it leaves out, beats its achieved ring in one node by up to "
                     f"{percent(max(1 / r.ratio - 1 for r in nvls))}")
    if pair:
        parts.append(f"on two nodes it is {_off(min(r.ratio for r in pair))} against NCCL's own pick, which there "
                     "measures the pick rather than the network (NVIDIA advise forcing the ring)")
    if scaling:
        r = scaling[0]
        parts.append(f"doubling Llama 3's replicas cost {percent(1 - r.measured)} of each GPU's throughput, of which "
                     f"the model predicts {percent(max(0.0, 1 - r.achieved))}: the rest lies in what it leaves out, "
                     "for example the pipeline bubble")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if text else ""

