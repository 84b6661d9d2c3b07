"""XIV.4 beside published measurements (measured.toml) and its GPUs per replica: the table's rows, each ratio the
model's prediction over the content's measurement, Llama 3's MFU ratio within 10%, and a replica of g GPUs priced
per GPU."""
import re
import tomllib

import pytest

from generator.source import content
from generator.page.notation import sig

from conftest import CONTENT, copy_plate
from xiv4 import PLATE, Selection, facts, model, xpage

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


def test_the_table_holds_at_least_six_measurements_each_cited(shipped):
    c, atlas, default = shipped
    tables = xpage.static_tables(c, atlas, default)
    assert [t["id"] for t in tables] == ["measured"]
    body = tables[0]["rows"]
    expected = len(TOML["collectives"]) + len(TOML["runs"]) + (len(TOML["runs"]) >= 2)
    assert len(body) == expected >= 6
    for cells, entry in zip(body, TOML["collectives"] + TOML["runs"]):
        assert len(cells) == len(measured.COLUMNS)
        label, href = cells[-1]
        if "thread" in entry:  # a GitHub thread: the row links to it
            assert entry["thread"].startswith("https://github.com/NVIDIA/")
            assert href == entry["thread"] and label.endswith("#" + entry["thread"].rsplit("/", 1)[-1])
        else:
            assert entry["source"] in c.sources
            assert href == f"#source-{entry['source']}" and label == c.sources[entry["source"]].label
    assert tables[0]["note"]  # the one sentence that states the model's error


def test_each_ratio_is_the_prediction_over_the_contents_measurement(shipped, rows):
    c, atlas, default = shipped
    cells = xpage.static_tables(c, atlas, default)[0]["rows"]
    for row, cell, entry in zip(rows, cells, TOML["collectives"]):
        middle = (entry["low"] + entry["high"]) / 2
        assert row.measured == middle
        # the model's own real-cluster collective: an 8 GiB all-reduce's ring bandwidth term, as bus bandwidth
        x = facts.inputs(atlas.presets, Selection(default.model, default.batch, entry["network"], gpu=entry["gpu"]))
        n = entry["gpus"]
        ring = model.nccl_allreduce(2**33, x.link_bytes_per_s, x.nvlink_bytes_per_s, n)[1]
        bus = 2**33 / ring * 2 * (n - 1) / n / model.GB
        if entry["what"] == "per_nic":
            bus /= model.NODE_GPUS
        assert row.predicted == pytest.approx(bus, rel=1e-12)
        assert row.ratio == pytest.approx(bus / middle, rel=1e-12)
        assert cell[3] == sig(bus / middle, 3)
    runs = [r for r in rows if r.kind == "mfu"]
    assert [r.measured for r in runs] == [e["mfu"] for e in TOML["runs"]]
    for row, entry in zip(runs, TOML["runs"]):
        f = atlas.facts(run_selection(entry["selection"]))
        assert (f.layout.tensor, f.layout.pipeline) == (8, 16) and f.model.id == "llama3-405b"  # the published layout
        assert row.predicted == pytest.approx(f.inputs.mfu * f.cluster_at(entry["replicas"])["efficiency"], rel=1e-12)
        assert row.ratio == pytest.approx(row.predicted / entry["mfu"], rel=1e-12)


def test_llama_3s_mfu_ratio_is_predicted_within_ten_percent(rows):
    first, last = TOML["runs"][0], TOML["runs"][-1]
    assert last["replicas"] == 2 * first["replicas"]  # the same layout, twice the replicas
    (ratio,) = [r for r in rows if r.kind == "mfu_ratio"]
    assert ratio.measured == pytest.approx(last["mfu"] / first["mfu"])
    assert abs(ratio.ratio - 1) < 0.10, ratio


def test_the_error_sentence_reads_its_numbers_off_the_rows(rows):
    text = measured.error_sentence(rows)
    assert text.count(".") - len(re.findall(r"\d\.\d", text)) == 1  # one sentence
    nic = [r for r in rows if r.kind == "per_nic"][0]
    assert f"within {measured.percent(abs(nic.ratio - 1))}" in text


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
