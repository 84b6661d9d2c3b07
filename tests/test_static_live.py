"""The static page against the live one: the rows Python draws the figures from (xiv4.rows_of:
page_rows.datasets) against the rows the page makes (its PAGE's datasets on its facts from the page data), for every preset
selection with every option, on the shipped content and on content made of edges: an NVLink domain exactly as
large as the replica grid, gradients that fill one bucket, and a GPU slow enough that a reader's own run nears
the overflow guard."""
from __future__ import annotations

import math
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from generator.source import content
from generator.plate import charts
from generator.page import render, theme
from generator.site import build
from xiv4 import Selection

from conftest import CONTENT, XIV4_MINI, covering, wait_until
from test_engine import assert_texts_as_built
from xiv4 import custom, facts, rows_of, xfigures, xpage, xwords

pytestmark = pytest.mark.browser

RTOL = 1e-9


def edges_content(root: Path) -> dict:
    """The fixture plate with edge presets added under ids it does not hold; what was added, by role."""
    shutil.copytree(XIV4_MINI, root)
    presets = root / "presets.toml"
    data = tomllib.loads(presets.read_text())
    taken = {ident for table in data.values() if isinstance(table, dict) for ident in table}
    fresh = lambda stem: next(f"{stem}{i}" for i in range(1000) if f"{stem}{i}" not in taken)  # noqa: E731
    largest = data["workshop"]["max_replicas"]
    added = {"whole": fresh("edge-whole-"), "half": fresh("edge-half-"), "slow": fresh("edge-slow-"),
             "nvlink": fresh("edge-nvlink-"), "bucket": fresh("edge-bucket-"), "largest": largest}
    presets.write_text(presets.read_text() + f"""
[gpus.{added["whole"]}]
name = "Edge GPU, a domain of {largest}"
peak_tflops = 100
memory_gb = 40
nvlink_gbytes_per_s = 100
nvlink_domain = {largest}
nvlink_domain_name = "one switch for the whole grid"

[gpus.{added["half"]}]
name = "Edge GPU, a domain of {largest // 2}"
peak_tflops = 100
memory_gb = 40
nvlink_gbytes_per_s = 100
nvlink_domain = {largest // 2}
nvlink_domain_name = "one switch for half the grid"

[gpus.{added["slow"]}]
name = "Edge GPU, very slow"
peak_tflops = 0.001
memory_gb = 40
nvlink_gbytes_per_s = 100

[networks.{added["nvlink"]}]
name = "Edge NVLink"
short = "edge nvlink"
nvlink = true

[models.{added["bucket"]}]
name = "Edge model, one bucket of gradients"
params = 12_000_000
layers = 2
d_model = 256
ffn = 1024
vocab = 1000
""")
    return added


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    """The edge content, loaded, and its site built."""
    root = tmp_path_factory.mktemp("edges") / "content"
    added = edges_content(root)
    out = root.parent / "site"
    build.build(root, out)
    return root, out, added


def opened(browser, site: Path):
    context = browser.new_context(offline=True)
    page = context.new_page()
    page.goto((site / "index.html").resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    return context, page


@pytest.fixture(scope="module")
def pages(browser, site, edges):
    """{name: (content folder, open page)} for the shipped content and the edge content."""
    shipped, edge = opened(browser, site), opened(browser, edges[1])
    yield {"content": (CONTENT, shipped[1]), "edges": (edges[0], edge[1])}
    shipped[0].close()
    edge[0].close()


def close(got, want: float) -> bool:
    """assert_allclose's test of one number (rtol RTOL, atol 1e-15) written out, for the many that pass: True only where
    it passes; the rest go to assert_allclose itself (NaN against NaN, and its message)."""
    return type(got) in (int, float) and (got == want or (math.isfinite(want) and
                                                          abs(got - want) <= 1e-15 + RTOL * abs(want)))


def same_rows(got: list[dict], want: list[dict], label: str) -> None:
    """Rows of the page against Python's: the same keys, texts and missing values exactly, numbers to RTOL."""
    assert len(got) == len(want), label
    for i, (g, w) in enumerate(zip(got, want)):
        assert sorted(g) == sorted(w), (label, i)
        for key, value in w.items():
            where = f"{label}: row {i}, {key}"
            if value is None or isinstance(value, (str, bool)):
                assert g[key] == value, where
            else:
                assert g[key] is not None, where
                if not close(g[key], float(value)):
                    assert_allclose(g[key], float(value), rtol=RTOL, atol=1e-15, err_msg=where)


@pytest.mark.parametrize("which", ["content", "edges"])
def test_the_page_makes_python_s_rows_for_a_covering_set_of_selections(edges, which):
    """The rows the page draws (PAGE's datasets on PAGE's facts, from the page data's presets; the page runs them
    compiled, tests/test_compiler.py) are the build's for the same selection, and their numbers the numpy model's."""
    from generator.plate import texts
    from xiv4 import PLATE
    root = CONTENT if which == "content" else edges[0]
    c = content.load(root)
    atlas = facts.Atlas(c.presets)
    presets = texts.plain(facts.presets_data(c.presets))
    page = texts.page_of(PLATE)
    # every two choices of any two controls together, and random ones (conftest.covering): every preset and option
    selections = [facts.Selection(*[row[k] for k in atlas.axes]) for row in covering(atlas.axes)]
    for key, ids in atlas.axes.items():
        assert {getattr(sel, key) for sel in selections} == set(ids), key
    overlaps = set()
    for sel in selections:
        f = atlas.facts(sel)
        label = xpage.selection_key(sel)
        overlaps.add(f.backward_only)
        drawn = page["datasets"](texts.plain(page["facts"]({k: getattr(sel, k) for k in facts.KEYS + facts.CLUSTER_KEYS},
                                                            presets)))
        want = rows_of(f)  # Python's rows, made once for the four comparisons
        same_rows(drawn["grid"], want["grid"], f"{label}: grid")
        assert_allclose([r["compute_s"] for r in drawn["grid"]], f.grid.compute_s, rtol=RTOL, err_msg=label)
        assert_allclose([r["efficiency"] for r in drawn["grid"]], f.grid.efficiency, rtol=RTOL, err_msg=label)
        same_rows(drawn["facts"], want["facts"], f"{label}: facts")
        same_rows(drawn["timeline"], want["timeline"], f"{label}: timeline")
        same_rows(drawn["timeline_facts"], want["timeline_facts"], f"{label}: timeline facts")
    assert overlaps == {False, True}  # both windows: the whole step and the backward pass


def test_a_domain_as_large_as_the_grid_shades_nothing(pages, edges):
    root, page = pages["edges"]
    _, _, added = edges
    atlas = facts.Atlas(content.load(root).presets)
    model, batch = next(iter(atlas.presets.models)), next(iter(atlas.presets.batches))
    cases = {added["whole"]: None, added["half"]: added["largest"] // 2}
    for gpu, shaded_from in cases.items():
        sel = Selection(model, batch, added["nvlink"], gpu=gpu)
        f = atlas.facts(sel)
        assert f.max_replicas == added["largest"]
        assert f.hypothetical_from == shaded_from, gpu
        js = page.evaluate("(sel) => window.plate.factsOf(sel).hypothetical_from", {k: getattr(sel, k) for k in facts.KEYS})
        assert js == shaded_from, gpu
        assert (f"{f.gpu.interconnect} joins at most" in xwords.readout(f)) is (shaded_from is not None), gpu


OWN_TEXTS = """(selections) => selections.map((sel) => window.plate.texts(sel))"""
JS_EXPONENTIAL = 1e21  # from here JavaScript's toFixed writes 1e+21, not digits: the page cannot write such numbers


def test_own_runs_near_the_overflow_guard_are_refused_or_written_as_python_writes_them(pages, edges):
    root, page = pages["edges"]
    _, _, added = edges
    c = content.load(root)
    atlas = facts.Atlas(c.presets)
    peak = atlas.presets.gpus[added["slow"]].peak_tflops * 1e12
    params, mfu = 2**53, 0.5  # the most a count may be; an MFU the slider offers
    sel = Selection(custom.CUSTOM, custom.CUSTOM, next(iter(atlas.presets.networks)), gpu=added["slow"])
    cases, accepted, refused = [], [], []
    for target in (0.3, 0.9, 0.99, 1.01, 1.5, 3.0, 8.0):  # one replica's compute, in units of JS_EXPONENTIAL
        tokens = int(target * JS_EXPONENTIAL * peak * mfu / (6 * params))
        values = {"params": params, "tokens": tokens, "gbps": 10.0, "mfu": mfu}
        f = custom.own_facts(atlas, sel, values)
        largest = max(float(np.max(np.abs(getattr(f.grid, name)))) for name in custom.RESULTS)
        (accepted if custom.model_problem(f) is None else refused).append(largest)
        if custom.model_problem(f) is None:
            cases.append((values, f))
    got = page.evaluate(OWN_TEXTS, [{**{k: getattr(sel, k) for k in facts.KEYS}, **v} for v, _ in cases])
    assert_texts_as_built(got, [f for _, f in cases], [f"{values}" for values, _ in cases], c.plate.plates)
    assert accepted and max(accepted) > 0.5 * JS_EXPONENTIAL  # the guard lets through runs near the edge
    assert refused and min(refused) < 10 * JS_EXPONENTIAL  # and refuses those just past it


COMPUTE_STROKES = """() => [...document.querySelectorAll('#fig-time .series_marks path')].map(p => getComputedStyle(p).stroke)"""


def test_a_theme_variable_colours_the_static_and_the_live_figure(tmp_path, monkeypatch, open_page):
    """Issue 19: the figures' colours are the stylesheet's theme variables. One changed in the :root block (a
    copy of templates/plate.css) colours the compute line in the static SVG, in the live view's spec, and as the
    reader sees both."""
    shipped = theme.current()
    name, colour = xfigures.SERIES["compute"][0], "#123456"
    assert colour not in shipped.values.values()
    lines = shipped.css.splitlines(keepends=True)
    where = shipped.lines[name] - 1
    lines[where] = lines[where].replace(shipped.values[name], colour)
    sheet = tmp_path / "plate.css"
    sheet.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(theme, "STYLESHEET", sheet)
    site = tmp_path / "site"
    build.build(CONTENT, site)
    html = (site / "index.html").read_text(encoding="utf-8")
    static = html[html.index('id="fig-time"'):html.index('id="fig-efficiency"')]
    assert f'stroke="{colour}"' in static and f'"{shipped.values[name]}"' not in static
    # the live view's Vega (parsed at build time; with vl-convert's fallback runtime, the spec in the page's data)
    start = html.index('id="dataflow-fig-time"' if 'id="dataflow-fig-time"' in html else 'id="plate-data"')
    assert f'"{colour}"' in html[start:html.index("</script>", start)]
    rgb = "rgb(18, 52, 86)"
    still = open_page(site, wait_ready=False, java_script_enabled=False).page
    assert rgb in still.evaluate(COMPUTE_STROKES)
    live = open_page(site).page
    assert live.evaluate("document.querySelector('#fig-time .chart').dataset.live") == "true"
    assert rgb in live.evaluate(COMPUTE_STROKES)
