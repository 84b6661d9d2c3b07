"""Published measurements beside the model (measured.toml): each setup priced by the model's own functions, the
ratio predicted / measured, and the table the page prints of them (built once, at build time)."""
from __future__ import annotations

import tomllib
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path

from generator.api import num, percent, sig

from . import model
from .facts import Atlas, inputs
from .presets import Selection, run_selection

FILE = "measured.toml"
LARGE_BYTES = 2**33  # an 8 GiB all-reduce: nccl-tests' largest sizes, where bandwidth alone counts
OPTIMISTIC = 1.1  # a ratio past this the error sentence calls optimistic, not "within"
COLUMNS = ["Measurement", "Measured", "Model", "Model ÷ measured", "Source"]


@dataclass(frozen=True)
class Row:
    """One measurement beside the model's value for the same setup."""

    kind: str  # "busbw", "per_nic" (GB/s), "mfu" or "mfu_ratio" (fractions)
    setup: str
    low: float  # the measured value, or the two ends of the range the source gives
    high: float
    predicted: float
    source: str
    algorithm: str = ""
    thread: str = ""  # a GitHub thread's address, where the source is one entry for several  # a collective's: "ring" (what the model prices), "nvls" or "default" (NCCL's pick)
    href: str = ""  # the page's link to the selection the row's setup is, where it is one

    @property
    def measured(self) -> float:
        """The measured value the ratio divides by: the middle of a range."""
        return (self.low + self.high) / 2

    @property
    def ratio(self) -> float:
        """Predicted / measured."""
        return self.predicted / self.measured


def load(root: Path) -> dict:
    """measured.toml of the plate folder, as TOML gives it (nothing where there is none)."""
    if not (root / FILE).exists():
        return {}
    return tomllib.loads((root / FILE).read_text(encoding="utf-8"))


def busbw(link_bytes_per_s: float, nvlink_bytes_per_s: float, gpus: int) -> float:
    """nccl-tests' bus bandwidth the model gives a large ring all-reduce over gpus ranks (bytes/s): the buffer over
    the real cluster's ring bandwidth term (collectives.nccl_allreduce), × 2(n−1)/n."""
    costs = model.nccl_allreduce(LARGE_BYTES, link_bytes_per_s, nvlink_bytes_per_s, gpus)
    return LARGE_BYTES / costs[1] * model.RING_FACTOR * (gpus - 1) / gpus


def collective_row(atlas: Atlas, entry: dict, default: Selection) -> Row:
    """A collective's measurement and the model's bus bandwidth (or per NIC) for its GPU and network, in GB/s."""
    sel = replace(default, gpu=entry["gpu"], network=entry["network"])
    x = inputs(atlas.presets, sel)
    gpus = int(entry["gpus"])
    predicted = busbw(float(x.link_bytes_per_s), float(x.nvlink_bytes_per_s), gpus)
    if entry["what"] == "per_nic":
        predicted /= min(gpus, model.NODE_GPUS)  # each GPU's own NIC carries its channel
    return Row(entry["what"], entry["setup"], float(entry["low"]), float(entry["high"]), predicted / model.GB,
               entry.get("source", ""), entry["algorithm"], entry.get("thread", ""))


def run_mfu(atlas: Atlas, entry: dict) -> float:
    """The model's MFU for a training run: the workshop's MFU × the real cluster's scaling efficiency there."""
    f = atlas.facts(run_selection(atlas.presets, entry["selection"]))
    return float(f.inputs.mfu * f.cluster_at(int(entry["replicas"]))["efficiency"])


def rows(atlas: Atlas, root: Path, default: Selection) -> list[Row]:
    """Every measurement of measured.toml beside the model, then the runs' MFU ratio (the last run's over the
    first's: what doubling the replicas costs)."""
    data = load(root)
    out = [collective_row(atlas, e, default) for e in data.get("collectives", [])]
    runs = data.get("runs", [])
    made = [Row("mfu", e["setup"], float(e["mfu"]), float(e["mfu"]), run_mfu(atlas, e), e["source"],
                href="#" + urllib.parse.urlencode(atlas.presets.selections[e["selection"]].choices)) for e in runs]
    out += made
    if len(made) >= 2:
        first, last = made[0], made[-1]
        out.append(Row("mfu_ratio", f"{num(runs[-1]['replicas'])} over {num(runs[0]['replicas'])} replicas",
                       last.measured / first.measured, last.measured / first.measured,
                       last.predicted / first.predicted, last.source))
    return out


def _value(kind: str, value: float) -> str:
    if kind in ("busbw", "per_nic"):
        return num(value) + " GB/s"
    if kind == "mfu":
        return percent(value)
    return sig(value, 3)


def _measured(row: Row) -> str:
    if row.low == row.high:
        return _value(row.kind, row.low)
    return num(row.low) + "–" + _value(row.kind, row.high)


def thread_label(address: str) -> str:
    """A GitHub issue's short name: "nccl-tests #212"."""
    parts = address.rstrip("/").split("/")
    return f"{parts[-3]} #{parts[-1]}"


def table(rows_: list[Row], labels: dict[str, str]) -> list[list[str]]:
    """The table's cells, a row per measurement: what and where, measured, model, ratio, source (its thread where it
    has one)."""
    what = {"busbw": "busbw", "per_nic": "busbw per NIC", "mfu": "MFU", "mfu_ratio": "MFU ratio"}
    def head(r: Row):
        text = f"{what[r.kind]}: {r.setup}"
        return [text, r.href] if r.href else text
    return [[head(r), _measured(r),
             _value(r.kind, r.predicted), sig(r.ratio, 3),
             [thread_label(r.thread), r.thread] if r.thread else labels.get(r.source, r.source)] for r in rows_]


def error_sentence(rows_: list[Row]) -> str:
    """The model's error in one sentence, its numbers read off the rows."""
    nic = [r for r in rows_ if r.kind == "per_nic"][:1]
    ring = [r for r in rows_ if r.kind == "busbw" and r.algorithm == "ring"][:1]  # NVLink inside one node
    nvls = [r for r in rows_ if r.kind == "busbw" and r.algorithm == "nvls"][:1]
    ratio = [r for r in rows_ if r.kind == "mfu_ratio"][:1]
    picked = [1 / r.ratio - 1 for r in rows_ if r.kind == "busbw" and r.algorithm == "default"]  # NCCL's own pick
    parts = []
    if nic:
        parts.append(f"where a NIC bounds the ring the model is within {percent(abs(nic[0].ratio - 1))} of NVIDIA's "
                     "figure")
    if ring and ring[0].ratio > OPTIMISTIC:
        parts.append(f"inside one node it is {percent(ring[0].ratio - 1)} optimistic, pricing the line rate without "
                     "NCCL's protocol overhead")
    elif ring:
        parts.append(f"inside one node it is within {percent(abs(ring[0].ratio - 1))}")
    if nvls:
        parts.append(f"in-switch reduction (NVLS), which it leaves out, beats its ring by "
                     f"{percent(1 / nvls[0].ratio - 1)}")
    if picked and max(picked) > 0:
        parts.append(f"where NCCL picks the algorithm itself it beats the model's ring by up to {percent(max(picked))}")
    if ratio:
        r = ratio[0]
        parts.append(f"doubling Llama 3's replicas costs {percent(1 - r.predicted)} of MFU in the model against "
                     f"{percent(1 - r.measured)} measured, as the pipeline bubble, which grows as each replica's "
                     "share of the batch halves, lies outside it")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if text else ""
