"""`plate pdf`: the plate printed by the system's Chromium into the site as A4 and Letter PDFs."""
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from conftest import CONTENT, FONT_SETS, ROOT, chromium_path, font_env, made_once, require, within_print_budget
from generator.source import content, volume
from generator.site import pdf

# Points per inch; pypdf reports the media box in points.
PAPER_POINTS = {"A4": (595.3, 841.9), "Letter": (612, 792)}


def plate(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "generator", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=300)


@pytest.mark.browser
def test_pdf_prints_the_chosen_selection_on_a4_and_letter(tmp_path):
    if chromium_path() is None and not os.environ.get("CI"):
        pytest.skip("Chromium is not on PATH")
    presets = content.load(CONTENT).presets
    default = content.load(CONTENT).plate.default
    # Another model and batch than the default's, named from the content.
    model = next(m for m in presets.models if m != default.model)
    batch = next(b for b in presets.batches if b != default.batch)
    out = tmp_path / "site"
    result = plate("pdf", "--content", CONTENT, "--out", out, "--select", f"model={model},batch={batch}", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    front = content.load(CONTENT).plate
    names = pdf.pdf_names("index")  # one plate's site: its page is index.html
    for paper, name in names.items():
        reader = PdfReader(io.BytesIO((out / name).read_bytes()))
        pages = len(reader.pages)
        assert f"printed {out / name}: {pages} pages ({paper})" in result.stdout
        width, height = (float(v) for v in reader.pages[0].mediabox[2:])
        assert abs(width - PAPER_POINTS[paper][0]) < 2 and abs(height - PAPER_POINTS[paper][1]) < 2
        caption = f"{presets.models[model].name} · {presets.batches[batch].name} · " \
                  f"{presets.networks[default.network].short}"
        assert text_holds(reader, lambda text: caption in text), caption
    assert (out / "index.html").exists() and (out / front.data_file).exists()


@pytest.mark.browser
@pytest.mark.parametrize("font_set", FONT_SETS)
def test_the_default_prints_within_the_readmes_page_budget(tmp_path, font_set):
    if chromium_path() is None and not os.environ.get("CI"):
        pytest.skip("Chromium is not on PATH")
    out = tmp_path / "site"
    result = plate("pdf", "--content", CONTENT, "--out", out, cwd=ROOT, env=font_env(font_set, tmp_path))
    assert result.returncode == 0, result.stderr
    for paper, name in pdf.pdf_names("index").items():
        pages = len(PdfReader(io.BytesIO((out / name).read_bytes())).pages)
        assert within_print_budget(pages, paper), (paper, pages)
        assert pdf.page_count((out / name).read_bytes()) == pages  # the count plate reports, without pypdf


def test_missing_chromium_is_said_clearly_before_building(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    result = plate("pdf", "--out", tmp_path / "site", cwd=ROOT, env={"PATH": str(empty)})
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Chromium is not installed" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "site").exists()


def test_an_unknown_selection_is_refused_with_the_known_ids(tmp_path):
    models = list(content.load(CONTENT).presets.models)
    result = plate("pdf", "--content", CONTENT, "--out", tmp_path / "site", "--select", "model=nope", cwd=ROOT)
    assert result.returncode == 2 and not (tmp_path / "site").exists()
    assert f"no model 'nope' among the presets (known: {', '.join(models)})" in result.stderr
    result = plate("pdf", "--content", CONTENT, "--out", tmp_path / "site", "--select", "gpu=x", cwd=ROOT)
    assert result.returncode == 2 and "--select takes model=<id>" in result.stderr


def test_a_selection_for_a_series_is_refused_in_one_line(tmp_path):
    result = plate("pdf", "--out", tmp_path / "site", "--select", "model=x", cwd=ROOT)  # the series, by default
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and not (tmp_path / "site").exists()
    assert "--select chooses one plate's presets" in result.stderr and "give --content one plate's folder" in \
        result.stderr


# --- the series: `plate pdf` prints every plate into the site, and a later `plate build` keeps or remakes the PDFs ---

def plate_pages(root: Path) -> dict[str, tuple[Path, str]]:
    """{page: (the plate's folder, its CSV)} of every written plate of the series at root, as its volume files name
    them."""
    return {vol.page_of(e): (vol.folder(e), content.load(vol.folder(e)).plate.data_file)
            for vol, e in volume.load_series(root).written()}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def linked_pdfs(html: bytes) -> set[str]:
    """The PDFs in the site a page links (a source's PDF elsewhere is an outside address)."""
    return set(re.findall(r'href="([^":/]+\.pdf)"', html.decode("utf-8")))


def add_prose(plate_md: Path, text: str) -> None:
    """Append a paragraph to a plate's prose (its last part, after the figures)."""
    plate_md.write_text(plate_md.read_text(encoding="utf-8") + f"\n{text}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """One copy of the series, printed once (plate pdf): its result and the site after it; made once for the whole
    run (conftest.made_once)."""
    require(None if chromium_path() else "Chromium is not on PATH (Debian package 'chromium')")
    return made_once(tmp_path_factory, "series-pdf", print_series)


@pytest.fixture(scope="module")
def runs(printed, tmp_path_factory):
    """The printed series and its site, copied, then built again four times: unchanged, after a plate's prose was
    edited, with a mistake, and edited again without Chromium; each run's result and the site after it (with
    printed's), made once for the whole run."""
    return made_once(tmp_path_factory, "series-pdf-builds", lambda base: build_again(printed, base))


def series_runs(root: Path, out: Path) -> dict:
    """What the runs below need to know of the series copied at root and built into out."""
    pages = plate_pages(root)
    shelf = volume.load_series(root)
    return {"out": out, "pages": pages, "index": volume.load(root).page, "edited page": list(pages)[-1],
            "indexes": [v.page for v in shelf.volumes] + [shelf.page]}  # each volume's and the top page


def run_plate(made: dict, name: str, root: Path, *args, env=None) -> None:
    made[name] = plate(*args, "--content", root, "--out", made["out"], cwd=ROOT, env=env)
    made[f"{name} site"] = snapshot(made["out"])


def print_series(base: Path) -> dict:
    """The series copied into base and printed by plate pdf."""
    root = base / "plates"
    shutil.copytree(ROOT / "plates", root)
    made = series_runs(root, base / "site")
    run_plate(made, "pdf", root, "pdf")
    return made


def build_again(printed: dict, base: Path) -> dict:
    """printed's series and site copied into base, then built again as runs says."""
    root = base / "plates"
    shutil.copytree(printed["out"].parent / "plates", root)
    shutil.copytree(printed["out"], base / "site")
    made = {**series_runs(root, base / "site"), "pdf": printed["pdf"], "pdf site": printed["pdf site"]}
    plate_md = made["pages"][made["edited page"]][0] / "plate.md"
    run_plate(made, "build", root, "build")
    add_prose(plate_md, "A paragraph added by hand, Quillwort.")
    run_plate(made, "edited", root, "build")
    kept = plate_md.read_text(encoding="utf-8")
    add_prose(plate_md, "A slot that names no fact: {{ default.no_such_fact }}.")
    run_plate(made, "failed", root, "build")
    plate_md.write_text(kept, encoding="utf-8")
    add_prose(plate_md, "Another paragraph, Hornwort.")
    no_chromium = {"PLATE_CHROMIUM": str(base / "no-chromium")}
    run_plate(made, "without chromium", root, "build", env=no_chromium)
    shutil.copytree(made["out"], base / "copy")
    made["one page"] = list(made["pages"])[0]
    one = made["pages"][made["one page"]][0]
    add_prose(one / "plate.md", "A paragraph of this plate alone, Bladderwort.")  # its page changes, no other
    made["one plate"] = plate("build", "--content", one, "--out", base / "copy", cwd=ROOT, env=no_chromium)
    made["one plate site"] = snapshot(base / "copy")
    return made


def pdf_pages(data: bytes) -> int:
    return len(PdfReader(io.BytesIO(data)).pages)


def text_holds(reader: PdfReader, found, squeeze: bool = True, from_end: bool = False) -> bool:
    """found(text) on the PDF's text (its pages' texts joined by spaces, each page's whitespace collapsed when
    squeeze), extracting pages only until found() holds: from the first page on, or from the last one back
    (from_end). A string found in the text so far is in the whole text, so the answer is found(the whole text)
    whenever found is a test of substrings."""
    pages = list(reader.pages)
    text = ""
    for page in reversed(pages) if from_end else pages:
        part = page.extract_text()
        part = " ".join(part.split()) if squeeze else part
        text = (f"{part} {text}" if from_end else f"{text} {part}") if text else part
        if found(text):
            return True
    return False


@pytest.mark.browser
def test_plate_pdf_prints_every_plate_of_the_series_into_the_site(printed):
    assert printed["pdf"].returncode == 0, printed["pdf"].stderr
    site, out = printed["pdf site"], printed["out"]
    assert printed["index"] in site
    for page, (_, csv) in printed["pages"].items():
        assert page in site and csv in site
        for paper, name in pdf.pdf_names(Path(page).stem).items():
            assert site[name].startswith(b"%PDF-")
            count = pdf_pages(site[name])
            assert f"plate: printed {out / name}: {count} page{'s' if count != 1 else ''} ({paper})\n" in \
                printed["pdf"].stdout
    assert sum(name.endswith(".pdf") for name in site) == 2 * len(printed["pages"])


@pytest.mark.browser
def test_each_page_links_its_own_pdfs_and_no_other(printed):
    site = printed["pdf site"]
    for page in printed["pages"]:
        assert linked_pdfs(site[page]) == set(pdf.pdf_names(Path(page).stem).values()), page
    assert linked_pdfs(site[printed["index"]]) == set()


@pytest.mark.browser
def test_the_printed_pdfs_name_and_link_their_files_beside_the_page(printed):
    for page in printed["pages"]:
        names = list(pdf.pdf_names(Path(page).stem).values())
        for name in names:
            reader = PdfReader(io.BytesIO(printed["pdf site"][name]), strict=True)  # its offsets moved right
            # every object the table lists read at its offset (strict: one moved wrong is refused), the pages'
            # contents included, though text_holds may extract the text of the first page only
            assert all(reader.get_object(n) is not None for n in range(1, reader.trailer["/Size"])), name
            assert text_holds(reader, lambda text: all(f"({other})" in text for other in names)), \
                (name, " ".join(reader.pages[0].extract_text().split())[:300])
            uris = [a.get_object()["/A"]["/URI"] for p in reader.pages for a in p.get("/Annots") or []
                    if "/URI" in a.get_object().get("/A", {})]
            assert set(names) <= set(uris), uris
            assert not [uri for uri in uris if uri.startswith("file:")], uris


@pytest.mark.browser
def test_a_later_build_keeps_the_pdfs_and_says_so(runs):
    assert runs["build"].returncode == 0, runs["build"].stderr
    for page in runs["pages"]:
        names = ", ".join(pdf.pdf_names(Path(page).stem).values())
        assert f"plate: kept {names} ({page} unchanged)\n" in runs["build"].stdout
    assert runs["build site"] == runs["pdf site"]  # every file as plate pdf wrote it, the PDFs included


@pytest.mark.browser
def test_a_changed_page_is_printed_again_and_the_build_says_so(runs):
    result, site, edited = runs["edited"], runs["edited site"], runs["edited page"]
    assert result.returncode == 0, result.stderr
    names = list(pdf.pdf_names(Path(edited).stem).values())
    assert f"plate: printed {', '.join(names)} again ({edited} changed)\n" in result.stdout
    for name in names:
        assert text_holds(PdfReader(io.BytesIO(site[name])), lambda text: "Quillwort" in text, squeeze=False,
                          from_end=True), name  # the paragraph added at the end of the prose
    assert linked_pdfs(site[edited]) == set(names)
    for page in runs["pages"]:
        if page != edited:
            for name in pdf.pdf_names(Path(page).stem).values():
                assert site[name] == runs["pdf site"][name]


@pytest.mark.browser
def test_a_failed_build_leaves_the_site_and_its_pdfs_as_they_were(runs):
    assert runs["failed"].returncode == 1 and "no_such_fact" in runs["failed"].stderr
    assert runs["failed site"] == runs["edited site"]


@pytest.mark.browser
def test_without_chromium_a_changed_pages_pdfs_are_dropped_and_unlinked(runs):
    result, site, edited = runs["without chromium"], runs["without chromium site"], runs["edited page"]
    assert result.returncode == 0, result.stderr
    names = list(pdf.pdf_names(Path(edited).stem).values())
    assert f"plate: dropped {', '.join(names)}, and {edited} links no PDF ({edited} changed; they cannot be " \
           f"printed again: PLATE_CHROMIUM names" in result.stdout
    assert not set(names) & set(site) and linked_pdfs(site[edited]) == set()
    for page in runs["pages"]:
        if page != edited:
            assert linked_pdfs(site[page]) == set(pdf.pdf_names(Path(page).stem).values())
            assert all(site[name] == runs["pdf site"][name] for name in linked_pdfs(site[page]))


@pytest.mark.browser
def test_one_plate_built_into_the_series_site_keeps_every_other_file_byte_for_byte(runs):
    """`plate build --content plates/<one plate>` over the series' site with its PDFs: that plate's page is made
    again (as the series names it), and every other plate's page, PDFs and CSV, the indexes and the top page stay
    byte for byte; the plate's own PDFs, printing a page that changed, are dropped without Chromium."""
    result, before, after, page = runs["one plate"], runs["without chromium site"], runs["one plate site"], \
        runs["one page"]
    assert result.returncode == 0, result.stderr
    assert "replaced a site with more pages" not in result.stdout
    own = {page, *pdf.pdf_names(Path(page).stem).values()}
    assert set(after) == set(before) - (own - {page})  # nothing of another plate's is gone
    changed = {name for name in before if name in after and after[name] != before[name]}
    assert changed == {page, ".plate-site", ".plate-prints.json"}, changed
    assert b"Bladderwort" in after[page] and b"Bladderwort" not in before[page]
    assert any(name.endswith(".pdf") for name in after) and all(after[n] == before[n] for n in after
                                                                if n.endswith(".pdf"))
    for index in runs["indexes"]:
        assert after[index] == before[index]
