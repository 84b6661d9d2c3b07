"""The page's model (templates/page/model.js) against generator/model.py: every preset selection, random custom runs,
and every text the page writes for a selection against the build's words for Python's facts of it (words.js, the one
source, under node). A formula changed on one side only fails here."""
import json
import random

import numpy as np
import pytest
from numpy.testing import assert_allclose

from generator import content, render, texts

from conftest import CONTENT, plates
from xiv4 import facts, model, xfigures, xpage, xwords

pytestmark = pytest.mark.browser

FIELDS = ("compute_s", "allreduce_s", "comm_s", "step_s", "exposed_s", "efficiency", "tokens_per_replica",
          "sequences_per_replica", "states_bytes")
RTOL = 1e-9

EVERY_SELECTION = """(selections) => selections.map((sel) => {
  const run = window.plate.factsOf(sel).run;
  return {...run, smallest_fitting: Number.isNaN(run.smallest_fitting) ? null : run.smallest_fitting};
})"""

CUSTOM = """([runs, replicas]) => runs.map((x) => {
  const run = window.plate.model.evaluate(x, replicas);
  return {...run, smallest_fitting: Number.isNaN(run.smallest_fitting) ? null : run.smallest_fitting};
})"""

EVERY_TEXT = """(selections) => selections.map((sel) => window.plate.texts(sel))"""


def assert_texts_as_built(got: list[dict], fs: list, labels: list[str], referred: dict | None = None) -> None:
    """The texts the page wrote for some selections (readout, caption, each figure's words and table) are those the
    build writes for the same facts computed in Python (generator/texts.py: words.js under node, on facts.py's
    facts): the page's facts (factsOf) give the page's words. referred: the built content's [plates], if not the
    shipped content's."""
    built = xwords.words_of(fs, plates() if referred is None else referred)
    assert len(got) == len(fs) == len(built)
    for js, f, words, label in zip(got, fs, built, labels):
        assert js["readout_paragraphs"] == words["readout"], label
        assert js["readout"] == " ".join(words["readout"]), label
        assert len(js["readout_paragraphs"]) == 3, label  # hiding, cost, memory: one paragraph each
        assert js["caption"] == f.caption, label
        assert js["describe"].keys() == js["tables"].keys() and js["describe"], label
        for fid, text in js["describe"].items():
            assert text == words["describe"][fid], (label, fid)
            assert js["tables"][fid] == words["tables"][fid], (label, fid)


@pytest.fixture(scope="module")
def atlas():
    return facts.Atlas(content.load(CONTENT).presets)


@pytest.fixture(scope="module")
def page(site, browser):
    context = browser.new_context(offline=True)
    page = context.new_page()
    page.goto((site / "index.html").resolve().as_uri())
    from conftest import wait_until
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    yield page
    context.close()


def _same_run(got: dict, run: model.Run, where: tuple, label: str) -> None:
    """One run of the page against the same run of Python: every array and fact."""
    for name in FIELDS:
        assert_allclose(np.asarray(got[name], dtype=float), getattr(run, name)[where], rtol=RTOL, atol=0,
                        err_msg=f"{label}: {name}")
    assert got["fits"] == run.fits[where].tolist(), label
    assert got["crossing_index"] == int(run.crossing_index[where]), label
    assert_allclose(got["continuous_crossing"], run.continuous_crossing[where], rtol=RTOL, err_msg=label)
    python_fit = float(run.smallest_fitting[where])
    assert (got["smallest_fitting"] is None) == np.isnan(python_fit), label
    if got["smallest_fitting"] is not None:
        assert got["smallest_fitting"] == python_fit, label
    assert got["smallest_fitting_index"] == int(run.smallest_fitting_index[where]), label


def test_every_preset_selection_matches_python(page, atlas):
    selections = atlas.selections
    assert len(selections) == np.prod([len(v) for v in atlas.axes.values()])  # every option combination
    got = page.evaluate(EVERY_SELECTION, [{k: getattr(s, k) for k in facts.KEYS} for s in selections])
    assert len(got) == len(selections)
    for sel, run in zip(selections, got):
        assert run["replicas"] == atlas.replicas.tolist()
        f = atlas.facts(sel)
        _same_run(run, f.grid, f.index, xpage.selection_key(sel))


def _random_inputs(rng: random.Random) -> dict:
    """A reader's own run: any size, batch, bandwidth and MFU 0.2–0.7, on any option."""
    return {
        "params": float(int(10 ** rng.uniform(8, 13))), "batch_tokens": float(int(2 ** rng.uniform(12, 27))),
        "link_bytes_per_s": 10 ** rng.uniform(0, 3.5) * 1e9, "nvlink_bytes_per_s": 10 ** rng.uniform(1.5, 3.3) * 1e9,
        "peak_flops": 10 ** rng.uniform(13.5, 15.5), "memory_bytes": 10 ** rng.uniform(10, 11.5),
        "mfu": rng.uniform(0.2, 0.7), "bytes_per_grad": rng.choice([2, 4]), "hierarchical": rng.random() < 0.5,
        "backward_only": rng.random() < 0.5, "sharding": rng.randrange(4), "seq_len": rng.choice([2048, 8192]),
        "state_bytes": 16,
    }


def test_random_custom_runs_match_python(page):
    rng = random.Random(20261129)
    runs = [_random_inputs(rng) for _ in range(300)]
    replicas = model.replica_counts(16384)
    got = page.evaluate(CUSTOM, [runs, replicas.tolist()])
    for i, (x, run) in enumerate(zip(runs, got)):
        python = model.evaluate(model.Inputs(**x), replicas)
        _same_run(run, python, (), f"custom run {i}: {json.dumps(x)}")


def test_the_page_writes_every_selections_texts_as_python_does(page, atlas):
    selections = atlas.selections
    got = page.evaluate(EVERY_TEXT, [{k: getattr(s, k) for k in facts.KEYS} for s in selections])
    figure_ids = page.evaluate("() => [...document.querySelectorAll('figure.figure')].map((f) => f.id)")
    assert "fig-memory" in figure_ids and len(figure_ids) >= 3
    assert all(sorted(js["describe"]) == sorted(figure_ids) for js in got)
    assert_texts_as_built(got, [atlas.facts(s) for s in selections], [xpage.selection_key(s) for s in selections])


BUCKETS = """(cases) => cases.map(([shape, bytes, compute, comm]) => {
  const m = window.plate.model;
  const [sizes, ready] = m.buckets(m.tensor_params(...shape), bytes);
  return {sizes, ready, schedule: m.bucket_schedule(compute, comm, sizes, ready),
          tail: m.bucketed_tail_seconds(compute, comm, sizes, ready)};
})"""


def test_the_page_makes_ddps_buckets_as_python_does(page):
    """Bucket lists and their schedule, side by side: every preset model in either precision, random shapes (grouped
    or not, attention or none), models given by their size alone, and compute- and link-bound steps."""
    rng = random.Random(22)
    c = content.load(CONTENT)
    shapes = [[m.params, m.layers, m.d_model, m.ffn, m.vocab] for m in c.presets.models.values()]
    for _ in range(60):
        d, layers, ffn, vocab = rng.choice([512, 2048, 4096]), rng.randrange(1, 90), rng.randrange(1, 60000), rng.randrange(1, 200000)
        shapes.append([2 * vocab * d + int(10 ** rng.uniform(3, 12)), layers, d, ffn, vocab])
    shapes += [[int(10 ** rng.uniform(6, 14)), 0, 0, 0, 0] for _ in range(10)]
    cases = [[shape, b, rng.uniform(0.01, 5), rng.uniform(0, 5)] for shape in shapes for b in (2, 4)]
    got = page.evaluate(BUCKETS, cases)
    for (shape, b, compute, comm), js in zip(cases, got):
        sizes, ready = model.buckets(model.tensor_params(*shape), b)
        assert js["sizes"] == sizes and js["ready"] == ready, shape
        assert js["schedule"] == [list(v) for v in model.bucket_schedule(compute, comm, sizes, ready)], shape
        assert js["tail"] == model.bucketed_tail_seconds(compute, comm, sizes, ready), shape


FORMAT = """(values) => values.map(([v, d]) => { const m = window.plate.model;
  return [m.num(v, d), m.sig(v), m.seconds(v), m.percent(v), m.fraction(v), m.data_size(v * 1e9), m.gigabytes(v),
    m.seconds(v / 1e6), m.percent(v / 1e4), m.given(v), m.about(v), m.about(v, 3), m.power(10, d)]; })"""


def test_the_page_formats_numbers_as_notation_does(page):
    from generator import notation
    rng = random.Random(7)
    values = [0.5, 2.5, 0.125, 0.00693, 91797.64, 0.0625, 1.0, 0.999996, 1023.5, 99.95, 454.03, 0.39, 0.0714,
              0.0099996, 0.0009996, 999.6, 0.45, 0.0047, 0.70, 0.2,  # units' edges, whole percents
              5934, 659.33, 5950, 1000, 999.96, 0.00995, 25.0]  # 'about' at its ties and powers of ten
    values += [10 ** rng.uniform(-4, 6) for _ in range(500)]
    values += [round(rng.uniform(0, 100), 1) + 0.05 for _ in range(200)]  # near-ties at one decimal
    cases = [[v, rng.randrange(4)] for v in values]
    got = page.evaluate(FORMAT, cases)
    for (v, d), texts in zip(cases, got):
        assert texts == [notation.num(v, d), notation.sig(v), notation.seconds(v), notation.percent(v),
                         notation.fraction(v), notation.data_size(v * 1e9), notation.gigabytes(v),
                         notation.seconds(v / 1e6), notation.percent(v / 1e4), notation.given(v), notation.about(v),
                         notation.about(v, 3), notation.power(10, d)], v


EVERY_TIMELINE = """(selections) => selections.map((sel) => {
  const f = window.plate.factsOf(sel);
  return {rows: window.plate.timelineRows(f), facts: window.plate.timelineFacts(f)[0]};
})"""


def test_the_page_draws_every_selections_timeline_as_python_does(page, atlas):
    from generator import charts
    selections = atlas.selections
    got = page.evaluate(EVERY_TIMELINE, [{k: getattr(s, k) for k in facts.KEYS} for s in selections])
    for sel, drawn in zip(selections, got):
        f = atlas.facts(sel)
        rows, marks = xfigures.timeline_rows(f), xfigures.timeline_facts(f)[0]
        label = xpage.selection_key(sel)
        assert [(r["row"], r["kind"]) for r in drawn["rows"]] == [(r["row"], r["kind"]) for r in rows], label
        for name in ("start", "end", "shade"):
            assert_allclose([r[name] for r in drawn["rows"]], [r[name] for r in rows], rtol=RTOL, atol=1e-15,
                            err_msg=f"{label}: {name}")
        for name, value in marks.items():
            if isinstance(value, str):
                assert drawn["facts"][name] == value, (label, name)
            else:
                assert_allclose(drawn["facts"][name], value, rtol=RTOL, err_msg=f"{label}: {name}")


OWN_TEXTS = """(selections) => selections.map((sel) => window.plate.texts(sel))"""


def custom_cases(atlas, rng: random.Random, count: int) -> list:
    """count random own runs (selection, free values, custom.own_facts) on any option, each one the model can
    price: any parameter count, batch, bandwidth and MFU."""
    from xiv4 import custom
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


def test_the_page_writes_random_custom_runs_texts_as_python_does(page, atlas):
    """The reader's own runs (issue 10): any parameter count, batch, bandwidth and MFU on any option; the page's
    readout, caption, descriptions and tables equal render.py's for custom.own_facts of the same values."""
    cases = custom_cases(atlas, random.Random(1013), 120)
    got = page.evaluate(OWN_TEXTS, [{**{k: getattr(s, k) for k in facts.KEYS}, **v} for s, v, _ in cases])
    assert_texts_as_built(got, [f for _, _, f in cases], [f"{xpage.selection_key(s)} {v}" for s, v, _ in cases])


SELECTION_CSV = """(selections) => selections.map((sel) => window.plate.selectionCsv(window.plate.factsOf(sel)))"""


def assert_csv_is_pythons(text: str, rows: list[dict], label: str) -> None:
    """A selection's CSV as the page wrote it against facts.selection_rows: the columns facts.SELECTION_COLUMNS
    declares, a row per replica count, ids and options equal, numbers within RTOL, booleans as true/false."""
    import csv
    import io
    got = list(csv.reader(io.StringIO(text)))
    assert got[0] == [c[0] for c in facts.SELECTION_COLUMNS], label
    assert len(got) - 1 == len(rows), label
    for cells, row in zip(got[1:], rows):
        for cell, (name, want) in zip(cells, row.items(), strict=True):
            if isinstance(want, bool):
                assert cell == str(want).lower(), (label, name)
            elif isinstance(want, str):
                assert cell == want, (label, name)
            else:
                assert abs(float(cell) - want) <= RTOL * abs(want), (label, name, cell, want)


def test_the_pages_selection_csv_is_pythons_on_every_preset_selection(page, atlas):
    selections = atlas.selections
    got = page.evaluate(SELECTION_CSV, [{k: getattr(s, k) for k in facts.KEYS} for s in selections])
    assert len(got) == len(selections)
    for sel, text in zip(selections, got):
        assert_csv_is_pythons(text, facts.selection_rows(atlas.facts(sel)), xpage.selection_key(sel))


def test_the_pages_selection_csv_is_pythons_on_random_custom_runs(page, atlas):
    from xiv4 import custom
    cases = custom_cases(atlas, random.Random(2311), 150)
    assert any(s.model == custom.CUSTOM for s, _, _ in cases) and any(s.network == custom.CUSTOM for s, _, _ in cases)
    got = page.evaluate(SELECTION_CSV, [{**{k: getattr(s, k) for k in facts.KEYS}, **v} for s, v, _ in cases])
    for (sel, values, f), text in zip(cases, got, strict=True):
        assert_csv_is_pythons(text, facts.selection_rows(f), f"{xpage.selection_key(sel)} {values}")


TEXTS_EVERY = 7
EVERY_CLUSTER = """(selections) => selections.map((sel) => {
  const f = window.plate.factsOf(sel);
  return {cluster: f.cluster, buckets: f.cluster_buckets, rows: window.plate.gridRows(f),
          ...(sel.texts ? {timeline: window.plate.timelineRows(f), texts: window.plate.texts(sel)} : {})};
})"""


def test_the_page_prices_every_selections_real_cluster_as_python_does(page, atlas):
    """The real cluster (issue 22) of every preset selection, each under one of the bucket_cap_mb and micro-batch
    choices in turn: the same buckets, NCCL's same costs and choices, the same steps and rows, to the last bit, and
    the same texts (captions, descriptions, tables)."""
    from dataclasses import replace
    from generator import charts
    choices = [(b, m) for b in facts.CLUSTER_OPTIONS["bucket"] for m in facts.CLUSTER_OPTIONS["micro"]]
    selections = [replace(s, bucket=choices[i % len(choices)][0], micro=choices[i % len(choices)][1])
                  for i, s in enumerate(atlas.selections)]
    texts = TEXTS_EVERY  # the texts and timeline of every seventh (all choices, all options): the rest is slow
    got = page.evaluate(EVERY_CLUSTER, [{**{k: getattr(s, k) for k in facts.KEYS + facts.CLUSTER_KEYS},
                                         "texts": i % texts == 0} for i, s in enumerate(selections)])
    assert sum("texts" in js for js in got) == -(-len(selections) // texts)
    worded = []
    for sel, js in zip(selections, got):
        f = atlas.facts(sel)
        label = xpage.selection_key(sel)
        assert js["buckets"] == [list(v) for v in f.cluster_buckets], label
        assert js["cluster"] == f.cluster, label
        assert js["rows"] == xfigures.grid_rows(f), label
        if "texts" in js:
            assert js["timeline"] == xfigures.timeline_rows(f), label  # the timeline's buckets follow the cap too
            worded.append((js["texts"], f, label))
    assert_texts_as_built(*(list(column) for column in zip(*worded)))


NCCL = """(cases) => cases.map(([bytes, link, nvlink, n]) => {
  const m = window.plate.model;
  const costs = m.nccl_allreduce(bytes, link, nvlink, n);
  return [m.nodes(n), m.ring_latency_us(n), m.tree_latency_us(n), m.ring_plateau(bytes, n), m.tree_correction(bytes),
          m.bus_bytes_per_s(link, nvlink, n), costs, m.nccl_choice(costs)];
})"""


def test_the_page_prices_random_all_reduces_as_nccls_model_does_in_python(page):
    """Any call size (a byte to 10 TB, the tree correction's every step), GPU count, NIC and NVLink speed."""
    rng = random.Random(2030)
    cases = [[rng.choice([float(int(10 ** rng.uniform(0, 13))), 64.0 * 2 ** rng.randrange(30), 25.0 * 2**20]),
              10 ** rng.uniform(0, 3) * 1e9, 10 ** rng.uniform(1, 3.3) * 1e9, 2 ** rng.randrange(15)]
             for _ in range(2000)]
    got = page.evaluate(NCCL, cases)
    for (b, link, nvlink, n), js in zip(cases, got):
        costs = model.nccl_allreduce(b, link, nvlink, n)
        assert js == [model.nodes(n), model.ring_latency_us(n), model.tree_latency_us(n), model.ring_plateau(b, n),
                      model.tree_correction(b), model.bus_bytes_per_s(link, nvlink, n), costs,
                      model.nccl_choice(costs)], (b, link, nvlink, n)
    assert {js[-1] for js in got} == {0, 1}  # both of NCCL's choices were made


CLUSTER = """(cases) => cases.map(([shape, bytes, cap, micro, compute, link, nvlink, replicas]) => {
  const m = window.plate.model;
  const [sizes, ready] = m.buckets(m.tensor_params(...shape), bytes, ...m.bucket_caps(cap));
  return {sizes, ready, cluster: m.cluster(compute, sizes, ready, link, nvlink, replicas, micro)};
})"""


def test_the_page_runs_random_real_clusters_as_python_does(page):
    """Random shapes (or sizes alone) under a random bucket_cap_mb (or none), micro-batches, compute and links."""
    rng = random.Random(2031)
    replicas = model.replica_counts(16384).tolist()
    cases = []
    for _ in range(80):
        d, layers, ffn, vocab = rng.choice([512, 4096, 8192]), rng.randrange(1, 100), rng.randrange(1, 60000), rng.randrange(1, 200000)
        shape = rng.choice([[2 * vocab * d + int(10 ** rng.uniform(3, 12)), layers, d, ffn, vocab],
                            [int(10 ** rng.uniform(6, 13)), 0, 0, 0, 0]])
        top = 10 ** rng.uniform(-2, 3)
        cases.append([shape, rng.choice([2, 4]), rng.choice([None, rng.choice([1, 5, 25, 100, 500]), rng.uniform(0.1, 900)]),
                      rng.choice([1, 2, 4, 8, 16]), [top / n for n in replicas], 10 ** rng.uniform(0, 3) * 1e9,
                      10 ** rng.uniform(1, 3.3) * 1e9, replicas])
    got = page.evaluate(CLUSTER, cases)
    for (shape, b, cap, micro, compute, link, nvlink, n), js in zip(cases, got):
        sizes, ready = model.buckets(model.tensor_params(*shape), b, *model.bucket_caps(cap))
        assert [js["sizes"], js["ready"]] == [sizes, ready], (shape, cap)
        assert js["cluster"] == model.cluster(compute, sizes, ready, link, nvlink, n, micro), (shape, cap, micro)


ZERO3_ROWS = """(selections) => selections.map((sel) => {
  const f = window.plate.factsOf(sel);
  return {rows: window.plate.gridRows(f), n_star: f.continuous_crossing};
})"""


def test_the_pages_communication_line_meets_the_backward_pass_at_n_star_under_zero3(page, atlas):
    """ZeRO-3, backward pass only: the page's Figure 1 line (the backward pass's traffic) is below the backward pass
    at the power of two under n* and above it at the one over, and is Python's line."""
    from generator import charts
    from test_charts import sides_of_n_star
    selections = [s for s in atlas.selections if atlas.facts(s).sharding_stage == 3 and s.overlap == "backward"]
    got = page.evaluate(ZERO3_ROWS, [{k: getattr(s, k) for k in facts.KEYS} for s in selections])
    met = 0
    for sel, js in zip(selections, got, strict=True):
        f = atlas.facts(sel)
        assert f.backward_only and js["rows"] == xfigures.grid_rows(f), xpage.selection_key(sel)
        sides = sides_of_n_star(js["rows"], js["n_star"])
        if sides is not None:
            assert sides[0] < 0 < sides[1], (xpage.selection_key(sel), js["n_star"], sides)
            met += 1
    assert met
