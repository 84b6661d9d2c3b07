"""The shipped volume's index page in Chromium and the Nu checker: its style allowed by its own CSP, offline, every
plate by title in order, the written ones with their deck and picture, its intro, dark mode, axe, and its printed
page; expectations read from plates/volume.toml and the written plates' front matter."""
import io
import re
import subprocess

import pytest
from pypdf import PdfReader

from conftest import SERIES, current
from test_html_valid import _checker
from generator.source import content, volume
from generator.page import crossrefs
from generator.site import build
from generator.page.references import split_references

pytestmark = pytest.mark.browser

# axe-core as tests/test_accessibility.py fetches and runs it
from test_accessibility import AXE_RUN, WCAG, axe_js  # noqa: E402,F401 - axe_js: the fixture, by its name


@pytest.fixture(scope="module")
def index(series_site):
    """The shipped volume's index page: (its path, the volume, {number: (page, title, deck)} of its written plates)."""
    shelf = volume.load(SERIES)
    written = {}
    for entry in shelf.written():
        front, _ = volume.front_matter(shelf.folder(entry) / volume.PLATE_FILE)
        written[entry.number] = (shelf.page_of(entry), front["title"], front["deck"])
    return series_site / shelf.page, shelf, written


def shown_title(index, entry) -> str:
    """The title a row shows: a written plate's own (its front matter's), else the one volume.toml gives."""
    return index[2][entry.number][1] if entry.number in index[2] else entry.title


def opened(new_page, page_path, **options):
    """A page opened from disk with the network off in a page new_page(**context options) gives (conftest.new_page);
    (page, what it logged and asked for)."""
    page = new_page(offline=True, **{"viewport": {"width": 1100, "height": 900}, **options})
    seen = {"console": [], "requests": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.goto(page_path.resolve().as_uri())
    return page, seen


def test_the_style_applies_under_the_pages_own_csp_offline(new_page, index):
    page, seen = opened(new_page, index[0])
    assert seen["console"] == []  # a style the CSP refused would be reported here
    assert page.evaluate("getComputedStyle(document.querySelector('.volume-plates')).listStyleType") == "none"
    assert seen["requests"] == [index[0].resolve().as_uri()]  # the pictures are inline: no request
    sizes = page.evaluate("[...document.querySelectorAll('.volume-plate-picture svg')].map(s => "
                          "[s.getBoundingClientRect().width, s.getBoundingClientRect().height])")
    assert len(sizes) == len(index[2]) and all(w > 100 and h > 30 for w, h in sizes), sizes  # drawn, scaled
    assert all(w < 0.6 * page.evaluate("document.querySelector('main').clientWidth") for w, _ in sizes)


def test_every_plate_is_listed_in_order_by_title_the_written_ones_linked_with_deck_and_picture(new_page, index):
    page, _ = opened(new_page, index[0])
    rows = page.locator(".volume-plates > li").all()
    shelf = index[1]
    assert len(rows) == len(shelf.plates)
    for row, entry in zip(rows, shelf.plates):
        text = " ".join(row.inner_text().split())
        assert text.upper().startswith(f"PLATE {shelf.plate_id(entry)} ".upper()), text  # a number text-transformed
        assert shown_title(index, entry) in text
        links = row.get_by_role("link").all()
        if entry.number in index[2]:
            file, title, deck = index[2][entry.number]
            assert [(a.inner_text(), a.get_attribute("href")) for a in links] == [(title, file)]
            assert " ".join(row.locator(".volume-plate-deck").inner_text().split()) == " ".join(deck.split())
            assert row.locator('[aria-hidden="true"] > svg').count() == 1 and row.locator("svg").count() == 1
        else:
            assert links == [] and row.locator("svg").count() == 0 and text.endswith("to come")
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids))


def test_the_intro_is_the_volumes_own_linking_the_plates_written(new_page, index):
    page, _ = opened(new_page, index[0])
    shelf = index[1]
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", shelf.intro.strip()) if p.strip()]
    shown = [" ".join(p.inner_text().split()) for p in page.locator(".volume-intro p").all()]
    assert shown == paragraphs
    intro = " ".join(shelf.intro.split())
    named = [piece[1] for piece in split_references(intro, None, crossrefs.HTML_SPACES)[1::2]]
    pages = {shelf.plate_id(e): index[2][e.number][0] for e in shelf.written()}
    links = page.locator(".volume-intro a").all()
    assert sorted(a.get_attribute("href") for a in links) == sorted(pages[i] for i in named if i in pages)


def test_dark_mode_follows_the_readers_setting_the_pictures_too(new_page, index):
    seen = {}
    for scheme in ("light", "dark"):
        page, _ = opened(new_page, index[0], color_scheme=scheme)
        seen[scheme] = page.evaluate("[getComputedStyle(document.documentElement).backgroundColor, "
                                     "[...document.querySelectorAll('.volume-plate-picture text')]"
                                     ".map(t => getComputedStyle(t).fill)]")
    assert seen["light"][0] != seen["dark"][0]
    assert seen["light"][1] and seen["light"][1] != seen["dark"][1]  # the figures' ink re-inked by the theme


@pytest.mark.parametrize("scheme, width", [("light", 1100), ("dark", 1100), ("dark", 360)])
def test_axe_finds_no_wcag_violation(new_page, index, axe_js, scheme, width):
    page, _ = opened(new_page, index[0], bypass_csp=True, color_scheme=scheme,
                              viewport={"width": width, "height": 740})
    page.add_script_tag(content=axe_js)
    assert page.evaluate(AXE_RUN, WCAG) == []


INDEX_PAGES = 1  # the index's print budget, on A4 and on US Letter (docs/testing.md)


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_index_prints_within_its_budget_naming_every_plate_and_each_built_pages_file(print_browser, index,
                                                                                          paper):
    context = print_browser.new_context(offline=True)
    try:
        page = context.new_page()
        page.goto(index[0].resolve().as_uri())
        page.emulate_media(media="print")
        pages = PdfReader(io.BytesIO(page.pdf(format=paper))).pages
        assert len(pages) <= INDEX_PAGES
        text = " ".join(" ".join(p.extract_text().split()) for p in pages)
        for entry in index[1].plates:
            assert shown_title(index, entry) in text
        for file, _, _ in index[2].values():
            assert f"({file})" in "".join(text.split())  # a long name may wrap
    finally:
        context.close()


def test_nu_checker_reports_no_error(index):
    run = subprocess.run([_checker(), str(index[0]), "--log", "INFO"], capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    errors = [line for line in output.splitlines() if "error" in line.lower()]
    assert run.returncode == 0 and errors == [], output
    assert "All good" in output


# --- the series' top page and every volume's index -----------------------------------------------------------------

def other_pages(series_site):
    """The top page and each volume's index, as the shipped series builds them."""
    shelf = volume.load_series(SERIES)
    return shelf, [series_site / shelf.page] + [series_site / v.page for v in shelf.volumes]


def test_the_top_page_lists_every_volume_and_plate_under_its_own_csp_offline(new_page, series_site):
    shelf, _ = other_pages(series_site)
    page, seen = opened(new_page, series_site / shelf.page)
    assert seen["console"] == [] and seen["requests"] == [(series_site / shelf.page).resolve().as_uri()]
    assert page.evaluate("getComputedStyle(document.querySelector('.series-plates')).listStyleType") == "none"
    sections = page.locator(".series-volume").all()
    assert len(sections) == len(shelf.volumes) > 1
    pages = shelf.pages()
    for section, vol in zip(sections, shelf.volumes):
        heading = section.get_by_role("heading", level=2).get_by_role("link")
        assert heading.text_content() == f"Vol. {vol.id} · {vol.title}"  # shown in capitals by the stylesheet
        assert heading.get_attribute("href") == vol.page
        first = " ".join(re.split(r"\n\s*\n", vol.intro.strip())[0].split())
        assert " ".join(section.locator(".series-volume-intro").inner_text().split()) == first
        rows = section.locator(".series-plates > li").all()
        assert len(rows) == len(vol.plates)
        for row, entry in zip(rows, vol.plates):
            text = " ".join(row.inner_text().split())
            links = [a.get_attribute("href") for a in row.get_by_role("link").all()]
            assert text.upper().startswith(f"PLATE {vol.plate_id(entry)} ".upper()), text
            if entry.folder:
                assert links == [pages[vol.plate_id(entry)]] and "to come" not in text
            else:
                assert links == [] and entry.title in text and text.endswith("to come"), text
                dot = row.locator(".volume-plate-status").evaluate("s => getComputedStyle(s, '::before').content")
                assert dot == '"· "'  # "Plate XI.1 · to come", titled or not


@pytest.mark.parametrize("scheme, width", [("light", 1100), ("dark", 360)])
def test_axe_finds_no_violation_on_the_top_page_and_every_index(new_page, series_site, axe_js, scheme, width):
    for path in other_pages(series_site)[1]:
        page, _ = opened(new_page, path, bypass_csp=True, color_scheme=scheme,
                                  viewport={"width": width, "height": 740})
        page.add_script_tag(content=axe_js)
        assert page.evaluate(AXE_RUN, WCAG) == [], path.name


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_top_page_and_every_index_print_on_one_page_naming_every_plate(print_browser, series_site, paper):
    shelf, paths = other_pages(series_site)
    context = print_browser.new_context(offline=True)
    try:
        for path in paths:
            page = context.new_page()
            page.goto(path.resolve().as_uri())
            page.emulate_media(media="print")
            pages = PdfReader(io.BytesIO(page.pdf(format=paper))).pages
            assert len(pages) <= INDEX_PAGES, path.name
            text = "".join("".join(p.extract_text().split()) for p in pages)
            shown = shelf.volumes if path.name == shelf.page else [v for v in shelf.volumes if v.page == path.name]
            for vol in shown:
                assert all("".join(f"Plate{vol.plate_id(e)}".split()).upper() in text.upper() for e in vol.plates)
    finally:
        context.close()


def test_nu_checker_reports_no_error_on_the_top_page_and_every_index(series_site):
    pages = other_pages(series_site)[1]  # one start of the checker's JVM for them all; an error names its file
    run = subprocess.run([_checker(), *map(str, pages), "--log", "INFO"], capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "All good" in output, output
    assert f"Number of files: {len(pages)}" in output, output


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_plates_head_links_the_index_and_axe_finds_no_violation(new_page, series_site, axe_js, scheme):
    page, seen = opened(new_page, series_site / "index.html", bypass_csp=True, color_scheme=scheme)
    head = page.locator(".plate-head .volume a")
    assert head.count() == 2  # the series' top page, then the volume's index
    top, index = (head.nth(i).get_attribute("href") for i in range(2))
    shelf = volume.load_series(SERIES)
    assert top == volume.SERIES_PAGE
    assert index == next(v.page for v, e in shelf.written() if v.page_of(e) == "index.html")
    assert (series_site / index).is_file() and (series_site / top).is_file()
    page.add_script_tag(content=axe_js)
    assert page.evaluate(AXE_RUN, WCAG) == []


def test_a_new_plate_starts_live_and_its_words_follow_its_control(new_page, tmp_path):
    from conftest import wait_until
    from generator.plate import plates, texts
    from generator.site import build
    from generator.commands import scaffold
    scaffold.new(tmp_path / "p", "XIV", 6, "A new plate")
    build.build(tmp_path / "p", tmp_path / "site")
    c = content.load(tmp_path / "p")
    model = c.module.model_of(c)
    other = next(i for i in c.presets["rates"] if i != c.plate.default.rate)
    expected = texts.of(plates.load(tmp_path / "p" / plates.PACKAGE), model.facts(c.module.Selection(other)))
    page, seen = opened(new_page, tmp_path / "site" / "index.html")
    wait_until(page, "document.documentElement.dataset.ready")
    assert page.evaluate("document.documentElement.dataset.ready") == "true", seen["console"]
    page.select_option("#choose-rate", other)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{other}'")
    assert [p.text_content() for p in page.locator("#readout p").all()] == expected["readout"]
    rows = c.module.PAGE["datasets"](model.facts(c.module.Selection(other)))
    (name, expected_rows), = rows.items()  # the scaffold's one figure reads one dataset
    drawn = page.evaluate(f"window.plate.views[0].data('{name}').map(({{n, y}}) => ({{n, y}}))")
    assert drawn == expected_rows  # the figure follows too
    assert seen["console"] == []


SVG_DRAWN = """(svg) => [svg.getAttribute('viewBox'), [...svg.querySelectorAll('text')].map((t) => t.textContent),
  svg.querySelectorAll('path, line, rect').length]"""


def test_each_index_pictures_every_written_plate_by_its_own_figure_1_as_built(new_page, series_site):
    shelf = volume.load_series(SERIES)
    for vol in shelf.volumes:
        page, _ = opened(new_page, series_site / vol.page)
        pictured = {row.get_attribute("id"): row.locator(".volume-plate-picture svg").evaluate(SVG_DRAWN)
                    for row in page.locator(".volume-plate.pictured").all()}
        assert sorted(pictured) == sorted(f"plate-{e.number}" for e in vol.written())
        for entry in vol.written():
            plate = new_page(offline=True, java_script_enabled=False)  # the SVG as built, not live
            plate.goto((series_site / vol.page_of(entry)).resolve().as_uri())
            first = plate.locator("figure.figure .chart > svg").first.evaluate(SVG_DRAWN)
            assert pictured[f"plate-{entry.number}"] == first, (vol.id, entry.number)  # the same drawing, small


def test_every_plate_to_come_of_a_volume_whose_outline_titles_it_has_its_title(index):
    """Vol. XIV's index names each plate (the series' outline titles all eleven): no row reads "to come" alone."""
    assert [e.number for e in index[1].plates if not shown_title(index, e).strip()] == []
