"""`plate pdf`: the plate printed by the system's Chromium into the site as A4 and Letter PDFs."""
import io
import os
import subprocess
import sys

import pytest
from pypdf import PdfReader

from conftest import CONTENT, FONT_SETS, ROOT, chromium_path, font_env, within_print_budget
from generator import content, pdf

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
    names = pdf.pdf_names(front.data_file.removesuffix(".csv"))
    for paper, name in names.items():
        reader = PdfReader(io.BytesIO((out / name).read_bytes()))
        pages = len(reader.pages)
        assert f"printed {out / name}: {pages} pages ({paper})" in result.stdout
        width, height = (float(v) for v in reader.pages[0].mediabox[2:])
        assert abs(width - PAPER_POINTS[paper][0]) < 2 and abs(height - PAPER_POINTS[paper][1]) < 2
        text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
        caption = f"{presets.models[model].name} · {presets.batches[batch].name} · " \
                  f"{presets.networks[default.network].short}"
        assert caption in text, caption
    assert (out / "index.html").exists() and (out / front.data_file).exists()


@pytest.mark.browser
@pytest.mark.parametrize("font_set", FONT_SETS)
def test_the_default_prints_within_the_readmes_page_budget(tmp_path, font_set):
    if chromium_path() is None and not os.environ.get("CI"):
        pytest.skip("Chromium is not on PATH")
    out = tmp_path / "site"
    result = plate("pdf", "--content", CONTENT, "--out", out, cwd=ROOT, env=font_env(font_set, tmp_path))
    assert result.returncode == 0, result.stderr
    for paper, name in pdf.pdf_names(content.load(CONTENT).plate.data_file.removesuffix(".csv")).items():
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
    result = plate("pdf", "--out", tmp_path / "site", "--select", "gpu=x", cwd=ROOT)
    assert result.returncode == 2 and "--select takes model=<id>" in result.stderr
