"""What a reader does, in the system's Chromium with the network off: open, choose, share the link."""
import html
import random
import re
from dataclasses import replace

import pytest

from conftest import CONTENT, current, plates, wait_until
from generator.source import content
from generator.page import render
from xiv4 import facts, rows_of, selection_rows, xfigures, xpage, xwords

pytestmark = pytest.mark.browser
# Each control's label, and the field of a selection it sets.
CONTROLS = {"Model": "model", "Global batch": "batch", "Network": "network", "GPU": "gpu",
            "All-reduce hides behind": "overlap",
            "Gradient precision": "precision", "Ring layout": "topology", "Sharding": "sharding"}


def shipped():
    """(content, atlas, the default selection with every option filled in) of the content being built."""
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    return c, atlas, atlas.complete(c.plate.default)


def words(markup: str) -> str:
    """Text without tags or whitespace, to compare the page's readout with render.py's."""
    return "".join(html.unescape(re.sub(r"<[^>]+>", "", markup)).split())


def other_id(table: dict, current: str, last: bool = False) -> str:
    """An id of the content's table other than the current one (skips the test when there is none)."""
    others = [i for i in table if i != current]
    if not others:
        pytest.skip(f"{CONTENT} offers one choice only ({current!r}): nothing to change to")
    return others[-1] if last else others[0]

TIMER = """() => {
  window.__timing = {};
  document.getElementById('controls').addEventListener('change', () => {
    window.__timing.changed = performance.now();
  }, true);
  new MutationObserver(() => {
    if (window.__timing.changed && !window.__timing.drawn) window.__timing.drawn = performance.now();
  }).observe(document.documentElement, {attributes: true, attributeFilter: ['data-shown']});
}"""

SNAPSHOT = """() => ({
  figures: [...document.querySelectorAll('.chart')].map(c => c.innerHTML),
  readout: document.getElementById('readout').textContent,
  captions: [...document.querySelectorAll('figcaption [data-selection]')].map(c => c.textContent),
})"""


def test_opens_offline_with_three_live_charts_and_no_requests(site, open_page):
    watched = open_page(site)
    page = watched.page
    assert page.evaluate("document.documentElement.dataset.ready") == "true"
    figures = page.locator("figure.figure").count()
    assert figures >= 3 and page.locator(".chart[data-live='true'] svg").count() == figures
    assert page.evaluate("typeof window.vega.View") == "function"
    assert page.evaluate("window.plate.views.length") == figures
    assert watched.outside_requests(site) == []
    assert watched.problems() == []


# Which figures are live, and which of them lie within half a viewport of the screen (where the page makes them).
LIVENESS = """() => [...document.querySelectorAll('figure.figure')].map((f) => {
  const box = f.getBoundingClientRect();
  const distance = box.bottom < 0 ? -box.bottom : Math.max(0, box.top - innerHeight);
  return {id: f.id, live: f.querySelector('.chart').dataset.live === 'true', near: distance <= innerHeight / 2};
})"""


@pytest.mark.parametrize("viewport", [{"width": 1100, "height": 900}, {"width": 412, "height": 823}])
def test_at_load_only_the_figures_near_the_screen_go_live_and_the_others_as_the_reader_scrolls(site, open_page,
                                                                                                viewport):
    page = open_page(site, all_live=False, viewport=viewport).page
    figures = page.evaluate(LIVENESS)
    assert [f["live"] for f in figures] == [f["near"] for f in figures]  # the static SVG is exact for the default
    assert page.evaluate("window.plate.views.length") == sum(f["near"] for f in figures)
    if not any(f["near"] for f in figures):  # nor has the Vega runtime run: it waits for the first view
        assert page.evaluate("typeof window.vega") == "undefined"
    far = [f["id"] for f in figures if not f["near"]]
    assert far, "every figure is near the top of the page: this test needs one below the fold"
    page.locator(f"#{far[-1]}").scroll_into_view_if_needed()
    wait_until(page, f"document.querySelector('#{far[-1]} .chart').dataset.live === 'true'")
    assert page.locator(f"#{far[-1]} .chart svg").count() == 1


def test_the_first_change_makes_every_figure_live_with_the_selection(site, open_page):
    c, _, d = shipped()
    model = other_id(c.presets.models, d.model)
    page = open_page(site, all_live=False).page
    assert not all(f["live"] for f in page.evaluate(LIVENESS))
    page.get_by_label("Model", exact=True).select_option(model)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown.startsWith('{model}|')")
    assert all(f["live"] for f in page.evaluate(LIVENESS))
    assert page.evaluate("window.plate.views.length") == page.locator("figure.figure").count()
    for caption in page.locator("figcaption [data-selection]").all_text_contents():
        assert c.presets.models[model].name in caption


def test_a_link_to_another_selection_opens_with_every_figure_live(site, open_page):
    c, _, d = shipped()
    model = other_id(c.presets.models, d.model)
    page = open_page(site, hash=f"#model={model}", all_live=False).page
    assert all(f["live"] for f in page.evaluate(LIVENESS))
    assert page.evaluate("document.documentElement.dataset.shown").startswith(f"{model}|")


# Each figure's SVG and caption, and whether any of it is in the viewport.
FIGURES = """() => [...document.querySelectorAll('figure.figure')].map((f) => {
  const box = f.getBoundingClientRect();
  return {id: f.id, svg: f.querySelector('.chart').innerHTML, caption: f.querySelector('[data-selection]').textContent,
          inView: box.bottom > 0 && box.top < innerHeight};
})"""
# Change the model, and keep the figures as they stand the moment <html> says the figures in view are drawn.
AT_DRAWN = """(model) => new Promise((resolve) => {
  const root = document.documentElement, before = root.dataset.drawn;
  const seen = new MutationObserver(() => {
    if (root.dataset.drawn === before) return;
    seen.disconnect();
    resolve([...document.querySelectorAll('figure.figure')].map((f) => f.querySelector('.chart').innerHTML));
  });
  seen.observe(root, {attributes: true, attributeFilter: ['data-drawn']});
  setTimeout(() => resolve(null), 5000); // never said
  const select = document.getElementById('choose-model');
  select.value = model;
  select.dispatchEvent(new Event('change', {bubbles: true}));
})"""


def other_model(page) -> str:
    """A model of the content other than the one shown (a change of model moves every figure)."""
    return page.evaluate("""() => [...document.getElementById('choose-model').options].map((o) => o.value)
      .find((v) => v !== 'custom' && v !== document.getElementById('choose-model').value)""") or \
        pytest.skip(f"{CONTENT} holds one model: no change moves every figure")


def in_view_and_out_of_sight(page) -> tuple[list[str], list[str]]:
    """With the controls scrolled into view, as a reader changing one has them: the figures in view, and those not."""
    page.evaluate("document.getElementById('controls').scrollIntoView()")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")  # observed
    figures = page.evaluate(FIGURES)
    seen, away = [f["id"] for f in figures if f["inView"]], [f["id"] for f in figures if not f["inView"]]
    assert seen and away, f"this test needs a figure in view and one out of sight below the controls: {figures}"
    return seen, away


def changed(site, open_page):
    """A page whose model changed with the controls in view: (page, ids of the figures in view, ids of those out of
    sight, every figure's SVG before the change, the selection now)."""
    page = open_page(site).page
    seen, away = in_view_and_out_of_sight(page)
    before = {f["id"]: f["svg"] for f in page.evaluate(FIGURES)}
    model = other_model(page)
    assert page.evaluate(AT_DRAWN, model) is not None
    c, atlas, d = shipped()
    return page, seen, away, before, replace(d, model=model)


def test_a_change_draws_the_figures_in_sight_and_the_others_wait_for_the_reader(site, open_page):
    page, seen, away, before, sel = changed(site, open_page)
    shown = page.evaluate("document.documentElement.dataset.shown")
    now = {f["id"]: f for f in page.evaluate(FIGURES)}
    for fid in seen:
        assert now[fid]["svg"] != before[fid], f"{fid}, in view, was not redrawn when the page said so"
    page.wait_for_timeout(300)  # time enough for any follow-up task of the change, idle time included
    now = {f["id"]: f for f in page.evaluate(FIGURES)}
    assert [now[fid]["svg"] == before[fid] for fid in away] == [True] * len(away), "out of sight, redrawn for nothing"
    assert page.evaluate("document.documentElement.dataset.shown") == shown  # not every figure shows it yet
    page.evaluate("() => window.plate.current().then(() => true)")
    assert page.evaluate("document.documentElement.dataset.shown") == xpage.selection_key(sel)
    after = page.evaluate(FIGURES)
    assert all(f["svg"] != before[f["id"]] for f in after), "a figure out of sight was not brought up to date"
    assert len({f["caption"] for f in after}) == 1


# Jump to a figure (a link, the End key, the scroll bar: no frame in between) and keep what the first frame that
# shows it paints.
JUMP = """(id) => new Promise((resolve) => {
  const figure = document.getElementById(id);
  figure.scrollIntoView();
  requestAnimationFrame(() => resolve([figure.querySelector('.chart').innerHTML,
                                       figure.querySelector('[data-selection]').textContent]));
})"""


def test_a_figure_out_of_sight_is_current_in_the_first_frame_that_shows_it(site, open_page):
    page, seen, away, before, sel = changed(site, open_page)
    svg, caption = page.evaluate(JUMP, away[-1])
    assert svg != before[away[-1]] and caption == page.evaluate(FIGURES)[0]["caption"]
    page.evaluate("() => window.plate.current().then(() => true)")
    assert page.evaluate(FIGURES)[[f["id"] for f in page.evaluate(FIGURES)].index(away[-1])]["svg"] == svg


def test_closing_the_disclosure_brings_the_figures_it_lifts_into_sight_before_they_are_painted(site, open_page):
    """The other controls' disclosure open, a change, then the disclosure closed: the figures that move up into sight
    are current in the first frame that shows them."""
    page, seen, away, before, sel = changed(site, open_page)
    toggle = page.locator("#more-toggle")
    if not toggle.count() or toggle.get_attribute("aria-expanded") != "true":
        pytest.skip("this plate has no open disclosure of other controls")
    lifted = page.evaluate("""() => new Promise((resolve) => {
      document.getElementById('more-toggle').click();
      requestAnimationFrame(() => resolve([...document.querySelectorAll('figure.figure')].filter((f) => {
        const box = f.getBoundingClientRect(); return box.bottom > 0 && box.top < innerHeight;
      }).map((f) => [f.id, f.querySelector('.chart').innerHTML])));
    })""")
    moved = [(fid, svg) for fid, svg in lifted if fid in away]
    assert moved, "closing the disclosure brought no figure into sight: this test needs one"
    assert all(svg != before[fid] for fid, svg in moved), [fid for fid, svg in moved if svg == before[fid]]


# Open a figure's "in words and numbers" by a click on its summary, and keep what the first frame after it paints.
OPENED = """(id) => {
  const details = document.getElementById(`${id}-data`);
  window.__opened = null;
  details.querySelector('summary').addEventListener('click', () => requestAnimationFrame(() => {
    window.__opened = {open: details.open, describe: details.querySelector('[data-describe]').textContent,
                       caption: details.querySelector('caption [data-selection]').textContent,
                       rows: [...details.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))};
  }), {once: true});
}"""
TABLE = """(id) => [...document.querySelectorAll(`#${id}-data tbody tr`)].map((tr) => [...tr.cells].map((c) => c.textContent))"""


@pytest.mark.parametrize("where", ["in view", "out of sight"])
def test_a_closed_in_words_and_numbers_is_current_when_it_is_opened(site, open_page, where):
    page, seen, away, before, sel = changed(site, open_page)
    c, atlas, d = shipped()
    fid = seen[0] if where == "in view" else away[-1]
    old, new = atlas.facts(d), atlas.facts(sel)
    assert xwords.table_rows(new, fid) != xwords.table_rows(old, fid), "this test needs a table the change moves"
    assert page.evaluate(TABLE, fid) == xwords.table_rows(old, fid)  # closed: it waits
    page.evaluate(OPENED, fid)
    page.locator(f"#{fid}-data summary").click()
    opened = wait_until(page, "window.__opened")
    assert opened["open"] and opened["rows"] == xwords.table_rows(new, fid)
    assert words(opened["describe"]) == words(xwords.describe(new, fid, plates())) and opened["caption"] == new.caption


def test_figures_and_closed_words_out_of_sight_are_current_in_print(site, open_page):
    page, seen, away, before, sel = changed(site, open_page)
    c, atlas, d = shipped()
    new = atlas.facts(sel)
    # Read after the page's own beforeprint listener and the microtasks it started (a listener added later runs later).
    page.evaluate("""() => addEventListener('beforeprint', () => {
      window.__printed = [...document.querySelectorAll('figure.figure')].map((f) => {
        const data = document.getElementById(`${f.id}-data`);
        return [f.id, f.querySelector('.chart').innerHTML, f.querySelector('[data-selection]').textContent,
                data.open, data.querySelector('[data-describe]').textContent,
                [...data.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))];
      });
    })""")
    page.pdf(format="A4")
    printed = page.evaluate("window.__printed")
    assert all(svg != before[fid] for fid, svg, *_ in printed), [fid for fid, svg, *_ in printed if svg == before[fid]]
    assert {caption for _, _, caption, *_ in printed} == {new.caption}
    for fid, _, _, is_open, describe, rows in printed:
        assert not is_open and rows == xwords.table_rows(new, fid), fid
        assert words(describe) == words(xwords.describe(new, fid, plates())), fid


def figure_data(f) -> dict:
    """What each figure is drawn from, in Python (charts.py): a figure redraws when this changes."""
    from generator.plate import charts
    # Fields the rows carry but no mark draws since the keys replaced the in-plot labels (the facts' label is
    # overwritten by the crossing's own words; the GPU's memory is named by the title): a change to them alone
    # leaves the figure as it was.
    facts_drawn = [{k: v for k, v in row.items() if k != "label"} for row in rows_of(f)["facts"]]
    memory_drawn = [{k: v for k, v in row.items() if k != "gpu_label"} for row in rows_of(f)["memory"]]
    lines = (rows_of(f)["grid"], facts_drawn)
    return {"fig-time": lines, "fig-efficiency": lines,
            "fig-timeline": (rows_of(f)["timeline"], rows_of(f)["timeline_facts"]), "fig-memory": memory_drawn}


@pytest.mark.parametrize("label, last", [(label, False) for label in CONTROLS] + [("GPU", True)])
def test_each_control_redraws_both_figures_and_the_readout(site, open_page, label, last):
    """Each control changed to another of its choices (for the GPU, the first and the last other): the figures whose
    data change redraw, the others stay, and the readout and captions are Python's for the new selection."""
    c, atlas, d = shipped()
    key = CONTROLS[label]
    choices = {"model": c.presets.models, "batch": c.presets.batches, "network": c.presets.networks,
               "gpu": c.presets.gpus, **facts.OPTIONS}[key]
    sel = replace(d, **{key: other_id(choices, getattr(d, key), last)})
    old, new = atlas.facts(d), atlas.facts(sel)
    watched = open_page(site)
    page = watched.page
    before = page.evaluate(SNAPSHOT)
    page.evaluate(TIMER)
    page.get_by_label(label, exact=True).select_option(getattr(sel, key))
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(sel)}'")
    after = page.evaluate(SNAPSHOT)
    timing = page.evaluate("window.__timing")
    # Drawn in answer to this change (how fast is the benchmark's figure, not a unit test's: a loaded CI machine
    # would make a time limit fail for nothing).
    assert timing["drawn"] >= timing["changed"] > 0, timing
    ids = page.evaluate("() => [...document.querySelectorAll('figure.figure')].map((f) => f.id)")
    moved, kept = figure_data(new), figure_data(old)
    assert set(ids) == set(moved)
    for fid, a, b in zip(ids, after["figures"], before["figures"]):
        moves = moved[fid] != kept[fid]  # e.g. the memory figure follows neither the batch nor the network
        assert (a != b) == moves, f"{fid} {'did not redraw' if moves else 'redrew for nothing'}"
    assert words(after["readout"]) == words(xwords.readout(new, plates())) != words(before["readout"])
    assert after["captions"] != before["captions"] and new.caption in after["captions"][0]
    assert watched.outside_requests(site) == []
    assert watched.problems() == []


def test_url_keeps_and_restores_the_selection(site, open_page):
    c, atlas, d = shipped()
    p = c.presets
    sel = replace(d, model=other_id(p.models, d.model, last=True), batch=other_id(p.batches, d.batch, last=True),
                  network=other_id(p.networks, d.network, last=True))
    key = xpage.selection_key(sel)
    watched = open_page(site)
    page = watched.page
    page.get_by_label("Model", exact=True).select_option(label=p.models[sel.model].name)
    page.get_by_label("Global batch", exact=True).select_option(label=p.batches[sel.batch].name)
    page.get_by_label("Network", exact=True).select_option(label=p.networks[sel.network].short)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{key}'")
    wait_until(page, f"location.hash.includes('network={sel.network}')")  # the URL is written after the redraw's paint
    url = page.url
    assert url.endswith("#" + "&".join(f"{k}={getattr(sel, k)}" for k in facts.KEYS))
    reopened = open_page(site, hash="#" + url.split("#", 1)[1]).page
    assert reopened.evaluate("document.documentElement.dataset.shown") == key
    for label, value in (("Model", sel.model), ("Global batch", sel.batch), ("Network", sel.network)):
        assert reopened.get_by_label(label, exact=True).input_value() == value
    f = atlas.facts(sel)
    assert f.caption in reopened.locator("#fig-time figcaption").text_content()
    assert words(reopened.locator("#readout").text_content()) == words(xwords.readout(f, plates()))


def test_the_url_is_written_when_the_controls_rest_or_at_once_when_the_reader_leaves_the_window(site, open_page):
    c, _, d = shipped()
    model, batch = other_id(c.presets.models, d.model), other_id(c.presets.batches, d.batch, last=True)
    page = open_page(site).page
    page.get_by_label("Model", exact=True).select_option(model)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown.startsWith('{model}|')")
    wait_until(page, f"location.hash.includes('model={model}')")  # once the controls have rested
    page.get_by_label("Global batch", exact=True).select_option(batch)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown.startsWith('{model}|{batch}|')")
    # Leaving the window (for the address bar, to copy the link) writes it at once, not after the rest.
    assert page.evaluate("() => { window.dispatchEvent(new Event('blur')); return location.hash; }").startswith(
        f"#model={model}&batch={batch}&")


def test_unknown_ids_in_the_url_fall_back_to_the_default_and_the_page_says_so(site, open_page):
    """A link naming ids the page does not have opens on the default for those, says so in one polite line near
    the controls, and gets the URL of what it shows; the line goes when the reader chooses."""
    c, _, d = shipped()
    unknown = next(f"{c.plate.default.model}-{'x' * n}" for n in range(1, 99) if f"{c.plate.default.model}-{'x' * n}"
                   not in c.presets.models)  # an id no model has
    watched = open_page(site, hash=f"#model={unknown}&batch={d.batch}&network=<script>")
    page = watched.page
    assert page.evaluate("document.documentElement.dataset.shown") == xpage.selection_key(d)
    note = page.locator("#link-note")
    assert note.is_visible() and note.get_attribute("role") == "status"
    model, network = (page.locator(f"#choose-{k} option:checked").text_content() for k in ("model", "network"))
    assert note.text_content() == (f'The link named model "{unknown}" and network "<script>", which this page does '
                                   f"not have; showing the defaults, {model} and {network}.")
    assert page.evaluate("location.hash") == "#" + "&".join(f"{k}={getattr(d, k)}" for k in facts.KEYS)
    page.get_by_label("Model", exact=True).select_option(other_id(c.presets.models, d.model))
    wait_until(page, "document.getElementById('link-note').hidden")
    # A link followed within the page just after a choice, while the choice's URL still waits to be written (the
    # window's blur writes it at once, before the link's hashchange runs): the link wins, not the stale choice.
    page.evaluate("""([model, hash]) => {
      const select = document.getElementById('choose-model');
      select.value = model;
      select.dispatchEvent(new Event('change', {bubbles: true}));
      location.hash = hash;
      dispatchEvent(new Event('blur'));
    }""", [other_id(c.presets.models, d.model, last=True), f"#model={unknown}"])
    wait_until(page, "!document.getElementById('link-note').hidden")
    assert note.text_content() == (f'The link named model "{unknown}", which this page does not have; showing the '
                                   f"default, {model}.")
    wait_until(page, f"location.hash.startsWith('#model={d.model}&')")
    assert watched.problems() == []


def test_options_are_kept_in_the_url_and_restored(site, open_page):
    c, atlas, d = shipped()
    sel = replace(d, gpu=other_id(c.presets.gpus, d.gpu), overlap="backward", precision="fp32", topology="nodes")
    page = open_page(site).page
    for label, value in (("GPU", sel.gpu), ("All-reduce hides behind", "backward"), ("Gradient precision", "fp32"),
                         ("Ring layout", "nodes")):
        page.get_by_label(label, exact=True).select_option(value)
    shown = xpage.selection_key(sel)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{shown}'")
    readout = page.locator("#readout").text_content()
    wait_until(page, "location.hash.includes('topology=nodes')")  # the URL is written after the redraw's paint
    url = page.url
    assert f"gpu={sel.gpu}&overlap=backward&precision=fp32&topology=nodes" in url
    reopened = open_page(site, hash="#" + url.split("#", 1)[1]).page
    assert reopened.evaluate("document.documentElement.dataset.shown") == shown
    for label, value in (("GPU", sel.gpu), ("All-reduce hides behind", "backward"), ("Gradient precision", "fp32"),
                         ("Ring layout", "nodes")):
        assert reopened.get_by_label(label, exact=True).input_value() == value
    assert reopened.locator("#readout").text_content() == readout
    caption = reopened.locator("#fig-time figcaption").text_content()
    assert f"{c.presets.gpus[sel.gpu].name} · backward-only overlap · FP32 gradients · hierarchical on 8-GPU nodes" \
        in caption


# The shading past the GPU's own link's largest domain: drawn in the plot (Vega's rect mark "hypothetical"), named
# by Figure 1's key below it, not by words in the plot.
SHADED = "document.querySelectorAll('#fig-time .chart svg .hypothetical_marks path').length"
KEY_ENTRIES = "[...document.querySelectorAll('#fig-time li:has(> .key-mark) > span')].map((s) => s.textContent)"


def test_nvlink_domain_shading_appears_only_past_the_domain(site, open_page):
    c, atlas, d = shipped()
    p = c.presets
    nvlink = [n for n in p.networks.values() if n.nvlink]
    bounded = [g for g in p.gpus.values() if g.nvlink_domain and g.nvlink_domain < p.workshop.max_replicas]
    flat = [n for n in p.networks.values() if not n.nvlink]
    if not (nvlink and bounded and flat):
        pytest.skip(f"{CONTENT} has no NVLink network, no GPU whose NVLink domain ends on the grid, or no other network")
    page = open_page(site).page
    assert f"beyond one real {p.gpu.interconnect} domain: hypothetical" in page.evaluate(KEY_ENTRIES)
    steps = [replace(d, network=nvlink[0].id, gpu=g.id) for g in (bounded[0], bounded[-1])] + \
        [replace(d, network=flat[0].id, gpu=bounded[-1].id)]
    if d.network == flat[0].id and d.gpu == bounded[-1].id:
        steps.pop()  # the page opened there
    assert (page.evaluate(SHADED) > 0) == (atlas.facts(d).hypothetical_from is not None)
    for sel in steps:
        page.get_by_label("Network", exact=True).select_option(sel.network)
        page.get_by_label("GPU", exact=True).select_option(sel.gpu)
        current(page)  # what waits out of sight too
        wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(sel)}'")
        f = atlas.facts(sel)
        readout = page.locator("#readout").text_content()
        if f.network.nvlink:
            assert page.evaluate(SHADED) > 0
            assert f"NVLink joins at most {f.gpu.nvlink_domain:,} {f.gpu.name} GPUs" in readout
        else:
            assert page.evaluate(SHADED) == 0 and "NVLink joins" not in readout
        assert words(readout) == words(xwords.readout(f, plates()))


@pytest.mark.parametrize("which", ["smallest", "largest"])  # the content's smallest and largest models: labels differ
def test_plots_against_replicas_line_up(site, open_page, which):
    """The figures drawn against replicas share their y-axis room (charts.theme's axisY minExtent), so their plots
    start at the same x, one above the other, and a change whose labels fit that room needs no second layout pass."""
    models = sorted(content.load(CONTENT).presets.models.values(), key=lambda m: m.params)
    model = (models[0] if which == "smallest" else models[-1]).id
    page = open_page(site, hash=f"#model={model}").page
    title = "data-parallel replicas"  # xfigures._x
    origins = page.evaluate("""(title) => window.plate.views.map((view, i) => [
        document.querySelectorAll('figure.figure')[i].id,
        [...document.querySelectorAll('figure.figure')[i].querySelectorAll('.role-axis-title text')]
          .some((t) => t.textContent === title),
        view.origin()[0]])""", title)
    against = {fid: x for fid, replicas, x in origins if replicas}
    assert len(against) >= 2, origins
    assert len(set(against.values())) == 1, against


def test_the_timeline_follows_the_controls(site, open_page):
    page = open_page(site).page
    tail = "[...document.querySelectorAll('#fig-timeline .chart svg text')].map(t => t.textContent)" \
        ".find(t => t.includes('exposed tail'))"
    before = page.evaluate(tail)
    page.get_by_label("All-reduce hides behind", exact=True).select_option(label="backward pass only")
    current(page)  # what waits out of sight too
    wait_until(page, "document.documentElement.dataset.shown.includes('|backward|')")
    after = page.evaluate(tail)
    assert before and after and before != after
    _, atlas, d = shipped()
    replicas = atlas.facts(replace(d, overlap="backward")).timeline_replicas
    assert f"one step on each of {replicas:,} replicas" in page.locator("#fig-timeline .chart").inner_html()



CHANGE = """async (values) => {
  const root = document.documentElement, before = root.dataset.shown;
  let changed = false;
  for (const [id, value] of values) {
    const select = document.getElementById(id);
    if (select.value !== value) { select.value = value; changed = true; }
  }
  if (!changed) return;
  document.getElementById('controls').dispatchEvent(new Event('change'));
  window.plate.current(); // what waits out of sight too
  while (root.dataset.shown === before) await new Promise(requestAnimationFrame);
}"""
# Each view's data sets the page feeds, as JSON; the texts its marks write (axis labels aside: their number
# follows the plot's width); and how many of its axes' texts stick out of the figure's SVG.
DRAWN = """() => {
  const names = Object.keys(window.plate.datasets); // every dataset the page feeds (the plate's DATASETS)
  const data = window.plate.views.map((view) => names.map((name) => {
    try { return JSON.stringify(view.data(name)); } catch (e) { return null; } // not a data set of this view
  }));
  const charts = [...document.querySelectorAll('.chart svg')];
  const texts = charts.map((svg) => [...svg.querySelectorAll('.role-mark text')].map((t) => t.textContent).sort());
  const outside = charts.map((svg) => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('.role-axis text')].map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0 &&
      (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5))
      .length;
  });
  return {data, texts, outside};
}"""


def test_a_walk_of_changes_draws_what_opening_each_selection_draws(site, open_page):
    """Redraws update the views' data in place: after each change every view holds the rows, and its marks the
    texts, of the page opened at that selection, and no axis text sticks out of its figure (the room follows)."""
    page = open_page(site).page
    controls = page.evaluate("""() => [...document.querySelectorAll('#controls select')].map((s) =>
      [s.id, s.name, [...s.options].map((o) => o.value).filter((v) => v !== 'custom')])""")
    ids = page.evaluate("[...document.querySelectorAll('.figure')].map((f) => f.id)")
    rng = random.Random(12)
    for _ in range(5):
        chosen = [(select, name, rng.choice(values)) for select, name, values in controls]
        page.evaluate(CHANGE, [[select, value] for select, _, value in chosen])
        fresh = open_page(site, hash="#" + "&".join(f"{name}={value}" for _, name, value in chosen)).page
        assert fresh.evaluate("document.documentElement.dataset.shown") == \
            page.evaluate("document.documentElement.dataset.shown")
        walked, opened = page.evaluate(DRAWN), fresh.evaluate(DRAWN)
        for i, figure in enumerate(ids):
            assert walked["data"][i] == opened["data"][i], f"{figure}'s data after a change is not {chosen}'s"
            assert walked["texts"][i] == opened["texts"][i], f"{figure}'s texts after a change are not {chosen}'s"
        assert walked["outside"] == [0] * len(ids), f"axis texts stick out of the figures after changing to {chosen}"
        assert opened["outside"] == [0] * len(ids), f"axis texts stick out of the figures opened at {chosen}"
        fresh.context.close()


CSP_WATCH = """() => { window.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective)); }"""


def test_one_click_saves_the_shown_selections_csv_offline(site, open_page):
    """The button beside the data link saves the numbers of the selection shown, made in the page (a Blob: no
    request, within the page's CSP), and follows the controls."""
    import csv
    import io
    from test_engine import assert_csv_is_pythons
    c, atlas, d = shipped()
    watched = open_page(site)
    page = watched.page
    page.evaluate(CSP_WATCH)
    button = page.locator("#download-selection")
    stem = c.plate.data_file.removesuffix(".csv")
    for sel in (d, replace(d, model=other_id(c.presets.models, d.model), sharding="zero3", overlap="backward")):
        for label, key in CONTROLS.items():
            page.get_by_label(label, exact=True).select_option(getattr(sel, key))
        current(page)  # what waits out of sight too
        wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(sel)}'")
        with page.expect_download() as caught:
            button.click()
        saved = caught.value
        assert saved.suggested_filename == f"{stem}-{'-'.join(getattr(sel, k) for k in facts.KEYS)}.csv"
        assert saved.url.startswith("blob:")
        written = list(csv.reader(io.StringIO(open(saved.path(), encoding="utf-8").read())))
        assert written[0] == [name for name in selection_rows(atlas.facts(sel))[0]]
        assert_csv_is_pythons(written[1:], atlas.facts(sel), xpage.selection_key(sel))
    assert watched.outside_requests(site) == [] and page.evaluate("window.__violations") == []


def test_the_real_clusters_controls_redraw_its_line_and_are_kept_in_the_url(site, open_page):
    """Issue 22: bucket_cap_mb and micro-batches are labelled selects a keyboard works; they redraw the real
    cluster's line in Figures 1 and 2 as Python computes it, and go into the URL (only when not DDP's defaults)."""
    from numpy.testing import assert_allclose
    from generator.plate import charts
    _, atlas, d = shipped()
    watched = open_page(site)
    page = watched.page
    page.get_by_label("Bucket size", exact=True).select_option("500")
    page.focus("#choose-micro")
    page.keyboard.press("ArrowDown")  # the next choice: 2 micro-batches
    sel = replace(d, bucket="500", micro="2")
    key = xpage.selection_key(sel)
    assert key.endswith("&bucket=500&micro=2")
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{key}'")
    wait_until(page, "location.hash.includes('micro=2')")
    assert page.url.endswith("&bucket=500&micro=2")
    expected = rows_of(atlas.facts(sel))["grid"]
    assert expected != rows_of(atlas.facts(d))["grid"]
    for figure in (0, 1):
        drawn = page.evaluate(f"() => window.plate.views[{figure}].data('grid')")
        for name in ("cluster_s", "cluster_efficiency"):
            assert_allclose([r[name] for r in drawn], [r[name] for r in expected], rtol=1e-12, err_msg=name)
    reopened = open_page(site, hash="#" + page.url.split("#", 1)[1]).page
    assert reopened.evaluate("document.documentElement.dataset.shown") == key
    assert reopened.locator("#choose-bucket").input_value() == "500"
    assert reopened.locator("#choose-micro").input_value() == "2"
    assert atlas.facts(sel).caption in reopened.locator("#fig-time figcaption").text_content()
    # back to DDP's defaults: the URL names neither
    page.get_by_label("Bucket size", exact=True).select_option("default")
    page.get_by_label("Micro-batches per step", exact=True).select_option("1")
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(d)}'")
    wait_until(page, "!location.hash.includes('micro=')")
    assert "bucket=" not in page.url
    assert watched.problems() == []


def test_a_page_printed_before_any_change_or_view_prints_without_a_complaint(site, open_page):
    """Printing brings what a change left for later; before any change (no view made yet, the page as built shows the
    default) there is nothing to bring, and nothing fails."""
    watched = open_page(site, all_live=False, viewport={"width": 1100, "height": 200})  # no figure near: no view
    page = watched.page
    assert page.evaluate("window.plate.views.length") == 0
    page.pdf(format="A4")
    page.evaluate("() => window.plate.current().then(() => true)")
    assert watched.problems() == []
