"""Prose that stays true when the content changes: the real plate.md built against other defaults and GPUs,
every comparison it states checked against the numbers it prints next to it."""
from __future__ import annotations

import dataclasses
import html
import re
import shutil

import pytest

from generator.source import content, prose
from xiv4 import Selection, facts
Atlas = facts.Atlas

from conftest import CONTENT, copy_plate

# (front-matter default, GPU preset edits): what an author might change, issue 8's examples first.
ALTERNATIVES = {
    "as-shipped": ({}, {}),
    "70b-1M": ({"model": "llama3-70b", "batch": "1M"}, {}),
    "h200-memory": ({}, {"name": "H200 SXM", "memory_gb": "141"}),
    "nvlink-16M-no-crossing": ({"network": "nvlink", "batch": "16M"}, {}),
    "405b-16M": ({"model": "llama3-405b", "batch": "16M"}, {}),
    "b200-like": ({}, {"name": "B200", "peak_tflops": "2250", "memory_gb": "180", "interconnect_gbytes_per_s": "900"}),
    "nvlink-1M-small-gpu-memory": ({"network": "nvlink", "batch": "1M"}, {"memory_gb": "40"}),
}


def edited_content(tmp_path, default: dict, gpu: dict):
    """A copy of content/ with the plate's default selection and the workshop GPU's numbers changed."""
    held = content.load(CONTENT).presets
    tables = {"model": held.models, "batch": held.batches, "network": held.networks}
    missing = [f"{key} {value!r}" for key, value in default.items() if value not in tables[key]]
    if missing:  # the alternatives name the spec's presets; another content may not hold them
        pytest.skip(f"{CONTENT} does not hold {', '.join(missing)}")
    root = tmp_path / "content"
    copy_plate(CONTENT, root)
    plate = root / "plate.md"
    text = plate.read_text(encoding="utf-8")
    for key, value in default.items():
        text, count = re.subn(rf'(?m)^{key} = "[^"]*"$', f'{key} = "{value}"', text, count=1)
        assert count == 1, f"no default {key} in plate.md's front matter"
    plate.write_text(text, encoding="utf-8")
    gpu_id = content.load(CONTENT).presets.workshop.gpu
    # where the GPU is written: the series catalogue beside the copy, or the plate's own presets.toml
    presets = next(p for p in (root / "presets.toml", root.parent / "series.toml")
                   if p.is_file() and f"[gpus.{gpu_id}]" in p.read_text(encoding="utf-8"))
    text = presets.read_text(encoding="utf-8")
    table = re.search(rf"(?ms)^\[gpus\.{re.escape(gpu_id)}\]\n.*?(?=^\[|\Z)", text)
    assert table, f"no [gpus.{gpu_id}] in {presets.name}"
    block = table.group(0)
    for key, value in gpu.items():
        if key == "name":  # a name of its own: the other [gpus.*] tables are offered beside it
            value = f"{value} (edited)"
        block, count = re.subn(rf"(?m)^{key} = [^#\n]*", f"{key} = {value if key != 'name' else repr(value)} ",
                               block, count=1)
        assert count == 1, f"no {key} in [gpus.{gpu_id}]"
    presets.write_text(text[:table.start()] + block + text[table.end():], encoding="utf-8")
    return content.load(root)


def workshop(c):
    """The selection the prose argues from: [default]'s model, batch and network under the workshop's GPU and
    options, on its one-GPU replicas (slots.Names.workshop)."""
    d = c.plate.default
    return Selection(d.model, d.batch, d.network, gpu=c.presets.workshop.gpu, layout="")


def prose_text(c) -> str:
    """The built prose of both parts as plain text, whitespace folded."""
    parts = prose.prose_html(c, Atlas(c.presets))
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", " ".join(parts))))


def number(text: str) -> float:
    return float(text.replace(",", ""))


def relation(a: float, b: float, less: str, same: str, more: str) -> str:
    return same if a == b else less if a < b else more


@pytest.fixture(scope="module", params=list(ALTERNATIVES))
def built(request, tmp_path_factory):
    default, gpu = ALTERNATIVES[request.param]
    c = edited_content(tmp_path_factory.mktemp(request.param), default, gpu)
    return c, prose_text(c)


def test_the_alternatives_really_differ(tmp_path):
    """Each edit reaches the facts (else the tests below would check the shipped plate seven times)."""
    seen = set()
    for name, (default, gpu) in ALTERNATIVES.items():
        c = edited_content(tmp_path / name, default, gpu)
        seen.add((c.plate.default, c.presets.gpu))
    assert len(seen) == len(ALTERNATIVES)


UNITS = {"TB": 1e12, "GB": 1e9, "MB": 1e6, "kB": 1e3, "B": 1}


def size(text: str) -> float:
    """'128 GB' → 1.28e11 (the unit as notation.data_size writes it)."""
    value, unit = text.split()
    return number(value) * UNITS[unit]


def test_crossing_words_hold(built):
    c, text = built
    meet = re.search(r"The lines meet at n\* = 1 \+ 3·T·B/\(b·P·u\) for a batch of T tokens and a GPU computing "
                     r"P·u FLOP/s: ≈ ([\d,]+) for (.+?) with an? (.+?) batch on (.+?)(, beyond the ([\d,]+) replicas drawn)?\. ", text)
    assert meet, text
    f = Atlas(c.presets).facts(workshop(c))
    assert number(meet.group(1)) == round(f.meeting_replicas)
    assert meet.group(2, 3, 4) == (f.model.name, prose.modifier(f.batch.name), f.network.short)
    assert (meet.group(5) is not None) == (f.crossing_replicas is None)
    if meet.group(6):
        assert number(meet.group(6)) == c.presets.workshop.max_replicas < f.meeting_replicas
    # the smaller batch the prose names moves the crossing in: its n* and first power of two past it
    small = re.search(r"the model's size cancels out\. An? (.+?) batch brings it in to ≈ ([\d,]+)(, first passed at "
                      r"([\d,]+))?\. ", text.replace("’", "'"))
    batch = min(c.presets.batches, key=lambda i: c.presets.batches[i].tokens)
    assert (small is None) == (batch == c.plate.default.batch), text
    if small is None:
        return
    assert small.group(1) == prose.modifier(c.presets.batches[batch].name)
    g = Atlas(c.presets).facts(dataclasses.replace(workshop(c), batch=batch))
    assert number(small.group(2)) == round(g.meeting_replicas) < round(f.meeting_replicas)
    assert (number(small.group(4)) if small.group(3) else None) == g.crossing_replicas


def test_hidden_all_reduce_rule_words_hold(built):
    c, text = built
    rule = re.search(r"at least b·P·u/\(3·B\) tokens per step, about ([\d,]+) at ([\d,.]+) GB/s and about ([\d,]+) over "
                     r".+?\. On the .+? network that is (less|more) than one ([\d,]+)-token sequence, so (.+?)\.",
                     text)
    assert rule, text
    gpu, w = c.presets.gpu, c.presets.workshop
    pu = gpu.peak_tflops * 1e12 * w.mfu
    link = number(rule.group(2)) * 1e9  # the network the prose names, at the speed it prints
    assert any(abs(n.link_bytes_per_s(gpu) - link) <= 1e-6 * link for n in c.presets.networks.values())
    tokens = pu * w.bytes_per_grad / (3 * link)  # the prose's own formula, from the presets
    threshold, seq = number(rule.group(1)), number(rule.group(5))
    assert abs(threshold - tokens) <= 0.005 * tokens  # "about": three significant figures
    assert seq == w.seq_len
    assert rule.group(4) == ("less" if tokens < seq else "more")
    assert rule.group(6).startswith("the batch runs out before") == (rule.group(4) == "less")


def test_memory_words_hold(built):
    c, text = built
    memory = re.search(r"For (.+?) that is ([\d,.]+ [kMGT]?B), which (fits in|does not fit in) the ([\d,.]+) GB of an? "
                       r"(.+?)\. Memory is quoted in GB but built in GiB: read as ([\d,.]+) GiB, it is ([\d,.]+ [kMGT]?B), "
                       r"and (the verdict stands|the states would fit)\.", text)
    assert memory, text
    name, states, fits, quoted, gpu, gib, gib_size, verdict = memory.groups()
    m = c.presets.models[c.plate.default.model]
    exact = (2 + c.presets.workshop.bytes_per_grad + 12) * m.params  # BF16 weights, gradients, Adam in FP32
    assert name == m.name and gpu == c.presets.gpu.name and number(quoted) == number(gib) == c.presets.gpu.memory_gb
    assert abs(size(states) - exact) <= 0.005 * exact
    q = c.presets.gpu.memory_gb * 1e9
    assert (fits == "fits in") == (exact <= q)
    assert abs(size(gib_size) - q * 2**30 / 1e9) <= 0.005 * q
    assert (verdict == "the verdict stands") == ((exact <= q) == (exact <= q * 2**30 / 1e9))


def _smallest(kept: float, shared: float, memory: float) -> int:
    """The smallest n with (kept + shared/n) bytes per parameter × N within memory (kept, shared per parameter)."""
    n = 1
    while kept + shared / n > memory:
        n += 1
    return n


def test_sharding_words_hold(built):
    c, text = built
    m = c.presets.models[c.plate.default.model]
    memory = c.presets.gpu.memory_gb * 1e9 / m.params
    states = 2 + c.presets.workshop.bytes_per_grad + 12  # BF16 weights, gradients, Adam in FP32
    zero1 = re.search(r"Counted in 10⁹ B, sharding the optimiser states alone \(ZeRO-1\) fits them from ([\d,]+) "
                      r"replicas", text)
    fits = states <= memory  # on one GPU unsharded: the prose then says what sharding sends, not where it fits
    kept = 2 + c.presets.workshop.bytes_per_grad  # what ZeRO-1 keeps whole: weights and gradients
    if not fits and kept < memory:
        assert zero1 and number(zero1.group(1)) == _smallest(kept, states - kept, memory)
    elif fits:
        assert not zero1, text
    zero3 = re.search(r"\(ZeRO-3\)(?: fits them from ([\d,]+) but)? gathers the BF16 weights for both passes, "
                      r"([\d.]+) times the bytes with BF16 gradients", text)
    assert zero3 and (zero3.group(1) is None) == fits, text
    if not fits:
        assert number(zero3.group(1)) == _smallest(0, states, memory)
    b = c.presets.workshop.bytes_per_grad
    assert number(zero3.group(2)) == round((2 + 2 + b) / (2 * b), 1)


def test_the_domain_words_name_the_gpu_s_own_link(built):
    c, text = built
    gpu = c.presets.gpu
    assert ("NVLink" in text) == (gpu.interconnect == "NVLink")  # the prose names no other link NVLink
    own = [n for n in c.presets.networks.values() if n.nvlink]
    assert all(f"over {n.short}" in text for n in own)


def test_layout_words_hold(built):
    _, text = built
    layout = re.search(r"each replica spanned ([\d,]+) GPUs \(tensor parallel (\d+) × pipeline parallel (\d+)\): in "
                       r"its runs on [\d,]+-token sequences ([\d,]+) GPUs held ([\d,]+) replicas and ([\d,]+) held ([\d,]+)\.", text)
    assert layout, text
    span, tp, pp, g1, r1, g2, r2 = map(number, layout.groups())
    assert span == tp * pp and r1 == g1 / span and r2 == g2 / span


def test_real_cluster_words_hold(built):
    c, text = built
    f = Atlas(c.presets).facts(workshop(c))
    if f.network.nvlink:  # the paragraph prices a NIC per GPU: left out when the default network is NVLink
        assert "line is a real cluster" not in text
        return
    words = re.search(r"at ([\d,]+) GPUs the ring's bandwidth term is (\S+ \S+), not (\S+ \S+)\. Latency is dearer: NCCL's "
                      r"cost model charges a ring call (\S+ \S+) and a tree call (\S+ \S+), so NCCL sends (.+?) calls by (tree|ring)\. A "
                      r"step takes (\S+ \S+), a scaling efficiency of ([\d.]+)%", text.replace("’", "'"))
    assert words, text
    n, ring_bw, flat, ring_lat, tree_lat, calls, algorithm, step, eff = words.groups()
    assert number(n) == f.cluster_replicas
    for shown, value in ((ring_bw, f.cluster_ring_bandwidth_s), (flat, f.at(f.cluster_replicas).allreduce_s),
                         (ring_lat, f.ring_call_latency_us / 1e6), (tree_lat, f.tree_latency_us / 1e6),
                         (step, f.cluster_step_s)):
        seconds = number(shown.split()[0]) * {"s": 1, "ms": 1e-3, "µs": 1e-6}[shown.split()[1]]
        assert abs(seconds - value) <= 0.005 * value, (shown, value)
    assert abs(number(eff) / 100 - f.cluster_efficiency) <= 0.0005
    count, trees = f.cluster_bucket_count, f.cluster_tree_calls
    expected = (f"all {count:,}", "tree") if trees == count else (f"all {count:,}", "ring") if trees == 0 else \
        (f"{trees:,} of {count:,}", "tree")
    assert (calls, algorithm) == expected
