"""On a phone (390 × 844), a control and the figure it changes are on screen together (issue 20): the controls
stay in a compact bar at the top while the workshop's figures scroll under it; working a control from the
keyboard there redraws the figure in view without moving it; the bar is accessible (axe) and never printed."""
from __future__ import annotations

import pytest

from conftest import wait_until
from test_accessibility import AXE_RUN, WCAG, axe_js  # noqa: F401 (axe_js: the fixture)

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}

# Where the bar, one of its selects and a figure's chart lie on screen, and whether the select is the element a
# finger on its centre would touch (not covered by anything).
PLACES = """([fid, control]) => {
  const rect = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left,
    right: r.right }; };
  const select = document.getElementById(control);
  const s = rect(select);
  const touched = document.elementFromPoint((s.left + s.right) / 2, (s.top + s.bottom) / 2);
  return { bar: rect(document.getElementById('controls')), select: s, chart: rect(document.querySelector(`#${fid} .chart`)),
           uncovered: touched === select || select.contains(touched), height: window.innerHeight,
           svg: document.querySelector(`#${fid} .chart svg`).outerHTML.length };
}"""


def on_screen_together(places: dict) -> bool:
    """The select on screen and uncovered, and the whole chart on screen below the bar."""
    select, chart, bar = places["select"], places["chart"], places["bar"]
    return (places["uncovered"] and 0 <= select["top"] and select["bottom"] <= places["height"] and
            bar["bottom"] <= chart["top"] and chart["bottom"] <= places["height"])


def test_every_figure_is_on_screen_with_the_controls_and_changes_under_the_keyboard(site, open_page):
    page = open_page(site, open_more=False, **PHONE).page  # the bar as it opens: its disclosure closed
    data = page.evaluate("JSON.parse(document.getElementById('plate-data').textContent)")
    keys, figures = data["keys"], [f["id"] for f in data["figures"]]
    key = next(k for k in ("batch", "model", "network") if len(data["choices"][k]) > 1)
    control = f"choose-{key}"
    for fid in figures:
        page.evaluate("(fid) => document.getElementById(fid).scrollIntoView({block: 'center'})", fid)
        before = page.evaluate(PLACES, [fid, control])
        assert on_screen_together(before), (fid, before)
        # The keyboard: focus the control where it is and step to another option.
        page.focus(f"#{control}")
        old = page.evaluate(f"document.getElementById({control!r}).value")
        page.keyboard.press("ArrowUp" if data["choices"][key].index(old) else "ArrowDown")
        new = page.evaluate(f"document.getElementById({control!r}).value")
        assert new != old, "the control did not answer the keyboard"
        selection = page.evaluate("window.plate.selection()")
        wait_until(page, f"(document.documentElement.dataset.drawn || '').startsWith("
                         f"{'|'.join(selection[k] for k in keys)!r})")
        after = page.evaluate(PLACES, [fid, control])
        assert on_screen_together(after), (fid, after)  # nothing scrolled the figure away
        assert abs(after["chart"]["top"] - before["chart"]["top"]) < 2, (fid, before, after)


def test_the_bar_scrolls_away_with_the_workshop(site, open_page):
    """Sticky within the workshop only: past its last figure, the prose is not covered by the bar."""
    page = open_page(site, **PHONE).page
    page.evaluate("document.querySelector('.terms').scrollIntoView({block: 'start'})")
    bar = page.evaluate("document.getElementById('controls').getBoundingClientRect().bottom")
    assert bar <= 0


def test_the_bar_passes_axe_on_a_phone(site, open_page, axe_js):
    page = open_page(site, bypass_csp=True, **PHONE).page
    page.evaluate("document.getElementById('fig-efficiency').scrollIntoView({block: 'center'})")
    page.add_script_tag(content=axe_js)
    assert page.evaluate(AXE_RUN, WCAG) == []


def test_the_bar_is_not_printed(site, open_page):
    page = open_page(site, **PHONE).page
    page.emulate_media(media="print")
    # No control is printed, and the bar is not stuck over the page; only the assumptions it folds are printed.
    assert page.evaluate("[...document.querySelectorAll('#controls .control, #controls .own')]"
                         ".map((c) => getComputedStyle(c).display)") and \
        set(page.evaluate("[...document.querySelectorAll('#controls .control, #controls .own')]"
                          ".map((c) => getComputedStyle(c).display)")) == {"none"}
    assert page.evaluate("getComputedStyle(document.getElementById('controls')).position") == "static"
