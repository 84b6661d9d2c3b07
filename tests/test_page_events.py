"""The events the open page must answer, each on its own: a selection written into the fragment (hashchange), and
the MFU slider moved (input, before any change)."""
import pytest

from conftest import wait_until

pytestmark = pytest.mark.browser

# One control with a second preset to choose: (its key, the value shown, another value), whatever the content holds.
ANOTHER = """() => {
  const keys = JSON.parse(document.getElementById('plate-data').textContent).keys;
  for (const key of keys) {
    const select = document.getElementById('choose-' + key);
    if (!select) continue;
    const other = [...select.options].map((o) => o.value).find((v) => v !== 'custom' && v !== select.value);
    if (other !== undefined) return [key, select.value, other];
  }
  return null;
}"""
# What <html> says is drawn in sight, for one key.
SHOWN = """(key) => {
  const keys = JSON.parse(document.getElementById('plate-data').textContent).keys;
  return document.documentElement.dataset.drawn.split('&')[0].split('|')[keys.indexOf(key)];
}"""
HASHCHANGE_ONLY = """(fragment) => {
  const old = location.href;
  history.replaceState(null, '', fragment);
  window.dispatchEvent(new HashChangeEvent('hashchange', {oldURL: old, newURL: location.href}));
}"""


def shown_is(key: str, value: str) -> str:
    """An expression: the page draws value for key, and its control says so."""
    return f"({SHOWN})({key!r}) === {value!r} && document.getElementById('choose-{key}').value === {value!r}"


def test_a_selection_written_into_the_fragment_of_the_open_page_redraws_it(site, open_page):
    watched = open_page(site)
    page = watched.page
    found = page.evaluate(ANOTHER)
    assert found, "the content offers no second preset for any control"
    key, shown, other = found
    assert page.evaluate(shown_is(key, shown))
    # hashchange alone: the fragment is rewritten without an event (replaceState), then only hashchange is sent.
    # A real fragment navigation in Chromium also fires popstate, which would hide a page listening to the wrong one.
    page.evaluate(HASHCHANGE_ONLY, f"#{key}={other}")
    wait_until(page, shown_is(key, other))
    # And as a reader does it: a new fragment typed or followed while the page is open.
    page.evaluate("(fragment) => { location.hash = fragment; }", f"{key}={shown}")
    wait_until(page, shown_is(key, shown))
    # A fragment naming no selection (a link to a term or a source) leaves the figures as they are.
    before = page.evaluate("document.documentElement.dataset.shown")
    page.evaluate(HASHCHANGE_ONLY, "#nothing-here")
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


# A figure in view, its "in words and numbers" closed, and what the page's texts() give for the selection shown.
IN_VIEW_WORDS = """() => {
  const figure = [...document.querySelectorAll('figure.figure')].find((f) => {
    const box = f.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
  });
  const texts = window.plate.texts(window.plate.selection());
  const table = document.querySelector(`[data-table="${figure.id}"]`);
  return {id: figure.id, open: document.getElementById(figure.id + '-data').open,
          describe: document.querySelector(`[data-describe="${figure.id}"]`).textContent, want: texts.describe[figure.id],
          rows: [...table.tBodies[0].rows].map((tr) => [...tr.cells].map((c) => c.textContent)),
          wantRows: texts.tables[figure.id], caption: figure.querySelector('[data-selection]').textContent,
          wantCaption: texts.caption};
}"""


def test_a_figure_s_words_in_view_follow_it_and_are_current_once_opened(site, open_page):
    """A change redraws the figures in view with the readout, captions and descriptions (a chart is described by
    its description, even while its "in words and numbers" is closed); the table of a figure in view whose "in words
    and numbers" is closed waits, in idle time too (here the browser is never idle), and opening it shows it current
    at once."""
    watched = open_page(site)
    page = watched.page
    page.evaluate("document.getElementById('controls').scrollIntoView()")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")  # observed
    found = page.evaluate(ANOTHER)
    assert found, "the content offers no second preset for any control"
    key, _, other = found
    page.evaluate("() => { window.requestIdleCallback = () => 0; }")
    drawn = page.evaluate("document.documentElement.dataset.drawn")
    page.evaluate("([key, value]) => { const s = document.getElementById('choose-' + key); s.value = value; "
                  "s.dispatchEvent(new Event('change', {bubbles: true})); }", [key, other])
    wait_until(page, f"document.documentElement.dataset.drawn !== {drawn!r}")
    words = page.evaluate(IN_VIEW_WORDS)
    assert not words["open"]
    assert words["caption"] == words["wantCaption"]  # the caption changed with the figure
    assert words["describe"] == words["want"]  # and the description its chart is described by
    assert words["rows"] != words["wantRows"]  # the closed table waits
    page.evaluate("(id) => { document.getElementById(id + '-data').open = true; }", words["id"])
    words = page.evaluate(IN_VIEW_WORDS)  # a script's opening too: written before the frame that paints it
    assert words["rows"] == words["wantRows"]
    assert watched.problems() == []
