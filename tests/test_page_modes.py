"""The plate in every way it is read, in Chromium: offline through every control, without JavaScript, under its
own strict CSP, in dark and light mode (figures too), on a 360 px phone, and its terms by hover, focus and tap."""
import random
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from markupsafe import escape

from conftest import CONTENT, current, default_caption, wait_until
from generator.source import content
from generator.page import render
from generator.page.notation import num, seconds
from xiv4 import facts, xpresets, xpage, xwords


def other_selection(c, last=True) -> xpresets.Selection:
    """The content's default selection with its model, batch and network each swapped for another where there is
    one (the last of each table, or the first other), every option at the workshop's."""
    atlas = facts.Atlas(c.presets)
    d = atlas.complete(c.plate.default)
    def other(table, current):
        others = [i for i in table if i != current]
        return (others[-1] if last else others[0]) if others else current
    return atlas.complete(xpresets.Selection(other(c.presets.models, d.model), other(c.presets.batches, d.batch),
                                            other(c.presets.networks, d.network)))

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


# --- offline and self-contained ------------------------------------------------------------------

# Each option in turn, until every figure shows it (those out of sight brought at once); a second at most,
# for options that draw nothing by themselves ("Custom…" before a value is typed); two frames for the option already
# chosen (each control's first), which changes nothing to wait for.
EVERY_OPTION = """async () => {
  const seen = [], root = document.documentElement;
  for (const select of document.querySelectorAll('#controls select')) {
    for (const option of [...select.options]) {
      const before = root.dataset.shown, t0 = performance.now(), same = select.value === option.value;
      select.value = option.value;
      select.dispatchEvent(new Event('change', {bubbles: true}));
      window.plate.current(); // what waits out of sight too
      for (let frames = 0; root.dataset.shown === before && (same ? frames < 2 : performance.now() - t0 < 1000);
        frames += 1) await new Promise(requestAnimationFrame);
      seen.push(root.dataset.shown);
    }
  }
  return seen;
}"""


def test_no_request_leaves_the_page_through_every_control_and_no_console_complaint(site, open_page):
    watched = open_page(site)
    page = watched.page
    shown = page.evaluate(EVERY_OPTION)
    assert len(set(shown)) >= 6
    for summary in page.locator("summary").all():
        summary.click()
    for term in page.locator("a.term").all():
        term.hover()
    page.locator("a.term").first.click()
    page.locator("sup.cite a").first.click()
    page.keyboard.press("Tab")
    widths = page.evaluate("() => window.plate.views.map(v => v.width())")
    page.set_viewport_size({"width": 360, "height": 740})  # the figures redraw at a new width
    page.wait_for_function("(before) => window.plate.views.every((v, i) => v.width() !== before[i])", arg=widths)
    # The redraw is done once every view has run.
    page.evaluate("() => Promise.all(window.plate.views.map(v => v.runAsync())).then(() => true)")
    assert watched.outside_requests(site) == []
    assert watched.problems() == []


class _Refs(HTMLParser):
    """Every URL the page would fetch by itself (not links a reader follows)."""

    def __init__(self):
        super().__init__()
        self.fetched: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "srcset", "poster", "data", "background") or (tag == "link" and name == "href"):
                self.fetched.append(f"{tag} {name}={value}")


def test_page_fetches_nothing_by_itself(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    refs = _Refs()
    refs.feed(html)
    assert refs.fetched == []
    style = "".join(re.findall(r"<style>(.*?)</style>", html, re.S))
    assert "url(" not in style and "@import" not in style


# --- without JavaScript --------------------------------------------------------------------------

def test_without_javascript_text_static_figures_and_tables_are_there(site, open_page):
    c = content.load(CONTENT)
    f = facts.Atlas(c.presets).facts(c.plate.default)
    crossing = f.crossing_replicas
    page = open_page(site, wait_ready=False, java_script_enabled=False).page
    text = page.locator("body").inner_text()
    assert "loading" not in text.lower()
    headings = re.findall(r"(?m)^## (.+)$", c.plate.before_figures.text + c.plate.after_figures.text)
    readout = (f"{num(crossing)} is the first power of two past it" if crossing else
               f"compute alone: {seconds(f.at(f.max_replicas).step_s)} on {num(f.max_replicas)} replicas")
    for needle in (c.plate.title, c.plate.deck, c.plate.takeaway, *headings, readout, default_caption(c)):
        assert needle.lower() in text.lower(), needle
    for term in c.terms.values():
        assert term.definition in text
    for source in c.sources.values():
        assert source.title in text
    figure_ids = page.evaluate("() => [...document.querySelectorAll('figure.figure')].map((f) => f.id)")
    assert "fig-memory" in figure_ids  # every figure, the memory figure included, has its static SVG
    assert page.locator(".chart > svg").count() == len(figure_ids)  # the static figures of the default selection
    assert page.locator(".chart svg text", has_text="first crossed: ").count() == (2 if crossing else 0)
    if crossing:
        assert page.locator(".chart svg text", has_text=f"first crossed: {num(crossing)}").count() == 2
    assert not [c for c in page.locator("#controls .control").all() if c.is_visible()]  # none that cannot work
    assert page.locator("#more").is_visible()  # the workshop's assumptions they fold in with
    for summary in page.locator("summary").all():
        summary.click()  # <details> opens without script
    for fid in figure_ids:
        table = page.locator(f"#{fid}-data table")
        # one row per replica count of the grid; the timeline's table has one per phase of its step
        default = facts.Atlas(c.presets).facts(c.plate.default)
        rows = len(xwords.table_rows(default, "fig-timeline")) if fid == "fig-timeline" \
            else c.presets.workshop.max_replicas.bit_length()
        assert table.is_visible() and table.locator("tbody tr").count() == rows
    if crossing:  # the grid's crossing row: compute, the all-reduce, then the real cluster's, at that many replicas
        assert page.locator("#fig-time-data tbody tr", has_text=f"{num(crossing)} (crossed)").inner_text().split(
            "\t")[1:] == [seconds(f.at(crossing).compute_s), seconds(f.at(crossing).comm_s),
                          seconds(f.cluster_at(crossing)["comm_s"])]
    assert page.locator("[aria-busy='true']").count() == 0


# --- strict Content-Security-Policy --------------------------------------------------------------

def _policy(html: str) -> dict[str, list[str]]:
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
    return {d.split()[0]: d.split()[1:] for d in (p.strip() for p in meta.split(";")) if d}


def test_policy_is_strict(site):
    policy = _policy((site / "index.html").read_text(encoding="utf-8"))
    assert policy["default-src"] == ["'none'"]
    for directive in ("script-src", "style-src"):
        assert policy[directive] and all(re.fullmatch(r"'sha256-[A-Za-z0-9+/]+=*'", s) for s in policy[directive])
    flat = " ".join(" ".join(v) for v in policy.values())
    assert "unsafe" not in flat and "*" not in flat and "http" not in flat and "nonce" not in flat
    assert policy["base-uri"] == ["'none'"] and policy["form-action"] == ["'none'"]


VIOLATIONS = """window.__violations = [];
document.addEventListener('securitypolicyviolation',
  e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"""


def test_under_the_csp_charts_draw_controls_work_and_nothing_is_blocked(browser, site):
    context = browser.new_context(offline=True, viewport={"width": 1100, "height": 900})  # CSP enforced
    context.add_init_script(VIOLATIONS)
    page = context.new_page()
    problems = []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto((site / "index.html").resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready")
    assert page.evaluate("document.documentElement.dataset.ready") == "true"
    page.evaluate("() => window.plate.live().then(() => true)")  # the figures below the fold too
    assert page.locator(".chart[data-live='true'] svg").count() == page.locator("figure.figure").count() >= 3
    c = content.load(CONTENT)
    sel = other_selection(c)
    page.get_by_label("Model", exact=True).select_option(sel.model)
    page.get_by_label("Global batch", exact=True).select_option(sel.batch)
    page.get_by_label("Network", exact=True).select_option(sel.network)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(sel)}'")
    caption = facts.Atlas(c.presets).facts(sel).caption
    assert caption in page.locator("#fig-efficiency figcaption").text_content()
    page.locator("a.term:visible").first.hover()  # not one in the closed disclosure
    assert page.locator(".term-tip").is_visible()
    assert page.evaluate("window.__violations") == [] and problems == []
    # The policy is in force: code from a string and an injected inline script are refused.
    page.evaluate("""() => { setTimeout('window.__ran = 1', 0);
                             const s = document.createElement('script'); s.textContent = 'window.__ran = 2';
                             document.body.append(s); }""")
    wait_until(page, "window.__violations.length >= 2")
    assert page.evaluate("window.__ran") is None
    assert {v.split()[0] for v in page.evaluate("window.__violations")} <= {"script-src", "script-src-elem"}
    context.close()


# --- dark and light mode, figures included -------------------------------------------------------

CHART_COLOURS = """() => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const paper = rgb(getComputedStyle(document.documentElement).backgroundColor);
  const band = document.querySelector('#fig-time .band_marks path');
  const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const texts = [...document.querySelectorAll('.chart svg text')].filter(t => t.textContent.trim())
    .map(t => ({text: t.textContent, fill: rgb(getComputedStyle(t).fill),
                onBand: [...t.closest('svg').querySelectorAll('.band_marks path')]
                  .some(b => overlaps(b.getBoundingClientRect(), t.getBoundingClientRect()))}));
  const lines = [...document.querySelectorAll('.chart .series_marks path, .chart .efficiency_marks path, .chart .rule_marks line, .chart .states_marks path, .chart .gpu_memory_marks line')]
    .map(p => ({cls: p.parentNode.className.baseVal, stroke: rgb(getComputedStyle(p).stroke)}));
  return {paper, band: rgb(getComputedStyle(band).fill), bandOpacity: parseFloat(band.getAttribute('fill-opacity') || band.getAttribute('opacity') || 1), texts, lines,
          ink: rgb(getComputedStyle(document.body).color)};
}"""


def _luminance(rgb):
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a, b):
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_page_and_figures_follow_the_colour_scheme_with_aa_contrast(site, open_page, scheme):
    page = open_page(site, color_scheme=scheme).page
    got = page.evaluate(CHART_COLOURS)
    paper = got["paper"]
    assert (_luminance(paper) < 0.05) == (scheme == "dark"), paper
    assert _contrast(got["ink"], paper) >= 7
    # Text on the shaded band must read on the band's shade.
    a = got["bandOpacity"]
    shaded = [round(p * (1 - a) + b * a) for p, b in zip(paper, got["band"])]
    # (no word need sit on the shading: the key names it since issue 32; any that does is held to the band's ground)
    assert got["texts"] and got["lines"]
    for text in got["texts"]:
        ground = shaded if text["onBand"] else paper
        assert _contrast(text["fill"], ground) >= 4.5, (scheme, text, ground)
    for line in got["lines"]:
        assert _contrast(line["stroke"], paper) >= 3, (scheme, line)


# --- phone ---------------------------------------------------------------------------------------

def test_on_a_360px_phone_nothing_scrolls_sideways_figures_fit_and_controls_take_a_thumb(site, open_page):
    page = open_page(site, **PHONE).page
    for summary in page.locator("summary").all():
        summary.tap()
    width = page.evaluate("document.documentElement.clientWidth")
    assert width == 360
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for svg in page.locator(".chart svg").all():
        box = svg.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width and box["width"] >= 280
    # Legible: chart text drawn at 10 CSS px or more once the figure is scaled to the screen.
    smallest = page.evaluate("""() => Math.min(...[...document.querySelectorAll('.chart svg text')]
      .filter(t => t.textContent.trim()).map(t => t.getBoundingClientRect().height))""")
    assert smallest >= 10
    for select in page.locator("#controls select").all():
        select.evaluate("(el) => el.scrollIntoView({block: 'nearest', inline: 'nearest'})")  # the bar scrolls sideways
        box = select.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= width
    for summary in page.locator("summary").all():
        assert summary.bounding_box()["height"] >= 44
    c = content.load(CONTENT)
    d = facts.Atlas(c.presets).complete(c.plate.default)
    batch = [b for b in c.presets.batches if b != d.batch][-1:] or pytest.skip(f"{CONTENT} offers one batch")
    page.locator("#choose-batch").tap()
    page.locator("#choose-batch").select_option(batch[0])
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(replace(d, batch=batch[0]))}'")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# Every plot at least half its figure's width, and every text drawn inside its figure, for each selection given.
PLOTS_FIT = """async (selections) => {
  const bad = [];
  for (const sel of selections) {
    await window.plate.show(sel);
    window.plate.views.forEach((view, i) => {
      const svg = document.querySelectorAll('.chart svg')[i], box = svg.getBoundingClientRect();
      if (view.width() < box.width / 2) bad.push([sel, i, 'plot ' + view.width() + ' px of ' + box.width]);
      for (const t of svg.querySelectorAll('text')) {
        if (!t.textContent.trim() || t.closest('[opacity="0"]') || t.getAttribute('opacity') === '0') continue;
        const r = t.getBoundingClientRect();
        if (r.left < box.left - 1 || r.right > box.right + 1) bad.push([sel, i, t.textContent]);
      }
    });
  }
  return bad;
}"""


def test_on_a_phone_every_selection_keeps_its_plots_wide_and_its_words_inside(site, open_page):
    """Words hidden on a narrow figure (the selection drawn into it, say) must not take room: Vega fits the plot
    to every mark's extent, drawn or not, and a long caption once squeezed a phone's plot to nothing."""
    page = open_page(site, **PHONE).page
    choices = page.evaluate("() => JSON.parse(document.getElementById('plate-data').textContent).choices")
    presets = {k: [v for v in values if v != "custom"] for k, values in choices.items()}
    longest = {k: values[-1] for k, values in presets.items()}  # the last of each: long names, all options on
    rng = random.Random(12)
    selections = [longest] + [{k: rng.choice(v) for k, v in presets.items()} for _ in range(30)]
    assert page.evaluate(PLOTS_FIT, selections) == []


# --- terms ---------------------------------------------------------------------------------------

def test_every_term_is_linked_once_from_the_prose_to_its_definition(site):
    c = content.load(CONTENT)
    html = (site / "index.html").read_text(encoding="utf-8")
    for term in c.terms.values():
        links = re.findall(rf'<a class="term" href="#term-{term.id}" aria-describedby="def-{term.id}">', html)
        assert len(links) == 1, term.id
        assert f'<dd id="def-{term.id}">{escape(term.definition)}</dd>' in html


def test_definition_shows_on_hover_and_on_focus_and_escape_hides_it(site, open_page):
    c = content.load(CONTENT)
    page = open_page(site).page
    tip = page.locator(".term-tip")
    link = page.locator("a.term").nth(1)
    term_id = link.get_attribute("href").removeprefix("#term-")
    link.hover()
    tip.wait_for(state="visible")
    assert tip.text_content() == c.terms[term_id].definition
    page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    link.focus()
    tip.wait_for(state="visible")
    assert tip.text_content() == c.terms[term_id].definition
    tip_box, link_box = tip.bounding_box(), link.bounding_box()
    assert tip_box["y"] >= link_box["y"] + link_box["height"] - 1  # beside the term, not over it
    page.keyboard.press("Escape")
    tip.wait_for(state="hidden")


def test_a_tap_shows_the_definition_and_a_second_tap_opens_the_glossary_entry(site, open_page):
    c = content.load(CONTENT)
    sel = other_selection(c, last=False)
    page = open_page(site, hash=f"#model={sel.model}&batch={sel.batch}&network={sel.network}", **PHONE).page
    link = page.locator("a.term").first
    term_id = link.get_attribute("href").removeprefix("#term-")
    link.tap()
    tip = page.locator(".term-tip")
    tip.wait_for(state="visible")
    assert tip.text_content() == c.terms[term_id].definition
    box = tip.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 360
    # Registered after the page's own listener, so it runs after it: a sign the page has handled the change.
    page.evaluate("() => addEventListener('hashchange', () => { window.hashHandled = true; })")
    link.tap()
    wait_until(page, f"location.hash === '#term-{term_id}' && window.hashHandled")
    assert page.evaluate("document.querySelector(':target').id") == f"term-{term_id}"
    # Following a term link does not reset the reader's selection (nor start redrawing another one).
    page.evaluate("() => Promise.all(window.plate.views.map(v => v.runAsync())).then(() => true)")
    assert page.evaluate("document.documentElement.dataset.shown") == xpage.selection_key(sel)
    assert [page.locator(f"#choose-{k}").input_value() for k in ("model", "batch", "network")] == \
        [sel.model, sel.batch, sel.network]
