"""Figure first (issue 32): on every plate of the series, at 1440×900 and on a 390×844 phone, light and dark, the
title, the plate's question, a live Figure 1 and the controls the plate declares first are on the first screen
without scrolling; the other controls and the workshop's assumptions fold into one disclosure, open without
JavaScript and on paper, whose controls still change the figures and the URL; no select cuts an option's text."""
from __future__ import annotations

import re

import pytest

from conftest import SERIES, current, open_disclosure, wait_until
from generator.source import content

pytestmark = pytest.mark.browser

DESK = {"viewport": {"width": 1440, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SCREENS = {"desk": DESK, "phone": PHONE}


def written_plates() -> list[content.Content]:
    """Every plate of the shipped series, as its content declares it."""
    return [content.load(folder) for folder in sorted(SERIES.iterdir()) if (folder / "plate.md").is_file()]


PLATES = written_plates()


def page_of(site, plate) -> str:
    """The built page (file name) whose title is the plate's."""
    for page in sorted(site.glob("*.html")):
        head = re.search(r"<h1>(.*?)</h1>", page.read_text(encoding="utf-8"), re.S)
        if head and head.group(1).strip() == plate.title and 'id="plate-data"' in page.read_text(encoding="utf-8"):
            return page.name
    raise AssertionError(f"no page of the built series has the title {plate.title!r}")


def first_keys(c: content.Content, page) -> list[str]:
    """The keys of the controls the plate declares first: its front matter's first_controls, else the page's
    first three controls (render.FIRST_CONTROLS), read from the page data's keys in the page's order."""
    if c.plate.first_controls:
        return list(c.plate.first_controls)
    ids = page.evaluate("[...document.querySelectorAll('#controls select')].map((s) => s.name)")
    return ids[:3]


@pytest.fixture
def opened(new_page, series_site):
    """Open a plate's page of the built series in a page of a context with these options (conftest.new_page);
    returns a function returning the page."""
    def opener(plate, ready: bool = True, **options):
        page = new_page(offline=True, **options)
        page.goto((series_site / page_of(series_site, plate)).resolve().as_uri())
        if ready:
            wait_until(page, "document.documentElement.dataset.ready")
            assert page.evaluate("document.documentElement.dataset.ready") == "true"
        return page

    return opener


# Where an element lies against the first screen, and whether the page has scrolled.
PLACE = """(selector) => { const el = document.querySelector(selector); if (!el) return null;
  const r = el.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: window.innerHeight,
          width: window.innerWidth, scrolled: window.scrollY}; }"""


def on_first_screen(place) -> bool:
    return (place is not None and place["scrolled"] == 0 and 0 <= place["top"] and place["bottom"] <= place["height"]
            and 0 <= place["left"] and place["right"] <= place["width"] and place["bottom"] > place["top"])


@pytest.mark.parametrize("c", PLATES, ids=lambda c: c.root.name)
@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_first_screen_asks_the_question_and_shows_figure_1_live_with_its_controls(opened, c, screen, scheme):
    page = opened(c.plate, color_scheme=scheme, **SCREENS[screen])
    assert c.plate.question, "the plate asks no question (plate.md's front matter: question)"
    assert page.inner_text(".question").strip() == c.plate.question
    figure = page.evaluate("document.querySelector('.figure').id")
    wait_until(page, f"document.querySelector('#{figure} .chart')?.dataset.live === 'true'")
    for what in ("h1", ".question", f"#{figure} .chart"):
        assert on_first_screen(page.evaluate(PLACE, what)), (what, page.evaluate(PLACE, what))
    keys = first_keys(c, page)
    assert len(keys) == 3
    for key in keys:
        place = page.evaluate(PLACE, f"#choose-{key}")
        assert on_first_screen(place), (key, place)
        assert not page.evaluate(f"!!document.getElementById('choose-{key}').closest('#more')"), key
    # The controls beside Figure 1 are exactly those; every other one is in the disclosure, closed.
    outside = page.evaluate("[...document.querySelectorAll('#controls select')].filter((s) => !s.closest('#more'))"
                            ".map((s) => s.name)")
    assert sorted(outside) == sorted(keys)
    assert page.evaluate("getComputedStyle(document.getElementById('more')).display") == "none"
    assert page.get_attribute("#more-toggle", "aria-expanded") == "false"


@pytest.mark.parametrize("c", PLATES, ids=lambda c: c.root.name)
def test_the_disclosure_holds_the_rest_and_its_controls_change_the_figures_and_the_url(opened, c):
    page = opened(c.plate, **DESK)
    assert page.inner_text("#more-toggle").strip() == c.plate.labels["more"]
    inside = page.evaluate("[...document.querySelectorAll('#more select')].map((s) => s.name)")
    assert inside, "no control in the disclosure"
    if c.plate.assumptions is not None:
        assert page.evaluate("document.querySelector('#more .assumptions').textContent.trim().length") > 0
    page.evaluate("() => window.plate.live().then(() => true)")
    open_disclosure(page)
    assert page.get_attribute("#more-toggle", "aria-expanded") == "true"
    drawn = "[...document.querySelectorAll('.figure .chart')].map((c) => c.innerHTML)"
    for key in inside:
        options = page.evaluate(f"[...document.getElementById('choose-{key}').options].map((o) => o.value)")
        value = page.evaluate(f"document.getElementById('choose-{key}').value")
        others = [o for o in options if o != value and o != "custom"]
        if not others:
            continue
        before = page.evaluate(drawn)
        shown = page.evaluate("document.documentElement.dataset.shown")
        page.select_option(f"#choose-{key}", others[-1])
        current(page)  # what waits out of sight too
        wait_until(page, f"document.documentElement.dataset.shown !== {shown!r}")
        wait_until(page, f"location.hash.includes({f'{key}={others[-1]}'!r})")
        assert page.evaluate(drawn) != before, f"choosing {key}={others[-1]} changed no figure"
        return
    raise AssertionError("no control in the disclosure has a second choice")


@pytest.mark.parametrize("c", PLATES, ids=lambda c: c.root.name)
def test_the_disclosure_is_open_without_javascript_and_on_paper(opened, c):
    visible = "(s) => { const el = document.querySelector(s); return !!el && el.getClientRects().length > 0 && " \
              "getComputedStyle(el).visibility !== 'hidden'; }"
    controls = "[...document.querySelectorAll('#controls .control')].filter((c) => c.getClientRects().length).length"
    page = opened(c.plate, ready=False, java_script_enabled=False, **DESK)
    assert page.evaluate(visible, "#more")
    if c.plate.assumptions is not None:
        assert page.evaluate(visible, "#more .assumptions")
    assert page.evaluate(controls) == 0  # they need a script
    page = opened(c.plate, **DESK)
    page.emulate_media(media="print")
    assert page.evaluate(visible, "#more")
    if c.plate.assumptions is not None:
        assert page.evaluate(visible, "#more .assumptions")
    assert page.evaluate(controls) == 0


# For each select and each of its options, the width a select needs to show that option whole (the same select,
# holding only that option, at its auto width, where it stands) against the width it has. A select's scrollWidth
# equals its clientWidth in Chromium whatever its text, so it cannot tell a cut option.
CLIPPED = """() => {
  const out = [];
  for (const s of document.querySelectorAll('#controls select')) {
    const have = s.getBoundingClientRect().width;
    for (const o of s.options) {
      const probe = s.cloneNode(false);
      probe.removeAttribute('id');
      probe.removeAttribute('name');
      probe.append(o.cloneNode(true));
      Object.assign(probe.style, {width: 'auto', minWidth: '0', maxWidth: 'none', position: 'absolute',
                                  visibility: 'hidden'});
      s.parentElement.append(probe);
      const need = probe.getBoundingClientRect().width;
      probe.remove();
      if (need > have + 0.5) out.push([s.name, o.text, need, have]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("c", PLATES, ids=lambda c: c.root.name)
@pytest.mark.parametrize("screen", SCREENS)
def test_no_select_cuts_an_options_text(opened, c, screen):
    page = opened(c.plate, **SCREENS[screen])
    open_disclosure(page)  # its selects laid out too
    assert page.evaluate("document.querySelectorAll('#controls select').length") > 3
    assert page.evaluate(CLIPPED) == []


def test_the_probe_sees_a_cut_option(opened):
    """The measure above fails a select narrower than its longest option."""
    page = opened(PLATES[0].plate, **DESK)
    page.evaluate("document.querySelector('#controls select').style.maxWidth = '3rem'")
    assert page.evaluate(CLIPPED)


@pytest.mark.parametrize("c", PLATES, ids=lambda c: c.root.name)
def test_on_a_phone_the_bar_never_scrolls_sideways_nor_covers_the_readout(opened, c):
    page = opened(c.plate, **PHONE)
    assert page.evaluate("document.getElementById('controls').scrollWidth <= "
                         "document.getElementById('controls').clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.evaluate("document.getElementById('readout').scrollIntoView({block: 'start'})")
    bar = page.evaluate(PLACE, "#controls")
    readout = page.evaluate(PLACE, "#readout")
    assert bar["bottom"] <= readout["top"] + 0.5, (bar, readout)


@pytest.mark.parametrize("c", PLATES, ids=lambda c: c.root.name)
def test_a_narrow_window_never_paints_the_desktop_figure_shrunk(opened, c):
    """A plain 390 px window (not an emulated phone): until a figure is live its static SVG, drawn for the desktop's
    width, is not shown; at the desktop's width it is."""
    static = "[...document.querySelectorAll('.chart')].filter((c) => !c.dataset.live)" \
             ".map((c) => getComputedStyle(c.querySelector('svg')).visibility)"
    narrow = opened(c.plate, ready=False, viewport={"width": 390, "height": 844})
    narrow.wait_for_load_state("domcontentloaded")
    shown = narrow.evaluate(static)
    assert shown and set(shown) == {"hidden"}, shown
    wide = opened(c.plate, ready=False, **DESK)
    wide.wait_for_load_state("domcontentloaded")
    every = "[...document.querySelectorAll('.chart')].map((c) => getComputedStyle(c.querySelector('svg')).visibility)"
    assert set(wide.evaluate(every)) == {"visible"}


def test_the_disclosure_opens_and_closes_from_the_keyboard(opened):
    page = opened(PLATES[0].plate, **DESK)
    page.focus("#more-toggle")
    page.keyboard.press("Enter")
    assert page.get_attribute("#more-toggle", "aria-expanded") == "true"
    assert page.evaluate("getComputedStyle(document.getElementById('more')).display") != "none"
    page.keyboard.press("Space")
    assert page.get_attribute("#more-toggle", "aria-expanded") == "false"
    assert page.evaluate("getComputedStyle(document.getElementById('more')).display") == "none"
