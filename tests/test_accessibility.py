"""Accessibility in Chromium: axe-core (WCAG 2.1 A/AA) in light and dark, the keyboard alone, focus rings,
figures in words and numbers that follow the selection, the live readout, colours and what else tells apart."""
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CONTENT, current, default_caption, plates, wait_until
from spec_model import check_descriptions, check_readout
from spec_model import expected as spec
from generator.source import content
from generator.page import render
from xiv4 import facts, xpresets, xpage, xwords

pytestmark = pytest.mark.browser

NODE = Path(__file__).resolve().parent / ".node"
AXE = NODE / "node_modules" / "axe-core" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


@pytest.fixture(scope="session")
def axe_js() -> str:
    """axe-core from npm (never committed): $AXE_CORE_JS, else tests/.node, installed there if npm exists."""
    path = Path(os.environ.get("AXE_CORE_JS") or AXE)
    if not path.exists() and shutil.which("npm") and not os.environ.get("AXE_CORE_JS"):
        subprocess.run(["npm", "install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
                        "--prefix", str(NODE), "axe-core@4"], check=False, capture_output=True, timeout=300)
    if not path.exists():
        message = f"axe-core is not at {path} (npm install --prefix tests/.node axe-core@4, or set AXE_CORE_JS)"
        if os.environ.get("CI"):
            pytest.fail(message + ", and CI is set")
        pytest.skip(message)
    return path.read_text(encoding="utf-8")


AXE_RUN = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + n.failureSummary)}));
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_wcag_violation(site, open_page, axe_js, scheme):
    # The page's CSP rightly blocks an injected script: this test alone bypasses it (test_page_modes keeps it).
    page = open_page(site, bypass_csp=True, color_scheme=scheme).page
    page.evaluate("for (const d of document.querySelectorAll('details')) d.open = true")
    page.locator("a.term").first.focus()  # with a definition showing
    page.add_script_tag(content=axe_js)
    assert page.evaluate(AXE_RUN, WCAG) == []


@pytest.mark.parametrize("width", [360])
def test_axe_finds_no_wcag_violation_on_a_phone(site, open_page, axe_js, width):
    page = open_page(site, bypass_csp=True, viewport={"width": width, "height": 740}, is_mobile=True,
                     has_touch=True, color_scheme="dark").page
    page.add_script_tag(content=axe_js)
    assert page.evaluate(AXE_RUN, WCAG) == []


FOCUSED = """() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return {tag: el.tagName.toLowerCase(), id: el.id, cls: el.className, text: el.textContent.trim().slice(0, 40),
          outline: style.outlineStyle, width: parseFloat(style.outlineWidth), colour: style.outlineColor,
          visible: el.getBoundingClientRect().width > 0};
}"""
FOCUSABLE = """() => [...document.querySelectorAll('a[href], select, summary, button, input, [tabindex]')]
  .filter(el => el.getClientRects().length && el.tabIndex >= 0).length"""


def test_every_control_is_reachable_by_tab_with_a_visible_focus_ring(site, open_page):
    page = open_page(site).page
    expected = page.evaluate(FOCUSABLE)
    seen = []
    for _ in range(expected + 5):
        page.keyboard.press("Tab")
        now = page.evaluate(FOCUSED)
        if seen and now == seen[0]:
            break
        seen.append(now)
    stops = [s for s in seen if s["tag"] != "body"]
    assert len(stops) >= expected
    kinds = {s["tag"] for s in stops}
    assert {"a", "select", "summary"} <= kinds
    assert {s["id"] for s in stops} >= {"choose-model", "choose-batch", "choose-network"}
    for stop in stops:
        assert stop["visible"], stop
        assert stop["outline"] == "solid" and stop["width"] >= 2, f"no visible focus ring on {stop}"


def test_controls_operate_with_the_keyboard_alone(site, open_page):
    page = open_page(site).page
    # The first Tab shows the skip link, which leads to the figures.
    # Each step waits in the page for the state it then asserts (issue 43: under load the keys' effects and the
    # redraws land later than on a quiet machine); a state that never comes fails at the wait, naming it.
    page.keyboard.press("Tab")
    wait_until(page, "document.activeElement?.className === 'skip'")
    box = page.locator(".skip").bounding_box()
    assert box["x"] >= 0 and box["y"] >= 0
    page.keyboard.press("Enter")
    wait_until(page, "location.hash === '#workshop-figures'")  # the page's own URL, not Playwright's record of it
    c = content.load(CONTENT)
    full = facts.Atlas(c.presets).complete(c.plate.default)
    chosen = {k: getattr(full, k) for k in facts.KEYS}
    for key, table in (("model", c.presets.models), ("batch", c.presets.batches), ("network", c.presets.networks)):
        ids = list(table)
        if ids.index(chosen[key]) + 1 == len(ids):
            continue  # the default is the last option: ArrowDown has nowhere to go
        chosen[key] = ids[ids.index(chosen[key]) + 1]  # ArrowDown picks the next option
        shown = "|".join(chosen[k] for k in facts.KEYS)
        page.focus(f"#choose-{key}")
        page.keyboard.press("ArrowDown")
        current(page)  # what waits out of sight too
        wait_until(page, f"document.documentElement.dataset.shown === '{shown}'")
    # The figures' words and numbers open from the keyboard too.
    page.focus("#fig-time-data summary")
    page.keyboard.press("Enter")
    wait_until(page, "document.getElementById('fig-time-data').open")
    assert page.locator("#fig-time-data table").is_visible()
    caption = facts.Atlas(c.presets).facts(xpresets.Selection(**chosen)).caption
    assert chosen != {k: getattr(full, k) for k in facts.KEYS}
    assert caption in page.locator("#fig-time-data caption").text_content()


def test_readout_is_a_polite_live_region_that_changes_with_the_selection(site, open_page):
    page = open_page(site).page
    readout = page.locator("#readout")
    assert readout.get_attribute("role") == "status"
    assert readout.get_attribute("aria-live") == "polite" and readout.get_attribute("aria-atomic") == "true"
    before = readout.text_content()
    c = content.load(CONTENT)
    full = facts.Atlas(c.presets).complete(c.plate.default)
    other = next(n for n in c.presets.networks if n != full.network)
    page.get_by_label("Network", exact=True).select_option(other)
    shown = "|".join(other if k == "network" else getattr(full, k) for k in facts.KEYS)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{shown}'")
    assert readout.text_content() != before


def test_each_figure_is_an_image_named_by_its_caption_and_described(site, open_page):
    c = content.load(CONTENT)
    f = facts.Atlas(c.presets).facts(c.plate.default)
    page = open_page(site).page
    # a row per replica count the figures draw; the timeline's, one per phase of its step
    rows = {"fig-timeline": len(xwords.table_rows(f, "fig-timeline")), "fig-time": len(f.points),
            "fig-efficiency": len(f.points), "fig-memory": len(f.points)}
    figure_ids = page.evaluate("() => [...document.querySelectorAll('figure.figure')].map((f) => f.id)")
    assert "fig-memory" in figure_ids
    for fid in figure_ids:
        chart = page.locator(f"#{fid} .chart")
        assert chart.get_attribute("role") == "img"
        title_id, caption_id = chart.get_attribute("aria-labelledby").split()  # named by its point, then caption
        assert page.locator("#" + title_id).text_content() == xwords.of(f, c.plate.plates)["title"][fid]
        caption = page.locator("#" + caption_id)
        describe = page.locator("#" + chart.get_attribute("aria-describedby"))
        assert default_caption(c) in caption.text_content()  # the default selection, as the figure shows it
        assert len(describe.text_content()) > 80
        assert page.locator(f"#{fid}-data table tbody tr").count() == rows[fid]
    names = [page.get_by_role("img", name=n) for n in ("Figure 1. Compute", "Figure 2. Scaling", "Figure 3. One",
                                                       "Figure 4. Model states")]
    assert all(n.count() == 1 for n in names)


SHOW_ALL = """async (selections) => {
  const out = {};
  for (const sel of selections) {
    await window.plate.show(sel);
    out[document.documentElement.dataset.shown] = {
      readout: document.getElementById('readout').textContent,
      describe: Object.fromEntries([...document.querySelectorAll('[data-describe]')]
        .map(el => [el.dataset.describe, el.textContent])),
      tables: Object.fromEntries([...document.querySelectorAll('[data-table]')].map(t => [t.dataset.table,
        [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent))])),
      captions: [...document.querySelectorAll('.figure-data caption')].map(c => c.textContent),
    };
  }
  return out;
}"""


def test_descriptions_and_tables_follow_every_selection_with_the_readouts_numbers(site, open_page):
    c = content.load(CONTENT)
    watched = open_page(site)
    check_every_workshop_selection(watched.page, c, facts.Atlas(c.presets))
    # every preset shown without a request or a complaint (what test_page_modes' walk through every control holds
    # for the page's machinery, here for each of the content's presets)
    assert watched.outside_requests(site) == [] and watched.problems() == []


def check_every_workshop_selection(page, c, atlas) -> None:
    """Every preset selection under the workshop, shown by the open page: its readout, descriptions, tables and
    captions as Python writes them and MODEL.md's formulas give them (test_content_edit's edited pages too)."""
    # the workshop's selections through the page's show(); every option combination is checked in test_engine.py
    workshop = [s for s in atlas.selections if atlas.complete(s) == atlas.complete(xpresets.Selection(s.model, s.batch,
                                                                                                     s.network))]
    shown = page.evaluate(SHOW_ALL, [{"model": s.model, "batch": s.batch, "network": s.network} for s in workshop])
    assert len(shown) == len(workshop) == len(c.presets.models) * len(c.presets.batches) * len(c.presets.networks)
    named = plates()
    for sel in workshop:
        got = shown[xpage.selection_key(sel)]
        f = atlas.facts(sel)
        check_readout(got["readout"], spec(c.presets, sel), c.presets)  # against MODEL.md's formulas
        check_descriptions(got["describe"], spec(c.presets, sel))
        # Python's words of the selection, made once: with the plates the content names (the readout), and without
        # (the tables and descriptions, as xwords.table_rows and xwords.describe make them)
        data = xwords.facts_data(f)
        words, plain = (xpage.words_of([data], given)[0] for given in (named, None))
        assert got["readout"] == "".join(words["readout"])  # the page's = Python's, for no-JS
        for fid in got["tables"]:
            assert got["tables"][fid] == plain["tables"][fid], (sel, fid)
            assert got["describe"][fid] == plain["describe"][fid]
        assert all(f.caption in caption for caption in got["captions"])
        if f.crossing_replicas:  # the readout's numbers are the table's, digit for digit
            row = next(r for r in got["tables"]["fig-time"] if r[0].endswith("(crossed)"))
            assert f"takes {row[2]} against {row[1]} of compute" in got["readout"]
            row = next(r for r in got["tables"]["fig-efficiency"] if r[0].endswith("(crossed)"))
            assert f"efficiency {row[2]}" in got["readout"]


# Machado, Oliveira & Fernandes (2009), severity 1: linear-RGB matrices for the three dichromacies.
CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def _linear(rgb):
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]


def _lab(lin):
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))


def _seen(rgb, matrix):
    lin = _linear(rgb)
    return [min(1.0, max(0.0, sum(m * v for m, v in zip(row, lin)))) for row in matrix]


SERIES = """() => [...document.querySelectorAll('#fig-time .series_marks path')].map(p => ({
  stroke: getComputedStyle(p).stroke, dash: p.getAttribute('stroke-dasharray') || ''}))"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_series_colours_survive_colour_blindness_and_are_not_the_only_key(site, open_page, scheme):
    page = open_page(site, color_scheme=scheme).page
    series = page.evaluate(SERIES)
    assert len(series) == 3  # compute, the all-reduce, and the real cluster's (issue 22)
    rgbs = [[int(v) for v in s["stroke"][s["stroke"].index("(") + 1:-1].split(",")[:3]] for s in series]
    for name, matrix in CVD.items():
        for i, j in ((0, 1), (0, 2), (1, 2)):
            distance = math.dist(_lab(_seen(rgbs[i], matrix)), _lab(_seen(rgbs[j], matrix)))
            assert distance >= 40, f"{scheme}: series {i} and {j} are only ΔE {distance:.0f} apart under {name}"
    # Not colour alone: one line solid, the others dashed each its own way, point shapes, and direct labels.
    assert sorted(bool(s["dash"]) for s in series) == [False, True, True] and len({s["dash"] for s in series}) == 3
    labels = page.locator("#fig-time .label_compute_marks text, #fig-time .label_allreduce_marks text")
    assert sorted(labels.all_text_contents()) == ["all-reduce", "compute"]
    # and the drawn key below the figure, each line's dash beside its name (the real cluster's only there)
    key = page.locator("#fig-time .key li").all_text_contents()
    assert any("real cluster" in k for k in key) and any("compute" in k for k in key), key
    dashes = page.evaluate("[...document.querySelectorAll('#fig-time .key li line')]"
                           ".map(l => l.getAttribute('stroke-dasharray') || '')")
    assert {s["dash"].replace(",", " ") for s in series} <= {d.replace(",", " ") for d in dashes}, dashes
    shapes = page.evaluate("[...document.querySelectorAll('#fig-time .series_points_marks path')]"
                           ".map(p => p.getAttribute('d').slice(0, 12))")
    assert len(set(shapes)) >= 2
