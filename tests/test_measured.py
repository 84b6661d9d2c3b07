"""XIV.4 beside published measurements (measured.toml) and its GPUs per replica: the table's rows, each ratio the
model's value (at line rate and at achieved rates) over the content's measurement, the error sentence's clauses,
measured.toml's checks at their lines, and a replica of g GPUs priced per GPU."""
import re
import tomllib
from pathlib import Path

import pytest

from generator.source import content
from generator.page.notation import sig

from conftest import CONTENT, copy_plate
from xiv4 import PLATE, SHIPPED, Selection, facts, model, xpage

measured = PLATE.measured
TOML = tomllib.loads((CONTENT / measured.FILE).read_text(encoding="utf-8"))
SELECTIONS = tomllib.loads((CONTENT / "presets.toml").read_text(encoding="utf-8"))["selections"]


def run_selection(ident: str) -> Selection:
    """A [selections.<id>] of presets.toml as the selection it names."""
    return Selection(**{k: v for k, v in SELECTIONS[ident].items() if k != "name"})


@pytest.fixture(scope="module")
def shipped():
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    return c, atlas, atlas.complete(c.plate.default)


@pytest.fixture(scope="module")
def rows(shipped):
    c, atlas, default = shipped
    return measured.rows(atlas, c.root, default)


def model_busbw(link_gbps: float, nvlink_gbps: float, gpus: int) -> float:
    """A large ring all-reduce's bus bandwidth as the model states it (docs/plate-xiv-4.md), by its own formula:
    NVLink inside one node; across nodes a NIC per GPU carries a channel, 8 NICs per node, capped by NVLink."""
    return nvlink_gbps if gpus <= 8 else min(8 * link_gbps, nvlink_gbps)


def test_the_table_holds_every_measurement_each_cited(shipped):
    c, atlas, default = shipped
    tables = xpage.static_tables(c, atlas, default)
    assert [t["id"] for t in tables] == ["measured"]
    body = tables[0]["rows"]
    assert len(body) == len(TOML["collectives"]) + (len(TOML["runs"]) >= 2)
    for cells, entry in zip(body, TOML["collectives"] + TOML["runs"][-1:]):
        assert len(cells) == len(measured.COLUMNS)
        label, href = cells[-1]
        if entry.get("thread"):  # a GitHub thread: the row links to it, named by repository and number
            owner, repo, _, number = entry["thread"].split("/")[-4:]
            assert href == entry["thread"] and label == f"{repo} #{number}"
        else:
            assert entry["source"] in c.sources
            assert href == f"#source-{entry['source']}" and label == c.sources[entry["source"]].label
    assert tables[0]["note"]  # the one sentence that states the model's error


def test_each_collective_is_priced_at_line_rate_and_at_achieved_rates(shipped, rows):
    c, atlas, default = shipped
    cells = xpage.static_tables(c, atlas, default)[0]["rows"]
    for row, cell, entry in zip(rows, cells, TOML["collectives"]):
        middle = (entry["low"] + entry["high"]) / 2
        assert row.measured == middle
        x = facts.inputs(atlas.presets, Selection(default.model, default.batch, entry["network"], gpu=entry["gpu"]))
        link, nvlink = x.link_bytes_per_s / model.GB, x.nvlink_bytes_per_s / model.GB
        per = min(entry["gpus"], 8) if entry["what"] == "per_nic" else 1
        line = model_busbw(link, nvlink, entry["gpus"]) / per
        achieved = model_busbw(link * model.NIC_MEASURED_GBPS / model.NIC_LINE_GBPS,
                               nvlink * model.NVLINK_MEASURED_GBPS / model.NVLINK_LINE_GBPS, entry["gpus"]) / per
        assert row.line == pytest.approx(line, rel=1e-9) and row.achieved == pytest.approx(achieved, rel=1e-9)
        assert cell[3] == sig(line / middle, 3) and cell[5] == sig(achieved / middle, 3)
        # an expectation, and a figure a factor is set from, say so where the value is
        assert ("expected, not a run" in cell[0]) == (entry["basis"] == "expectation")
        assert ("sets the model's factor" in cell[0]) == bool(entry.get("calibrates"))
        assert row.test == (entry["basis"] == "run" and not entry.get("calibrates"))


def test_the_runs_are_one_row_what_doubling_the_replicas_costs(shipped, rows):
    c, atlas, default = shipped
    runs = TOML["runs"]
    (row,) = [r for r in rows if r.kind == "scaling"]
    assert row.measured == pytest.approx(runs[-1]["tflops"] / runs[0]["tflops"])
    eff = []
    for entry in (runs[0], runs[-1]):
        f = atlas.facts(run_selection(entry["selection"]))
        assert (f.layout.tensor, f.layout.pipeline) == (8, 16) and f.model.id == "llama3-405b"  # the published layout
        eff.append(f.cluster_at(entry["replicas"])["efficiency"])
    assert row.achieved == pytest.approx(eff[1] / eff[0], rel=1e-12) and row.line is None


def row_of(kind="busbw", low=100.0, high=None, achieved=100.0, line=None, algorithm="ring", basis="run",
           calibrates="", nodes=1):
    """A made-up row for the sentence's and the cells' own tests."""
    return measured.Row(kind, "setup", low, low if high is None else high, achieved if line is None else line, achieved, "src",
                        algorithm, "", basis, calibrates, nodes)


def test_a_range_is_printed_low_to_high_and_a_thread_by_its_repository():
    cells = measured.table([row_of("per_nic", 46, 48, 47, basis="expectation")], {})
    assert cells[0][1] == "46–48 GB/s" and cells[0][0].endswith("(expected, not a run)")
    assert measured.table([row_of(low=368.76, high=368.76)], {})[0][1] == "368.76 GB/s"
    assert measured.thread_label("https://github.com/NVIDIA/nccl-tests/issues/309") == "nccl-tests #309"
    assert measured.thread_label("https://github.com/NVIDIA/nccl/issues/2140/") == "nccl #2140"


def clauses(text: str) -> list[str]:
    """The error sentence's clauses."""
    assert text.endswith(".") and text.count("; ") == len(text[:-1].split("; ")) - 1
    return text[:-1].split("; ")


def test_the_error_sentence_has_a_clause_for_each_kind_of_row_and_each_branch():
    """Each of the four clauses appears exactly when its rows do, with its numbers and its direction read off them."""
    ring = row_of(low=100, achieved=103, line=120)  # optimistic
    slow = row_of(low=100, achieved=95, line=110, algorithm="default", nodes=4)  # pessimistic at achieved
    nvls = row_of(low=125, achieved=100, algorithm="nvls")
    pair = row_of(low=125, achieved=100, algorithm="default", nodes=2)
    scaling = measured.Row("scaling", "s", 0.9, 0.9, None, 0.99, "src")
    calibrating = row_of(low=50, achieved=100, calibrates="nvlink")  # 100% off: never a test
    expected = row_of(low=50, achieved=100, basis="expectation")
    assert measured.error_sentence([]) == ""
    assert measured.error_sentence([calibrating, expected]) == ""
    (one,) = clauses(measured.error_sentence([ring, calibrating, expected]))
    assert one.startswith("Against the runs") and "is 3% optimistic (at line rate, 20% optimistic)" in one
    (one,) = clauses(measured.error_sentence([ring, slow]))
    assert "from 5% pessimistic to 3% optimistic (at line rate, 10% to 20% optimistic)" in one
    (one,) = clauses(measured.error_sentence([slow, row_of(low=100, achieved=98, line=99)]))
    assert "2% to 5% pessimistic" in one and "from 1% pessimistic to 10% optimistic" in one
    (one,) = clauses(measured.error_sentence([nvls, row_of(low=110, achieved=100, algorithm="default")]))
    assert one.startswith("In-switch reduction") and one.endswith("by up to 25%")
    (one,) = clauses(measured.error_sentence([pair]))
    assert one.startswith("On two nodes it is 20% pessimistic against NCCL's own pick")
    (one,) = clauses(measured.error_sentence([row_of(low=80, achieved=100, algorithm="default", nodes=2)]))
    assert "25% optimistic against NCCL's own pick" in one
    (one,) = clauses(measured.error_sentence([scaling]))
    assert one.startswith("Doubling Llama 3's replicas cost 10% of each GPU's throughput, of which the model "
                          "predicts 1%")
    four = clauses(measured.error_sentence([scaling, pair, nvls, ring]))
    assert [p.split()[0] for p in four] == ["Against", "in-switch", "on", "doubling"]


def test_the_shipped_error_sentence_reads_its_numbers_off_the_rows(rows):
    text = measured.error_sentence(rows)
    priced = [r for r in rows if r.test and (r.algorithm == "ring" or (r.algorithm == "default" and r.nodes > 2))]
    if priced:
        worst = max(priced, key=lambda r: abs(r.ratio - 1))
        assert measured.percent(abs(worst.ratio - 1)) in text
    scaling = [r for r in rows if r.kind == "scaling"]
    if scaling:
        assert measured.percent(1 - scaling[0].measured) in text


def test_a_replica_of_g_gpus_is_priced_per_gpu(shipped):
    """Compute, gradient bytes and model states per GPU are 1/g of one GPU's replica, by the workshop's formulas;
    the model's published layout is the default, one GPU for a model without one, and the replica axis stops where
    the replicas' GPUs reach the catalogue's cap."""
    c, atlas, default = shipped
    assert Selection("m", "b", "n").layout == default.layout == "published"
    for ident, layout in c.presets.layouts.items():
        g = layout.tensor * layout.pipeline
        f = atlas.facts(Selection(default.model, default.batch, default.network, layout=ident))
        x = f.inputs
        assert x.gpus_per_replica == g and f.layout == layout
        assert f.max_replicas * g <= c.presets.workshop.max_replicas < 2 * f.max_replicas * g or f.max_replicas == 1
        for p in f.points:
            n = p.replicas
            assert p.compute_s == pytest.approx(6 * x.params * x.batch_tokens / (n * g * x.peak_flops * x.mfu))
            assert p.allreduce_s == pytest.approx(2 * (n - 1) / n * x.bytes_per_grad * x.params / g / x.link_bytes_per_s)
            assert p.states_bytes == pytest.approx((2 + x.bytes_per_grad + 12) * x.params / g)
    published = {m.id: m.layout for m in c.presets.models.values()}
    for model_id, ident in published.items():
        f = atlas.facts(Selection(model_id, default.batch, default.network))
        assert f.layout.id == ident if ident else f.layout.gpus == 1
    # a replica of a node or more meets its peers across nodes only, one to a node: NCCL's ring pays a network step
    # per rank; smaller replicas share a node
    assert [float(model.group_node_gpus(g)) for g in (1, 2, 4, 8, 16, 128)] == [8, 4, 2, 1, 1, 1]
    assert model.ring_latency_us(64, int(model.group_node_gpus(128))) == pytest.approx(
        model.NCCL_BASE_US + 2 * 63 * model.NET_US)


def test_a_selection_naming_a_choice_the_page_lacks_fails_at_its_line(tmp_path):
    import shutil
    from generator.source.schema import ContentError
    root = tmp_path / "plate"
    copy_plate(CONTENT, root, ignore=shutil.ignore_patterns("__pycache__"))
    presets = root / "presets.toml"
    text = presets.read_text(encoding="utf-8")
    presets.write_text(text + '\n[selections.wide]\nname = "too wide"\nmodel = "llama3-405b"\nbatch = "16M"\n'
                       'network = "ib-400"\nlayout = "tp3"\n', encoding="utf-8")
    line = len((text + '\n[selections.wide]\nname = "too wide"\nmodel = "llama3-405b"\nbatch = "16M"\n'
                'network = "ib-400"\nlayout = "tp3"').splitlines())
    with pytest.raises(ContentError) as caught:
        content.load(root)
    assert f"presets.toml, line {line}:" in str(caught.value) and 'layout "tp3"' in str(caught.value)


def test_a_selection_no_measured_run_names_is_a_warning(tmp_path):
    import shutil
    root = tmp_path / "plate"
    copy_plate(CONTENT, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert not [w for w in PLATE.slots.unused(content.load(root)) if "selections" in w]
    presets = root / "presets.toml"
    presets.write_text(presets.read_text(encoding="utf-8") + '\n[selections.spare]\nname = "spare"\n'
                       'model = "llama3-8b"\nbatch = "4M"\nnetwork = "ib-400"\n', encoding="utf-8")
    warnings = PLATE.slots.unused(content.load(root))
    assert [w for w in warnings if "[selections.spare] is never used" in w] and \
        not [w for w in warnings if "llama3-405b" in w]


def _entry_line(text: str, section: str, index: int, key: str) -> int:
    """The line of key in the index-th [[section]] entry of measured.toml's text (an independent reading)."""
    lines = text.splitlines()
    heads = [n for n, line in enumerate(lines) if line.strip() == f"[[{section}]]"]
    start = heads[index]
    for n in range(start + 1, len(lines)):
        if lines[n].startswith("["):
            break
        if lines[n].split("=")[0].strip() == key:
            return n + 1
    return start + 1


# (section, entry, key, the value written instead, what the message says): a kind, a range, a unit, NaN, text, an
# id, a key or table the file does not have
PLANTED = [
    ("collectives", 0, "low", "-370", "low must be a positive number, got -370"),
    ("collectives", 0, "high", "nan", "high must be a positive number, got nan"),
    ("collectives", 1, "low", '"368.76"', 'low must be a positive number, got "368.76"'),
    ("collectives", 1, "low", "368760", "low must be from 0.1 to 100,000 GB/s, got 368760"),
    ("collectives", 1, "gpus", "8.0", "gpus must be a whole number"),
    ("collectives", 2, "algorithm", '"nvl"', 'algorithm "nvl" is not one of "ring", "nvls", "default"'),
    ("collectives", 2, "basis", '"measured"', 'basis "measured" is not one of "run", "expectation"'),
    ("collectives", 2, "what", '"busbw_per_gpu"', 'what "busbw_per_gpu" is not one of'),
    ("collectives", 3, "gpu", '"h900"', 'gpu "h900" is not a preset of presets.toml'),
    ("collectives", 3, "thread", '"https://github.com/NVIDIA"', "is not a GitHub issue or pull request's address"),
    ("collectives", 0, "calibrates", '"pcie"', 'calibrates "pcie" is not one of "nvlink", "nic"'),
    ("runs", 0, "tflops", "0.43", "tflops must be from 1 to 100,000 TFLOP/s, got 0.43"),
    ("runs", 1, "selection", '"llama3"', 'selection "llama3" is not a [selections.<id>] of presets.toml'),
    ("runs", 1, "source", '"llama-3"', 'source "llama-3" is not an id of sources.toml'),
    ("runs", 1, "colour", '"red"', 'unknown key "colour"'),
]


def _plant(tmp_path, section: str, index: int, key: str, value: str) -> tuple[Path, int]:
    """A copy of the plate whose measured.toml has key = value in its index-th [[section]] entry (added after the
    entry's header when it has no such key); the copy and the planted line."""
    import shutil
    root = tmp_path / "plate"
    copy_plate(CONTENT, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / measured.FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    line = _entry_line("\n".join(lines), section, index, key)
    if lines[line - 1].split("=")[0].strip() == key:
        lines[line - 1] = f"{key} = {value}"
    else:
        lines.insert(line, f"{key} = {value}")
        line += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, line


@pytest.mark.parametrize("section, index, key, value, says", PLANTED, ids=[f"{p[0]}-{p[2]}-{p[3]}" for p in PLANTED])
def test_a_mistake_in_measured_toml_is_reported_at_its_line(tmp_path, section, index, key, value, says):
    from generator.source.schema import ContentError
    if index >= len(TOML.get(section, [])):
        pytest.skip(f"the content has no {section} entry {index}")  # an author's edit removed it
    root, line = _plant(tmp_path, section, index, key, value)
    with pytest.raises(ContentError) as caught:
        content.load(root)
    found = [m for m in caught.value.problems if f"{measured.FILE}, line {line}:" in m]
    assert found and says in found[0], caught.value.problems


def test_a_range_written_high_first_and_a_table_the_file_lacks_are_mistakes(tmp_path):
    from generator.source.schema import ContentError
    root, line = _plant(tmp_path, "collectives", 0, "low", "999")
    text = (root / measured.FILE).read_text(encoding="utf-8")
    (root / measured.FILE).write_text(text + "\n[extra]\nx = 1\n", encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        content.load(root)
    high = _entry_line(text, "collectives", 0, "high")
    assert any(f"line {high}:" in m and "is below low 999" in m for m in caught.value.problems)
    extra = len(text.splitlines()) + 2
    assert any(f"line {extra}:" in m and 'unknown table "extra"' in m for m in caught.value.problems)
