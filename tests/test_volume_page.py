"""The volume's index page in Chromium and the Nu checker: its style allowed by its own CSP, offline, dark mode, axe,
and one printed page; a volume made from the shipped plate's front matter, that plate built, the others to come."""
import io
import subprocess

import pytest
from pypdf import PdfReader

from conftest import CONTENT
from test_html_valid import _checker
from generator import content, volume

pytestmark = pytest.mark.browser

# axe-core as tests/test_accessibility.py fetches and runs it
from test_accessibility import AXE_RUN, WCAG, axe_js  # noqa: E402,F401 - axe_js: the fixture, by its name


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """The index page written into a site folder: (its path, the plate built)."""
    plate = content.load(CONTENT).plate
    root = tmp_path_factory.mktemp("series")
    rows = []
    for n in range(1, plate.plates_in_volume + 1):
        row = f"[[plates]]\nnumber = {n}\n"
        if n == plate.plate:
            row += 'folder = "built"\n'
        elif n % 3 == 0:
            row += f'title = "A plate to come, number {n}, whose title is long enough to wrap on a phone"\n'
        rows.append(row)
    head = f'[volume]\nid = "{plate.volume}"\ntitle = "{plate.volume_title}"\n\n'
    (root / "volume.toml").write_text(head + "\n".join(rows), encoding="utf-8")
    (root / "built").mkdir()
    (root / "built" / "plate.md").write_bytes((CONTENT / "plate.md").read_bytes())
    v = volume.load(root)
    site = root / "site"
    site.mkdir()
    page = site / v.page
    page.write_text(volume.index_html(v, {plate.plate: ("index.html", plate.title, plate.deck)}), encoding="utf-8")
    return page, plate


def opened(browser, page_path, **options):
    context = browser.new_context(offline=True, **{"viewport": {"width": 1100, "height": 900}, **options})
    page = context.new_page()
    seen = {"console": [], "requests": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.goto(page_path.resolve().as_uri())
    return context, page, seen


def test_the_style_applies_under_the_pages_own_csp_offline(browser, index):
    context, page, seen = opened(browser, index[0])
    try:
        assert seen["console"] == []  # a style the CSP refused would be reported here
        assert page.evaluate("getComputedStyle(document.querySelector('.volume-plates')).listStyleType") == "none"
        assert seen["requests"] == [index[0].resolve().as_uri()]
        link = page.get_by_role("link", name=index[1].title)
        assert link.get_attribute("href") == "index.html"
    finally:
        context.close()


def test_dark_mode_follows_the_readers_setting(browser, index):
    backgrounds = {}
    for scheme in ("light", "dark"):
        context, page, _ = opened(browser, index[0], color_scheme=scheme)
        backgrounds[scheme] = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        context.close()
    assert backgrounds["light"] != backgrounds["dark"]


@pytest.mark.parametrize("scheme, width", [("light", 1100), ("dark", 1100), ("dark", 360)])
def test_axe_finds_no_wcag_violation(browser, index, axe_js, scheme, width):
    context, page, _ = opened(browser, index[0], bypass_csp=True, color_scheme=scheme,
                              viewport={"width": width, "height": 740})
    try:
        page.add_script_tag(content=axe_js)
        assert page.evaluate(AXE_RUN, WCAG) == []
    finally:
        context.close()


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_index_prints_on_one_page_naming_each_built_pages_file(print_browser, index, paper):
    context = print_browser.new_context(offline=True)
    try:
        page = context.new_page()
        page.goto(index[0].resolve().as_uri())
        page.emulate_media(media="print")
        pages = PdfReader(io.BytesIO(page.pdf(format=paper))).pages
        assert len(pages) == 1
        text = " ".join(pages[0].extract_text().split())
        assert "(index.html)" in text and index[1].title in text
    finally:
        context.close()


def test_nu_checker_reports_no_error(index):
    run = subprocess.run([_checker(), str(index[0]), "--log", "INFO"], capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    errors = [line for line in output.splitlines() if "error" in line.lower()]
    assert run.returncode == 0 and errors == [], output
    assert "All good" in output


@pytest.fixture(scope="module")
def series_site(tmp_path_factory):
    """The shipped series built: the plate's page, its head linking the volume's index."""
    from conftest import ROOT
    from generator import build
    out = tmp_path_factory.mktemp("series") / "site"
    build.build(ROOT / "plates", out)
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_plates_head_links_the_index_and_axe_finds_no_violation(browser, series_site, axe_js, scheme):
    context, page, seen = opened(browser, series_site / "index.html", bypass_csp=True, color_scheme=scheme)
    try:
        head = page.locator(".plate-head .volume a")
        assert head.count() == 1
        index = head.get_attribute("href")
        assert (series_site / index).is_file()
        page.add_script_tag(content=axe_js)
        assert page.evaluate(AXE_RUN, WCAG) == []
    finally:
        context.close()


def test_a_new_plate_starts_live_and_its_words_follow_its_control(browser, tmp_path):
    from conftest import wait_until
    from generator import build, plates, scaffold, texts
    scaffold.new(tmp_path / "p", "XIV", 6, "A new plate")
    build.build(tmp_path / "p", tmp_path / "site")
    c = content.load(tmp_path / "p")
    model = c.module.model_of(c)
    other = next(i for i in c.presets.rates if i != c.plate.default.rate)
    expected = texts.of(plates.load(tmp_path / "p" / plates.PACKAGE), model.facts(c.module.Selection(other)))
    context, page, seen = opened(browser, tmp_path / "site" / "index.html")
    try:
        wait_until(page, "document.documentElement.dataset.ready")
        assert page.evaluate("document.documentElement.dataset.ready") == "true", seen["console"]
        page.select_option("#choose-rate", other)
        wait_until(page, f"document.documentElement.dataset.shown === '{other}'")
        assert [p.text_content() for p in page.locator("#readout p").all()] == expected["readout"]
        drawn = page.evaluate(f"window.plate.views[0].data('{c.module.LINE_DATA}').map(({{n, y}}) => ({{n, y}}))")
        assert drawn == c.module.rows(model.facts(c.module.Selection(other)))  # the figure follows too
        assert seen["console"] == []
    finally:
        context.close()
