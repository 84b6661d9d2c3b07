"""The events the open page must answer, each on its own: a selection written into the fragment (hashchange), and
the MFU slider moved (input, before any change)."""
import pytest

from conftest import wait_until

pytestmark = pytest.mark.browser

SHOWN_MODEL = "document.documentElement.dataset.shown.split('|')[0]"


def models(page) -> tuple[str, list[str]]:
    """The model shown, and the content's other preset models."""
    return page.evaluate("""() => {
      const select = document.getElementById('choose-model');
      return [select.value, [...select.options].map((o) => o.value).filter((v) => v !== 'custom' && v !== select.value)];
    }""")


def test_a_selection_written_into_the_fragment_of_the_open_page_redraws_it(site, open_page):
    watched = open_page(site)
    page = watched.page
    shown, others = models(page)
    assert others, "the content needs two preset models for this test"
    assert page.evaluate(SHOWN_MODEL) == shown
    # hashchange alone: the fragment is rewritten without an event (replaceState), then only hashchange is sent.
    # A real fragment navigation in Chromium also fires popstate, which would hide a page listening to the wrong one.
    page.evaluate("""(model) => {
      const old = location.href;
      history.replaceState(null, '', '#model=' + model);
      window.dispatchEvent(new HashChangeEvent('hashchange', {oldURL: old, newURL: location.href}));
    }""", others[0])
    wait_until(page, f"{SHOWN_MODEL} === {others[0]!r}")
    assert page.evaluate("document.getElementById('choose-model').value") == others[0]
    # And as a reader does it: a new fragment typed or followed while the page is open.
    page.evaluate("(model) => { location.hash = 'model=' + model; }", shown)
    wait_until(page, f"{SHOWN_MODEL} === {shown!r}")
    assert page.evaluate("document.getElementById('choose-model').value") == shown
    # A fragment naming no selection (a link to a term or a source) leaves the figures as they are.
    before = page.evaluate("document.documentElement.dataset.shown")
    page.evaluate("""() => {
      const old = location.href;
      history.replaceState(null, '', '#nothing-here');
      window.dispatchEvent(new HashChangeEvent('hashchange', {oldURL: old, newURL: location.href}));
    }""")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert page.evaluate("document.documentElement.dataset.shown") == before
    assert watched.problems() == []


def slider_state(page) -> tuple[str, str]:
    return page.evaluate("() => [document.getElementById('own-mfu').value, "
                         "document.getElementById('own-mfu-shown').textContent]")


def test_the_mfu_slider_s_shown_value_follows_it_while_it_moves(site, open_page):
    page = open_page(site).page
    slider = page.locator("#own-mfu")
    slider.scroll_into_view_if_needed()
    value, shown = slider_state(page)
    assert shown == f"{value}%"
    slider.focus()
    page.keyboard.press("ArrowRight")  # a step by keyboard: input, then change
    moved, shown = slider_state(page)
    assert moved != value and shown == f"{moved}%"
    # Dragged: the value follows the pointer before it is let go (input events only, no change yet).
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.1, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.8, y, steps=8)
    dragged, shown = slider_state(page)
    try:
        assert dragged not in (value, moved) and shown == f"{dragged}%"
    finally:
        page.mouse.up()
