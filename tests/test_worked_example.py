"""docs/plates.md's worked example, the pipeline bubble, as an author would follow it: `plate new` in a temporary
series, every block of the section applied in order, `plate check`, a build, and the page driven in Chromium. The
expected numbers come from the bubble's formula, written here independently of the example's code."""
from __future__ import annotations

import json
import re
import tomllib

import pytest

from conftest import ROOT, current, wait_until
from generator.source import content
from generator.plate import texts
from generator.site import build
from generator.commands import cli

DOC = ROOT / "docs" / "plates.md"
SECTION = "## From the scaffold to a plate: the pipeline bubble"
BLOCK = re.compile(r"<!-- (file|replace): (\S+) -->\n```\w*\n(.*?)```\n", re.S)
DECLARATIONS = re.compile(r"# --- the plate's declarations.*?# --- end of the plate's declarations -+\n", re.S)


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:] if end < 0 else text[start:end]


def blocks() -> list[tuple[str, str, str]]:
    """(kind, path, text) of every block the section tells the author to write, in order."""
    found = BLOCK.findall(section())
    assert found, "the worked example lost its blocks"
    return found


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example plate, made as the section says, in a series of its own; its folder and its built site."""
    series = tmp_path_factory.mktemp("example") / "plates"
    series.mkdir()
    volume = (ROOT / "plates" / "volume.toml").read_text(encoding="utf-8")
    (series / "volume.toml").write_text(re.sub(r"^(folder|page) = .*\n", "", volume, flags=re.M), encoding="utf-8")
    command = re.search(r"^plate (new .*)$", section(), re.M)[1].replace('"Pipeline Parallelism"', "Pipeline Parallelism")
    args = command.split()[:7] + [" ".join(command.split()[7:])]
    folder = series / "xiv-8-pipeline"
    assert cli.main([args[0], str(series.parent / args[1]), *args[2:]]) == 0
    for kind, path, text in blocks():
        target = folder / path
        if kind == "file":
            target.write_text(text, encoding="utf-8")
        else:  # the declarations block of the scaffold's plate/__init__.py, replaced whole
            old = target.read_text(encoding="utf-8")
            assert len(DECLARATIONS.findall(old)) == 1 and DECLARATIONS.fullmatch(text)
            target.write_text(DECLARATIONS.sub(lambda _: text, old), encoding="utf-8")
    site = series.parent / "site"
    build.build(folder, site)
    return folder, site


def bubble(p: int, m: int) -> float:
    """The idle share of a pipeline step, as the section states it: (p − 1)/(m + p − 1)."""
    return (p - 1) / (m + p - 1)


def test_the_example_checks_clean_and_has_no_javascript(example, capsys):
    folder, _ = example
    assert cli.main(["check", "--content", str(folder)]) == 0
    assert "mistake" not in capsys.readouterr().err
    assert not list(folder.rglob("*.js"))  # content and Python alone


def test_every_choice_computes_the_bubble_the_formula_gives(example):
    folder, site = example
    c = content.load(folder)
    presets = tomllib.loads((folder / "presets.toml").read_text(encoding="utf-8"))
    page = texts.page_of(c.module)
    for ident, stages in presets["stages"].items():
        f = page["facts"]({"stages": ident}, c.presets)
        rows = page["datasets"](f)["bubble"]
        ms = [row["m"] for row in rows]
        assert ms[0] == 1 and ms[-1] == presets["settings"]["max_micro_batches"]
        assert [row["bubble"] for row in rows] == [bubble(stages["p"], m) for m in ms]
        smallest = next(m for m in range(1, 10_000) if bubble(stages["p"], m) <= 0.1 + 1e-12)
        assert f["tenth"] == smallest  # the readout's "falls to 10% from" count
    csv = (site / c.plate.data_file).read_text(encoding="utf-8").splitlines()
    assert len(csv) == 1 + len(presets["stages"]) * len(ms)


@pytest.mark.browser
def test_the_example_page_follows_its_control_in_the_browser(example, open_page):
    folder, site = example
    c = content.load(folder)
    page_fns = texts.page_of(c.module)
    watched = open_page(site)
    page = watched.page
    data = json.loads(page.locator("#plate-data").text_content())
    assert data["default"] == {"stages": "p4"}
    for ident in [i for i in data["choices"]["stages"] if i != "p4"]:
        page.select_option("#choose-stages", ident)
        current(page)  # what waits out of sight too
        wait_until(page, f"document.documentElement.dataset.shown === '{ident}'")
        f = page_fns["facts"]({"stages": ident}, c.presets)
        shown = [p.text_content() for p in page.locator("#readout p").all()]
        assert shown == page_fns["readout"](f, {})
        drawn = page.evaluate("window.plate.views[0].data('bubble').map(({m, bubble}) => ({m, bubble}))")
        assert drawn == page_fns["datasets"](f)["bubble"]
        wait_until(page, f"location.href.includes('stages={ident}')")  # the URL keeps the choice (written after the draw)
    assert watched.problems() == [] and watched.outside_requests(site) == []
