"""XIV.4's hardware words follow the GPU preset (issue 31): the vendor-neutral keys (the nvlink_* ones still read), the
interconnect's name wherever the GPU's own link is meant, a [default] GPU the prose does not describe warned about;
and the corrected statements' numbers, each from independent formulas on the content's presets."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import content_edit
from conftest import CONTENT, copy_plate
from generator.source import content, schema
from generator.site import build
from generator.page.notation import num, percent, seconds, sig
from test_build import readout_of, text_of
from xiv4 import PLATE

load_presets = PLATE.presets.load_presets  # the catalogue under XIV.4's presets.toml, as the engine reads them

# AMD's MI300X datasheet: 1,307 TFLOP/s dense BF16, 192 GB of HBM3, 896 GB/s of Infinity Fabric both ways, 8 GPUs
# to a platform.
MI300X = {"name": "MI300X", "peak_tflops": 1307, "memory_gb": 192, "interconnect_gbytes_per_s": 448,
          "interconnect_domain": 8, "interconnect_domain_name": "an 8-GPU MI300X platform",
          "interconnect": "Infinity Fabric"}
OLD = {"interconnect_gbytes_per_s": "nvlink_gbytes_per_s", "interconnect_domain_name": "nvlink_domain_name",
       "interconnect_domain": "nvlink_domain"}  # new key -> the key earlier files wrote


def copy(tmp_path: Path) -> Path:
    """The content being built, copied into tmp_path."""
    root = tmp_path / "content"
    copy_plate(CONTENT, root)
    return root


def catalogue_of(root: Path) -> Path:
    """The file the content's GPUs and networks are written in: the series catalogue beside it, else presets.toml."""
    beside = root.parent / "series.toml"
    return beside if beside.is_file() else root / "presets.toml"


def test_the_old_nvlink_keys_read_as_the_new_ones(tmp_path):
    """The content as written (new keys, old ones, or both in different tables: an author may add a GPU under the old
    names the docs still accept), the same with every key under its new name, and with every key under its old name,
    read as the same presets."""
    root = copy(tmp_path)
    path = catalogue_of(root)
    text = path.read_text(encoding="utf-8")
    new, old = text, text
    for now, before in OLD.items():
        new = re.sub(rf"(?m)^{before}\b", now, new)
        old = re.sub(rf"(?m)^{now}\b", before, old)
    new = re.sub(r"(?m)^nvlink = true", "interconnect = true", new)
    old = re.sub(r"(?m)^interconnect = true", "nvlink = true", old)
    assert "interconnect_gbytes_per_s" in new and not re.search(r"(?m)^nvlink", new)  # every key under its new name
    assert "nvlink_gbytes_per_s" in old and not re.search(r"(?m)^interconnect_", old)  # every one under its old name
    problems = schema.Problems(root)
    read = {}
    for name, written in (("as written", text), ("new", new), ("old", old)):
        path.write_text(written, encoding="utf-8")
        read[name], _ = load_presets(problems, root)
    assert not problems.items and read["as written"] is not None, problems.items
    assert read["new"] == read["as written"] and read["old"] == read["as written"]
    assert any(n.nvlink for n in read["new"].networks.values())


def test_a_key_under_both_names_is_one_mistake_at_the_old_one(tmp_path):
    """The workshop GPU's domain given under its new name and its old one (whichever of them, if any, the content
    wrote there before is taken out first): one mistake, at the old name's line."""
    root = copy(tmp_path)
    path = catalogue_of(root)
    text = path.read_text(encoding="utf-8")
    gpu = content.load(CONTENT).presets.workshop.gpu
    head, table, rest = re.split(rf"(?m)^(\[gpus\.{re.escape(gpu)}\]\n(?:(?!\[).*\n?)*)", text, maxsplit=1)
    table = re.sub(r"(?m)^(interconnect_domain|nvlink_domain) *=.*\n?", "", table)
    table = table.replace("]\n", "]\ninterconnect_domain = 8\nnvlink_domain = 8\n", 1)
    text = head + table + rest
    path.write_text(text, encoding="utf-8")
    problems = schema.Problems(root)
    load_presets(problems, root)
    line = text.splitlines().index("nvlink_domain = 8") + 1
    assert len(problems.items) == 1, problems.items
    assert f"{path.name}, line {line}:" in problems.items[0]
    assert "nvlink_domain is the old name of interconnect_domain" in problems.items[0]


@pytest.mark.parametrize("network", ["ib", "own"])
def test_with_mi300x_as_the_workshop_s_gpu_nvlink_is_named_nowhere_for_it(tmp_path, network):
    edit = content_edit.Edit(copy(tmp_path))
    gpu = content_edit.add(edit, "gpus", "mi300x", MI300X)
    content_edit.set_workshop(edit, gpu=gpu)
    presets = content.load(edit.root).presets
    own = next(i for i, n in presets.networks.items() if n.nvlink)
    if network == "own":
        content_edit.set_default(edit, network=own)
    build.build(edit.root, tmp_path / "site")
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    words = text_of(page)
    assert "NVLink" not in words  # prose, legend, controls, readout, descriptions, tables
    assert "Infinity Fabric" in words and presets.networks[own].name == "Infinity Fabric"
    assert f"over {MI300X['interconnect']}" in words
    # The page data names the other GPUs' own links; nothing else says NVLink.
    others = [g for g in presets.gpus.values() if g.interconnect == "NVLink"]
    assert page.count("NVLink") == page.count('"interconnect":"NVLink"') == len(others)


def test_a_default_gpu_the_prose_does_not_describe_is_warned_about_at_its_line(tmp_path):
    edit = content_edit.Edit(copy(tmp_path))
    c = content.load(edit.root)
    assert not [w for w in PLATE.slots.unused(c) if "[default]: gpu" in w]
    other = next((i for i in c.presets.gpus if i != c.presets.workshop.gpu), None)
    if other is None:  # a content of one GPU: the test adds the other GPU it needs
        other = content_edit.add(edit, "gpus", "mi300x", MI300X)
        c = content.load(edit.root)
    content_edit.set_default(edit, gpu=other)
    warnings = [w for w in PLATE.slots.unused(content.load(edit.root)) if "[default]: gpu" in w]
    text = (edit.root / "plate.md").read_text(encoding="utf-8")
    line = text.splitlines().index(f'gpu = "{other}"') + 1
    assert len(warnings) == 1 and f"plate.md, line {line}:" in warnings[0], warnings
    assert c.presets.gpus[other].name in warnings[0] and c.presets.gpu.name in warnings[0]


def sequences_text(share: float) -> str:
    return PLATE.page_words.sequences_text(share)


def test_a_share_of_a_sequence_is_in_words():
    assert sequences_text(0.5) == "half a sequence"
    assert sequences_text(0.25) == "a quarter of a sequence"
    assert sequences_text(1 / 128) == "one sequence per 128 replicas"
    assert sequences_text(0.75) == "0.750 of a sequence"
    assert sequences_text(1) == "one sequence" and sequences_text(2) == "2 sequences"


def test_the_corrected_statements_are_the_formulas_on_the_presets(site):
    """BF16's optimism, 6N sized, 128.5 GB, NCCL's charges and the readout's lead, each from the presets."""
    c = content.load(CONTENT)
    p, d = c.presets, c.plate.default
    m, w = p.models[d.model], p.workshop
    gpu = p.gpu
    T, B = p.batches[d.batch].tokens, p.networks[d.network].link_bytes_per_s(gpu)
    Pu = gpu.peak_tflops * 1e12 * w.mfu
    page = (site / "index.html").read_text(encoding="utf-8")
    words = text_of(page)

    def crossing(b, scale=1.0):
        """n*: compute 6·N·T·scale/(n·P·u) meets the ring's 2(n−1)/n · b·N/B."""
        return 1 + 3 * T * B * scale / (b * Pu)

    assert w.bytes_per_grad == 2
    assert f"reduce in FP32 (n* ≈ {num(crossing(4))})" in words
    attention = m.layers * m.d_model * w.seq_len / m.params  # causal: 12·L·d·s / 2 against 6N
    lookup = m.vocab * m.d_model / m.params  # the input embedding's 6·V·d of 6N
    assert f"(+{percent(attention)} for {m.name})" in words
    assert f"over-counts the embedding lookup, which multiplies nothing, by {percent(lookup)}: with both corrected, n* ≈ " \
           f"{num(crossing(2, 1 + attention - lookup))}." in words
    # the seed's 128.5 GB, to four figures: the one readers know
    assert f"For {m.name} that is {sig((2 + w.bytes_per_grad + 12) * m.params / 1e9, 4)} GB, which" in words
    f = PLATE.facts.Atlas(p).facts(PLATE.presets.Selection(d.model, d.batch, d.network))
    if not p.networks[d.network].nvlink:
        # in NCCL's own unit, µs, for both (one unit in one sentence)
        assert f"NCCL’s cost model charges a ring call {sig(f.ring_call_latency_us)} µs and a tree call " \
               f"{sig(f.tree_latency_us)} µs" in words
    # The readout leads with the most replicas (a power of two) that still get a whole sequence each.
    whole = [2**k for k in range(w.max_replicas.bit_length()) if T / (2**k * w.seq_len) >= 1]
    if whole:
        n = whole[-1]
        readout = text_of(readout_of(page))
        assert readout.lstrip().startswith(f"{num(n)} replicas are the most that still give each a whole sequence")
        assert f"a step takes {seconds(f.at(n).step_s)}" in readout
