"""XIV.4's page facts, rows, CSV and words (its PAGE, which the page runs compiled: tests/test_compiler.py proves the
compiled code gives what this Python gives) against the build's numpy model (model.evaluate, facts.Facts) on every
preset selection and on random own runs; and the page, live, writing a sample of selections' texts as the build
does. A formula changed on one side only fails here."""
import json
import random
from dataclasses import replace

import numpy as np
import pytest
from numpy.testing import assert_allclose

from generator.source import content
from generator.plate import texts

from conftest import CONTENT, EVERY_SELECTION, covering, plates
from xiv4 import PLATE, custom, facts, model, rows_of, xpage, xwords

FIELDS = ("compute_s", "allreduce_s", "comm_s", "step_s", "exposed_s", "efficiency", "tokens_per_replica",
          "sequences_per_replica", "states_bytes")
RTOL = 1e-9
PAGE = texts.page_of(PLATE)


@pytest.fixture(scope="module")
def shipped():
    c = content.load(CONTENT)
    return c, facts.Atlas(c.presets), texts.plain(facts.presets_data(c.presets))


@pytest.fixture(scope="module")
def every(shipped):
    """(selection, its facts.Facts, the page's facts of it) for a covering set of preset selections (every two
    choices of any two controls together, and random ones: conftest.covering), each computed once."""
    _, atlas, presets = shipped
    sels = [facts.Selection(*[row[k] for k in atlas.axes]) for row in covering(atlas.axes)]
    return [(sel, atlas.facts(sel), page_facts(sel, presets)) for sel in sels]


def page_facts(sel, presets: dict, values: dict | None = None) -> dict:
    """The page's facts of a selection (and the reader's own values), as the page computes them from its data."""
    return texts.plain(PAGE["facts"]({**{k: getattr(sel, k) for k in facts.KEYS + facts.CLUSTER_KEYS},
                                      **(values or {})}, presets))


def assert_texts_as_built(got: list[dict], fs: list, labels: list[str], referred: dict | None = None) -> None:
    """The texts the page writes for some selections (readout, caption, each figure's words and table) are those the
    build writes for the same facts (xwords.words_of): the page's facts give the build's words. referred: the built
    content's [plates], if not the shipped content's. got: {readout_paragraphs, readout, caption, describe, tables}."""
    built = xwords.words_of(fs, plates() if referred is None else referred)
    assert len(got) == len(fs) == len(built)
    for js, f, words, label in zip(got, fs, built, labels):
        assert js["readout_paragraphs"] == words["readout"], label
        assert js["readout"] == " ".join(words["readout"]), label
        assert len(js["readout_paragraphs"]) == 3, label  # hiding, cost, memory: one paragraph each
        assert js["caption"] == f.caption, label
        assert js["describe"].keys() == js["tables"].keys() == js["title"].keys() and js["describe"], label
        assert js["title"] == words["title"], label  # each figure's point, as the build writes it
        for fid, text in js["describe"].items():
            assert text == words["describe"][fid], (label, fid)
            assert js["tables"][fid] == words["tables"][fid], (label, fid)


def page_texts(f: dict, W: dict) -> dict:
    """Every text the page writes for the facts f (templates/page/texts.js texts), by PAGE's words."""
    paragraphs = PAGE["readout"](f, W)
    return {"readout": " ".join(paragraphs), "readout_paragraphs": paragraphs, "caption": f["caption"],
            "title": {fid: PAGE["title"](f, fid, W) for fid in xwords.FIGURES},
            "describe": {fid: PAGE["describe"](f, fid, W) for fid in xwords.FIGURES},
            "tables": {fid: PAGE["table_rows"](f, fid) for fid in xwords.FIGURES}}


def _same_run(got: dict, run: model.Run, where: tuple, label: str) -> None:
    """The page's facts of one run against the same run of the numpy model: every array and fact."""
    points = got["points"]
    assert [p["replicas"] for p in points] == run.replicas.tolist(), label
    for name in FIELDS:
        assert_allclose(np.asarray([p[name] for p in points], dtype=float), getattr(run, name)[where], rtol=RTOL,
                        atol=0, err_msg=f"{label}: {name}")
    assert [p["fits"] for p in points] == run.fits[where].tolist(), label
    crossing = int(run.crossing_index[where])
    assert got["crossing_replicas"] == (None if crossing < 0 else int(run.replicas[crossing])), label
    assert_allclose(got["continuous_crossing"], run.continuous_crossing[where], rtol=RTOL, err_msg=label)
    python_fit = float(run.smallest_fitting[where])
    assert (got["smallest_fitting_replicas"] is None) == np.isnan(python_fit), label
    if got["smallest_fitting_replicas"] is not None:
        assert got["smallest_fitting_replicas"] == python_fit, label
    fitting = int(run.smallest_fitting_index[where])
    assert got["smallest_fitting_on_grid"] == (None if fitting < 0 else int(run.replicas[fitting])), label


def test_every_preset_selection_matches_python(shipped, every):
    """The page's facts (from the page data's presets) are the numpy model's run, and are the build's facts_data."""
    _, atlas, _ = shipped
    for key, ids in atlas.axes.items():  # every preset and option is among them
        assert {getattr(sel, key) for sel, _, _ in every} == set(ids), key
    for sel, f, got in every:
        _same_run(got, f.grid, f.index, xpage.selection_key(sel))
        assert got == texts.plain(xwords.facts_data(f)), xpage.selection_key(sel)


def _random_inputs(rng: random.Random) -> dict:
    """A reader's own run: any size, batch, bandwidth and MFU 0.2–0.7, on any option."""
    return {
        "params": float(int(10 ** rng.uniform(8, 13))), "batch_tokens": float(int(2 ** rng.uniform(12, 27))),
        "link_bytes_per_s": 10 ** rng.uniform(0, 3.5) * 1e9, "nvlink_bytes_per_s": 10 ** rng.uniform(1.5, 3.3) * 1e9,
        "peak_flops": 10 ** rng.uniform(13.5, 15.5), "memory_bytes": 10 ** rng.uniform(10, 11.5),
        "mfu": rng.uniform(0.2, 0.7), "bytes_per_grad": rng.choice([2, 4]), "hierarchical": rng.random() < 0.5,
        "backward_only": rng.random() < 0.5, "sharding": rng.randrange(4), "seq_len": rng.choice([2048, 8192]),
        "gpus_per_replica": rng.choice([1, 2, 8, 16, 128]),
    }


def test_random_custom_runs_match_python():
    """The page's model at each replica count (page_facts.point) is the numpy model's, on any inputs."""
    from xiv4 import PLATE as plate
    rng = random.Random(20261129)
    replicas = model.replica_counts(16384)
    for i in range(300):
        x = _random_inputs(rng)
        python = model.evaluate(model.Inputs(**x), replicas)
        points = [plate.page_facts.point({k: float(v) if k not in ("hierarchical", "backward_only", "sharding")
                                          else v for k, v in x.items()}, int(n)) for n in replicas]
        for name in FIELDS:
            assert_allclose([p[name] for p in points], getattr(python, name), rtol=RTOL, atol=0,
                            err_msg=f"custom run {i}: {json.dumps(x)}: {name}")
        assert [p["fits"] for p in points] == python.fits.tolist(), i


def test_the_page_writes_every_selections_texts_as_python_does(shipped, every):
    c, atlas, _ = shipped
    W = texts.plain(xwords.words_context([atlas.facts(atlas.selections[0])], c.plate.plates))
    got = [page_texts(page, W) for _, _, page in every]
    assert_texts_as_built(got, [f for _, f, _ in every], [xpage.selection_key(s) for s, _, _ in every])


def custom_cases(atlas, rng: random.Random, count: int) -> list:
    """count random own runs (selection, free values, custom.own_facts) on any option, each one the model can
    price: any parameter count, batch, bandwidth and MFU."""
    from xiv4 import Selection
    cases = []
    while len(cases) < count:
        values = {"params": int(10 ** rng.uniform(8, 12.5)), "tokens": int(2 ** rng.uniform(14, 26)),
                  "gbps": round(10 ** rng.uniform(0, 3), rng.randrange(4)), "mfu": rng.randrange(20, 71) / 100}
        sel = Selection(*(rng.choice(atlas.axes[k] + ["custom"] * (k in ("model", "batch", "network")))
                          for k in facts.KEYS))
        f = custom.own_facts(atlas, sel, values)
        if custom.model_problem(f) is None:
            cases.append((sel, values, f))
    return cases


def own_values(sel, values: dict, presets: dict) -> dict:
    """The reader's values as the page's selection carries them: those of its custom controls, and an MFU not the
    workshop's."""
    keep = {k: v for k, v in values.items() if custom.FIELDS[k][0] in ("model", "batch", "network")
            and getattr(sel, custom.FIELDS[k][0]) == custom.CUSTOM}
    if values.get("mfu", presets["workshop"]["mfu"]) != presets["workshop"]["mfu"]:
        keep["mfu"] = values["mfu"]
    return keep


def test_the_page_writes_random_custom_runs_texts_as_python_does(shipped):
    """The reader's own runs (issue 10): any parameter count, batch, bandwidth and MFU on any option; the page's
    readout, caption, descriptions and tables equal the build's for custom.own_facts of the same values."""
    c, atlas, presets = shipped
    W = texts.plain(xwords.words_context([atlas.facts(atlas.selections[0])], c.plate.plates))
    cases = custom_cases(atlas, random.Random(1013), 120)
    got = [page_texts(page_facts(s, presets, own_values(s, v, presets)), W) for s, v, _ in cases]
    assert_texts_as_built(got, [f for _, _, f in cases], [f"{xpage.selection_key(s)} {v}" for s, v, _ in cases])


def assert_csv_is_pythons(rows: list[list], f: facts.Facts, label: str) -> None:
    """A selection's CSV rows (PAGE's csv_rows, or the cells of the CSV the page saves) against the numpy model's
    values of the same selection: ids and options equal, numbers within RTOL, booleans as booleans (true/false)."""
    from xiv4 import PLATE as plate
    columns = plate.page_rows.SELECTION_COLUMNS
    assert len(rows) == len(f.grid.replicas), label
    for r, cells in enumerate(rows):
        for cell, (name, source, field, divisor) in zip(cells, columns, strict=True):
            if source == "selection":
                want = getattr(f.selection, field)
            elif source == "inputs":
                want = getattr(f.inputs, field) / divisor
            elif source == "cluster":
                want = f.cluster[field][r]
                if want is None:  # beyond the NVLink domain: not priced, an empty cell
                    assert cell == "", (label, name)
                    continue
            else:
                want = getattr(f.grid, field)[r].item() / divisor if field != "fits" else bool(f.grid.fits[r])
            if isinstance(want, bool):  # as csv_rows gives it, or as the page's CSV writes it
                assert cell in (want, str(want).lower()), (label, name)
            elif isinstance(want, str):
                assert cell == want, (label, name)
            else:
                assert abs(float(cell) - want) <= RTOL * abs(want), (label, name, cell, want)


def test_the_pages_selection_csv_is_pythons_on_every_preset_selection(shipped, every):
    c, _, _ = shipped
    from xiv4 import PLATE as plate
    assert [c[0] for c in plate.page_rows.SELECTION_COLUMNS] == json_data_columns(c)
    for sel, f, got in every:
        assert_csv_is_pythons(PAGE["csv_rows"](got), f, xpage.selection_key(sel))


def json_data_columns(c) -> list[str]:
    """The page data's csv_columns, the header the page writes over csv_rows."""
    atlas = facts.Atlas(c.presets)
    return xpage.page_data(c, atlas, [], None)["csv_columns"]


def test_the_pages_selection_csv_is_pythons_on_random_custom_runs(shipped):
    _, atlas, presets = shipped
    cases = custom_cases(atlas, random.Random(2311), 150)
    assert any(s.model == custom.CUSTOM for s, _, _ in cases) and any(s.network == custom.CUSTOM for s, _, _ in cases)
    for sel, values, f in cases:
        rows = PAGE["csv_rows"](page_facts(sel, presets, own_values(sel, values, presets)))
        assert_csv_is_pythons(rows, f, f"{xpage.selection_key(sel)} {values}")


def test_the_page_prices_a_covering_set_of_selections_real_cluster_as_python_does(shipped):
    """The real cluster (issue 22) of every two presets or options of any two controls together (bucket_cap_mb and
    micro-batches among them) and random selections (conftest.covering): the same buckets, NCCL's same costs and
    choices, the same steps and rows, to the last bit."""
    _, atlas, presets = shipped
    choices = {**atlas.axes, **{k: list(v) for k, v in facts.CLUSTER_OPTIONS.items()}}
    if EVERY_SELECTION:  # every preset selection, each under one of the real cluster's choices in turn (not 432,000)
        cluster = covering({k: list(v) for k, v in facts.CLUSTER_OPTIONS.items()})
        selections = [replace(s, **cluster[i % len(cluster)]) for i, s in enumerate(atlas.selections)]
    else:
        selections = [facts.Selection(**row) for row in covering(choices, 200, 22)]
    assert {s.bucket for s in selections} == set(facts.CLUSTER_OPTIONS["bucket"])
    for sel in selections:
        f = atlas.facts(sel)
        got = page_facts(sel, presets)
        label = xpage.selection_key(sel)
        assert got["buckets"] == [list(v) for v in f.cluster_buckets], label
        assert got["cluster"] == f.cluster, label
        assert PAGE["datasets"](got)["grid"] == rows_of(f)["grid"], label
        assert PAGE["datasets"](got)["timeline"] == rows_of(f)["timeline"], label


def test_the_pages_communication_line_meets_the_backward_pass_at_n_star_under_zero3(every):
    """ZeRO-3, backward pass only: the page's Figure 1 line (the backward pass's traffic) is below the backward pass
    at the power of two under n* and above it at the one over."""
    from test_charts import sides_of_n_star
    met = 0
    for sel, f, got in every:
        if not (f.sharding_stage > 0 and sel.overlap == "backward"):
            continue
        rows = PAGE["datasets"](got)["grid"]
        assert got["backward_only"], xpage.selection_key(sel)
        sides = sides_of_n_star(rows, got["continuous_crossing"])
        if sides is not None:
            assert sides[0] < 0 < sides[1], (xpage.selection_key(sel), got["continuous_crossing"], sides)
            met += 1
    assert met


EVERY_TEXT = """(selections) => selections.map((sel) => window.plate.texts(sel))"""
SAMPLE = 37  # every 37th preset selection, live: the page as the reader gets it (the compiled code's every selection
# is tests/test_compiler.py's)


@pytest.mark.browser
def test_the_live_page_writes_a_sample_of_selections_texts_as_python_does(site, browser, shipped):
    from conftest import wait_until
    _, atlas, _ = shipped
    context = browser.new_context(offline=True)
    page = context.new_page()
    page.goto((site / "index.html").resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    selections = atlas.selections[::SAMPLE]
    got = page.evaluate(EVERY_TEXT, [{k: getattr(s, k) for k in facts.KEYS} for s in selections])
    context.close()
    assert_texts_as_built(got, [atlas.facts(s) for s in selections], [xpage.selection_key(s) for s in selections])
