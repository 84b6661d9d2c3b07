"""The engine's promises, held for every plate of the shipped series (plates/volume.toml): each page is valid HTML,
works offline under its CSP, passes axe, reads without JavaScript, prints within the README's budget, and builds
byte for byte the same twice. The volume's index is tested in test_volume_page.py."""
from __future__ import annotations

import base64
import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, SERIES, readme_pages, wait_until
from generator.source import content, volume
from generator.plate import texts
from generator.site import build
from test_accessibility import AXE_RUN, WCAG, axe_js  # noqa: F401 - axe_js: the fixture, by its name
from test_html_valid import _checker



def written() -> list[tuple[str, Path]]:
    """(page file, folder) of every written plate of the shipped series, every volume's."""
    shelf = volume.load_series(SERIES)
    return [(vol.page_of(entry), SERIES / entry.folder) for vol, entry in shelf.written()]


PAGES = [page for page, _ in written()]


def test_the_series_has_more_than_one_plate():
    """The engine's tests below run on every plate: at least XIV.4 and XIV.5."""
    assert len(PAGES) >= 2 and len(set(PAGES)) == len(PAGES)


def test_every_page_passes_the_nu_checker(series_site):
    pages = [str(series_site / page) for page in PAGES]
    run = subprocess.run([_checker(), *pages, "--log", "INFO"], capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == 0 and not [line for line in output.splitlines() if "error" in line.lower()], output
    assert f"Number of files: {len(pages)}" in output


@pytest.mark.parametrize("page", PAGES)
def test_every_inline_script_and_style_is_allowed_by_its_hash_and_nothing_else(series_site, page):
    html = (series_site / page).read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "unsafe-inline" not in policy and "default-src 'none'" in policy

    def allowed(code: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"
    scripts = re.findall(r'<script type="module">(.*?)</script>', html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert scripts and styles
    assert all(allowed(code) in policy for code in scripts + styles)
    assert not re.search(r"<script(?![^>]*type=\"(module|application/json|text/plain)\")", html)


def open_plate(new_page, site: Path, page: str, **options):
    """A page of the site opened from disk with the network off, in a page new_page(**context options) gives (the
    pool's, conftest.new_page); (page, what it logged, what it asked for)."""
    tab = new_page(offline=True, viewport={"width": 1100, "height": 900}, **options)
    logged, asked = [], []
    tab.on("console", lambda m: logged.append((m.type, m.text)))
    tab.on("pageerror", lambda e: logged.append(("pageerror", str(e))))
    tab.on("request", lambda r: asked.append(r.url))
    tab.goto((site / page).resolve().as_uri())
    return tab, logged, asked


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES)
def test_every_page_goes_live_offline_and_redraws_for_another_choice(series_site, new_page, page):
    tab, logged, asked = open_plate(new_page, series_site, page)
    wait_until(tab, "document.documentElement.dataset.ready")
    assert tab.evaluate("() => document.documentElement.dataset.ready") == "true", logged
    tab.evaluate("() => window.plate.live().then(() => true)")
    data = tab.evaluate("() => JSON.parse(document.getElementById('plate-data').textContent)")
    before = tab.evaluate("() => document.getElementById('readout').textContent")
    # another choice of every control that offers one: the readout follows, and every figure is a live view
    changed = False
    for key in data["keys"]:
        other = next((c for c in data["choices"][key] if c != data["default"][key] and c != "custom"), None)
        if other is None:
            continue
        tab.evaluate("(s) => window.plate.show(s)", {key: other})
        changed = changed or tab.evaluate("() => document.getElementById('readout').textContent") != before
    assert changed
    assert tab.evaluate("() => window.plate.views.length") == len(data["figures"])
    assert [u for u in asked if not u.startswith("file://")] == [] and len(set(asked)) == 1
    assert [m for m in logged if m[0] in ("error", "pageerror")] == []


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES)
def test_axe_finds_no_wcag_violation_on_any_plate(series_site, new_page, axe_js, page, scheme):  # noqa: F811
    tab, _, _ = open_plate(new_page, series_site, page, bypass_csp=True, color_scheme=scheme)
    wait_until(tab, "document.documentElement.dataset.ready")
    tab.evaluate("for (const d of document.querySelectorAll('details')) d.open = true")
    tab.add_script_tag(content=axe_js)
    assert tab.evaluate(AXE_RUN, WCAG) == []


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES)
def test_without_javascript_every_plate_shows_its_words_figures_and_tables(series_site, new_page, page):
    tab, _, _ = open_plate(new_page, series_site, page, java_script_enabled=False)
    figures = tab.locator("figure.figure").count()
    assert figures >= 1
    assert tab.locator("figure.figure .chart svg").count() == figures
    assert tab.locator("#readout p").count() >= 1 and tab.locator("#readout").inner_text().strip()
    assert tab.locator("[data-describe]").count() == figures
    assert all(tab.locator(f"[data-describe] >> nth={i}").text_content().strip() for i in range(figures))
    assert tab.locator("table[data-table] tbody tr").count() >= figures
    # the controls need the script: none shows (the form still holds the assumptions, open)
    controls = tab.locator("#controls .control")
    assert controls.count() >= 1
    assert not any(controls.nth(i).is_visible() for i in range(controls.count()))


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES)
def test_every_plate_prints_within_the_readmes_budget(series_site, print_browser, page):
    """With and without fonts-liberation (print_browser's two font sets), as the README promises."""
    from pypdf import PdfReader
    import io
    tab, _, _ = open_plate(lambda **o: print_browser.new_context(**o).new_page(), series_site, page)
    context = tab.context
    try:
        wait_until(tab, "document.documentElement.dataset.ready")
        for fmt, most in readme_pages().items():
            pages = len(PdfReader(io.BytesIO(tab.pdf(format=fmt))).pages)
            assert 1 <= pages <= most, (fmt, pages)
    finally:
        context.close()


def test_the_series_builds_byte_for_byte_the_same_twice(series_site, tmp_path):
    again = build.build(SERIES, tmp_path / "again")
    assert {name: (series_site / name).read_bytes() for name in again} == \
        {name: data if isinstance(data, bytes) else data.encode() for name, data in again.items()}


@pytest.mark.parametrize("page,folder", written())
def test_every_plate_is_its_own_content_and_module(page, folder):
    """Each written plate is a folder of content with a plate module of its own, loaded by the engine."""
    c = content.load(folder)
    assert c.module.FOLDER == folder.resolve() and (folder / "plate" / "__init__.py").is_file()
    assert c.plate.volume == next(v.id for v, e in volume.load_series(SERIES).written() if SERIES / e.folder == folder)


def words_of(folder: Path) -> tuple[Path, list[str]]:
    """A plate's words module and its text pieces: the Python its PAGE's readout is written in (which the page runs
    compiled), else its page/words.js."""
    from test_texts import python_pieces
    module = content.load(folder).module
    page = texts.page_of(module)
    if page is not None:
        # A copy of the same code loaded first (a test's copy of the series) is the module whose files Python names.
        loaded = Path(page["readout"].__code__.co_filename).relative_to(module._module.FOLDER)
        path = folder.resolve() / loaded
        return path, python_pieces(path.read_text(encoding="utf-8"))
    from test_texts import js_pieces
    path = folder / "page" / "words.js"
    return path, js_pieces(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page,folder", written())
def test_no_sentence_of_a_plates_words_is_written_twice(page, folder):
    """Every sentence piece of a plate's words (its PAGE's words module, or page/words.js) appears nowhere else: not
    in its plate module's other Python, not in the engine's, not in a page module of the engine or the plate."""
    from test_texts import js_code, python_pieces
    words, pieces = words_of(folder)
    chunks = {p.strip(" .,;:()") for p in pieces if len(p.strip(" .,;:()").split()) >= 4}  # sentences, not phrases
    assert len(chunks) >= 5  # the readout and the figures' descriptions
    others = {f"{p.parent.name}/{p.name}": p.read_text(encoding="utf-8")
              for p in [*sorted(ROOT.glob("generator/*.py")), *sorted(ROOT.glob("generator/*/*.py")),
                        *sorted((folder / "plate").glob("*.py")),
                        *sorted((ROOT / "templates" / "page").glob("*.js")), *sorted((folder / "page").glob("*.js"))]
              if p != words}
    code = {name: "\n".join(python_pieces(text)) if name.endswith(".py") else js_code(text)
            for name, text in others.items()}
    assert sorted((name, chunk) for chunk in chunks for name, text in code.items() if chunk in text) == []
