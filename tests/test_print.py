"""Paper: the plate printed by Chromium to A4 and US Letter, read back from the PDF."""
import io
import re
import unicodedata

import pytest
from pypdf import PdfReader

from conftest import CONTENT, default_caption, wait_until, within_print_budget
from generator.source import content
from generator.page.notation import num
from xiv4 import facts, xpresets


def default_facts():
    """The facts of the content's default selection, which the page opens on."""
    c = content.load(CONTENT)
    return facts.Atlas(c.presets).facts(c.plate.default)

pytestmark = pytest.mark.browser

FORMATS = ["A4", "Letter"]
# What must never break across pages; only those printed (visible in print) are checked.
BLOCKS = ".figure, .readout, .term-entry, .takeaway, .sources li, table, .plate-head"
# Pins an invisible-in-layout marker to the top and the bottom of each block, so the PDF says on which
# page each end landed. Absolutely positioned: the layout, and so the page breaks, do not move.
MARK = """(selector) => {
  let n = 0;
  for (const el of document.querySelectorAll(selector)) {
    if (!el.getClientRects().length) continue;
    if (getComputedStyle(el).position === 'static') el.style.position = 'relative';
    for (const [end, side] of [['top', 'top'], ['end', 'bottom']]) {
      const mark = document.createElement('span');
      mark.textContent = ` QQ${end}${n}QQ `;
      Object.assign(mark.style, {position: 'absolute', left: '0', [side]: '0', fontSize: '4px', lineHeight: '1'});
      el.append(mark);
    }
    n += 1;
  }
  return n;
}"""


def texts(pdf: bytes | PdfReader) -> list[str]:
    """Each page's text, ligatures undone, whitespace collapsed."""
    reader = pdf if isinstance(pdf, PdfReader) else PdfReader(io.BytesIO(pdf))
    return [" ".join(unicodedata.normalize("NFKC", p.extract_text()).split()) for p in reader.pages]


def page_count(pdf: bytes) -> int:
    """The PDF's pages, as pypdf reads them (len(texts(pdf)) without extracting any text)."""
    return len(PdfReader(io.BytesIO(pdf)).pages)


@pytest.fixture(scope="module")
def printed(print_browser, site):
    """Per paper format, under each font set: page texts of the plate as printed, and of the same print with block
    markers."""
    context = print_browser.new_context(offline=True, viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto((site / "index.html").resolve().as_uri())
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    page.emulate_media(media="print")
    out = {"page": page}
    for fmt in FORMATS:
        pdf = page.pdf(format=fmt)
        reader = PdfReader(io.BytesIO(pdf))  # read once, for its texts and its images
        out[fmt] = {"pdf": pdf, "texts": texts(reader), "images": sum(len(p.images) for p in reader.pages)}
    out["blocks"] = page.evaluate(MARK, BLOCKS)
    for fmt in FORMATS:
        out[fmt]["marked"] = texts(page.pdf(format=fmt))
    yield out
    context.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_prints_within_the_readmes_page_budget(printed, fmt):
    assert within_print_budget(len(printed[fmt]["texts"]), fmt), len(printed[fmt]["texts"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_figure_table_or_term_entry_is_split(printed, fmt):
    pages = printed[fmt]["marked"]
    assert printed["blocks"] >= 10  # the readout, two figures, six terms, takeaway, sources, head
    for n in range(printed["blocks"]):
        top = [i for i, t in enumerate(pages) if f"QQtop{n}QQ" in t]
        end = [i for i, t in enumerate(pages) if f"QQend{n}QQ" in t]
        assert len(top) == 1 and top == end, f"block {n} runs from page {top} to page {end}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_figures_carry_the_selection_and_the_text_has_terms_and_sources(printed, fmt):
    c = content.load(CONTENT)
    text = " ".join(printed[fmt]["texts"])
    caption = re.escape(default_caption(content.load(CONTENT)))
    for number in (1, 2):
        assert re.search(rf"Figure {number}\. [^·]+ · {caption}", text), number
    for term in c.terms.values():
        assert term.name in text and " ".join(term.definition.split()) in text
    squeezed = "".join(text.split())  # long addresses wrap anywhere
    for source in c.sources.values():
        assert source.title in text
        assert f"<{source.url}>" in squeezed, f"the printed link does not show its target {source.url}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_running_head_names_volume_and_plate_with_page_numbers(printed, fmt):
    pages = printed[fmt]["texts"]
    p = content.load(CONTENT).plate
    volume = f"Vol. {p.volume} · {p.volume_title}"
    assert f"PLATE {p.plate} OF {p.plates_in_volume}" in pages[0].upper() and volume.upper() in pages[0].upper()
    for i, page_text in enumerate(pages, start=1):
        assert f"Page {i} of {len(pages)}" in page_text
        if i > 1:
            assert volume in page_text and f"Plate {p.volume}.{p.plate} · {p.title}" in page_text


@pytest.mark.parametrize("fmt", FORMATS)
def test_figures_print_as_vector_svg(printed, fmt):
    assert printed[fmt]["images"] == 0, "the PDF holds raster images"
    text = " ".join(printed[fmt]["texts"])
    crossing = default_facts().crossing_replicas
    assert "seconds per step" in text  # the figures' words are text, not pixels
    assert "first crossed: " + num(crossing) in text if crossing else "first crossed" not in text
    page = printed["page"]
    assert page.locator(".chart svg").count() == page.locator("figure.figure").count() >= 3
    assert "model states per GPU" in text  # the memory figure prints as vector text too
    assert page.locator(".chart canvas, .chart img").count() == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_figure_s_key_prints_beside_it(printed, fmt):
    # The key says what each mark means (issue 32); on paper too, every entry as the page writes it.
    page = printed["page"]
    keys = page.evaluate("""[...document.querySelectorAll('figure.figure')].map((fig) => {
      const key = fig.querySelector('.key');
      return key ? {shown: key.getClientRects().length > 0,
                    entries: [...key.querySelectorAll('li')].map((li) => li.textContent.replace(/\\s+/g, ' ').trim())} : null;
    })""")
    assert any(keys), "no figure has a key"
    squeezed = "".join(" ".join(printed[fmt]["texts"]).split())
    for key in filter(None, keys):
        assert key["shown"] and key["entries"]
        for entry in key["entries"]:
            assert "".join(unicodedata.normalize("NFKC", entry).split()) in squeezed, entry

def test_controls_and_screen_only_parts_are_hidden_in_print(printed):
    page = printed["page"]
    # The controls' form prints only the workshop's assumptions it folds (test_first_screen), none of its controls.
    for selector in ("#controls .control", "#controls .own", ".skip", ".figure-data", "#controls select"):
        for box in page.locator(selector).all():
            assert not box.is_visible(), selector


def test_printed_captions_follow_the_chosen_selection(browser, site):
    context = browser.new_context(offline=True, viewport={"width": 1100, "height": 900})
    page = context.new_page()
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    d = atlas.complete(c.plate.default)
    other = {k: next((i for i in table if i != getattr(d, k)), getattr(d, k)) for k, table in
             (("model", c.presets.models), ("batch", c.presets.batches), ("network", c.presets.networks))}
    sel = xpresets.Selection(**other)
    assert sel != xpresets.Selection(d.model, d.batch, d.network), "the content offers one selection only"
    page.goto((site / "index.html").resolve().as_uri() + "#" + "&".join(f"{k}={v}" for k, v in other.items()))
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    text = " ".join(texts(page.pdf(format="A4")))
    context.close()
    caption = re.escape(atlas.facts(sel).caption)
    for number in (1, 2):
        assert re.search(rf"Figure {number}\. [^·]+ · {caption}", text), number


def test_prints_without_javascript_too(print_browser, site):
    context = print_browser.new_context(offline=True, java_script_enabled=False)
    page = context.new_page()
    page.goto((site / "index.html").resolve().as_uri())
    pages = texts(page.pdf(format="A4"))
    context.close()
    assert within_print_budget(len(pages), "A4"), len(pages)
    assert "Figure 1." in " ".join(pages) and default_caption(content.load(CONTENT)) in " ".join(pages)


@pytest.fixture(scope="module")
def narrow_tab(print_browser):
    """One tab per font set for the narrow-window prints; each test sets its width, then opens the plate in it anew."""
    context = print_browser.new_context(offline=True, viewport={"width": 360, "height": 800})
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("width", [360, 800])
def test_printing_from_a_phone_or_narrow_window_redraws_figures_for_paper(narrow_tab, site, width):
    page = narrow_tab
    page.set_viewport_size({"width": width, "height": 800})
    page.goto((site / "index.html").resolve().as_uri())
    assert page.evaluate("innerWidth") == width
    wait_until(page, "document.documentElement.dataset.ready === 'true'")
    page.evaluate("() => window.plate.live().then(() => true)")  # as a reader who has scrolled through the plate
    on_screen = page.evaluate("window.plate.views.map(v => v.width())")
    assert len(on_screen) == page.locator("figure.figure").count()
    page.evaluate("addEventListener('beforeprint', () => { window.__paper = window.plate.views.map(v => v.width()); })")
    counts = [page_count(page.pdf(format=fmt)) for fmt in FORMATS]
    paper = page.evaluate("window.__paper")
    assert all(p > s for p, s in zip(paper, on_screen)), (paper, on_screen)  # redrawn wider, for the paper
    # Back to the screen's width once printed (waited for: afterprint redraws).
    page.wait_for_function("(w) => window.plate.views.every((v, i) => v.width() === w[i])", arg=on_screen)
    assert all(within_print_budget(n, fmt) for n, fmt in zip(counts, FORMATS)), counts
