"""Plate XIV.5 built by the engine (`plate build --content plates/xiv-5-sharded-data-parallelism`): the page as
built carries the plate's words for the default, and the live page, after a control changes, says what the build's
words say for that selection."""
from __future__ import annotations

import html
import re
import time
from dataclasses import replace

import pytest
from conftest import current, open_disclosure

from generator.plate import charts
from generator.site import build
from xiv5_support import FOLDER, default, plate_facts, plate_figures, plate_words, presets  # noqa: F401
from xiv5_support import braid_problems, data, page_words


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("x5") / "site"
    build.build(FOLDER, out)
    return out


def plates_of() -> dict:
    """plate.md's [plates], the cross-references the words name."""
    return plate_facts.front_matter(FOLDER).get("plates", {})


def test_the_page_as_built_carries_the_default_s_words(site, presets, default):
    page = html.unescape((site / "index.html").read_text(encoding="utf-8"))
    words = plate_words.of(plate_facts.facts(presets, default), plates_of())
    shown = re.findall(r'<p data-readout="\d+">(.*?)</p>', page, re.S)
    assert shown == words["readout"] and len(shown) == 2
    for fid in plate_words.FIGURES:
        described = re.search(rf'data-describe="{fid}">(.*?)</p>', page, re.S)
        assert described and described[1] == words["describe"][fid]
        body = re.search(rf'<table data-table="{fid}">.*?<tbody>(.*?)</tbody>', page, re.S)[1]
        rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
        assert rows == words["tables"][fid]
    for fid in ("fig-states", "fig-traffic"):  # the static figures, with their own words
        assert f'id="{fid}"' in page


def wait(page, expression: str, seconds: float = 60) -> None:
    """Poll an expression in the page (the page's CSP refuses Playwright's eval-based wait_for_function)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if page.evaluate(expression):
            return
        time.sleep(0.05)
    raise AssertionError(f"not true within {seconds} s: {expression}")


def test_the_live_page_says_what_the_build_says_after_each_control_changes(site, presets, default, browser):
    """Each control changed in turn in the session's Chromium (tests/conftest.py): the page says what the build says."""
    gpus = plate_facts.gpus_of(presets)
    # a change of each control, one after another, every id other than the default's where one exists
    other = lambda ids, now: next((i for i in ids if i != now), now)  # noqa: E731
    steps = [("stage", other(list(plate_facts.STAGES)[::-1], default.stage)),
             ("precision", other(plate_facts.PRECISIONS, default.precision)),
             ("gpu", other(list(gpus)[::-1], default.gpu)),
             ("model", other(list(presets.models)[::-1], default.model)),
             ("network", other(presets.networks, default.network))]
    context = browser.new_context()
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((site / "index.html").as_uri())
        wait(page, "document.documentElement.dataset.ready === 'true'")
        open_disclosure(page)  # the controls past the first three fold into it, as a reader reaching for one opens it
        sel = default
        for key, value in steps:
            sel = replace(sel, **{key: value})
            page.select_option(f"#choose-{key}", value)
            key_shown = "|".join(getattr(sel, k) for k in plate_facts.CONTROLS)
            current(page)  # the tables of closed "in words and numbers" wait for the reader: brought now
            wait(page, f"document.documentElement.dataset.shown === {key_shown!r}")
            shown = page.evaluate("""() => ({
              readout: [...document.querySelectorAll('#readout p')].map((p) => p.textContent),
              describe: Object.fromEntries([...document.querySelectorAll('[data-describe]')]
                .map((el) => [el.dataset.describe, el.textContent])),
              tables: Object.fromEntries([...document.querySelectorAll('[data-table]')].map((t) => [t.dataset.table,
                [...t.tBodies[0].rows].map((tr) => [...tr.cells].map((c) => c.textContent))])),
              live: [...document.querySelectorAll('.chart')].map((c) => c.dataset.live),
              labels: [...document.querySelectorAll('#fig-traffic .chart text')].map((t) => t.textContent),
              stages: [...document.querySelectorAll('#fig-traffic .stages_marks path')].map((p) => ({
                stroke: p.getAttribute('stroke'), dash: p.getAttribute('stroke-dasharray'),
                offset: p.getAttribute('stroke-dashoffset')})),
            })""")
            f = plate_facts.facts(presets, sel)
            words = plate_words.of(f, plates_of())
            assert shown["readout"] == words["readout"], sel
            assert shown["describe"] == words["describe"], sel
            assert shown["tables"] == words["tables"], sel
            assert shown["live"] == ["true", "true"], sel  # the figures are Vega views, redrawn
            for row in plate_figures.rows(f)[plate_figures.TRAFFIC_LABELS]:  # the traffic figure's labels follow the precision
                assert row["text"] in shown["labels"], (sel, shown["labels"])
            # the live figure braids the stages the selection groups as the static one does (test_xiv5_figures)
            groups = [g for g, _ in page_words.same_traffic(data(f))]
            ink = {charts.ink(name): k for k, name in enumerate(plate_figures.STAGE_INK)}
            assert sorted(ink[p["stroke"]] for p in shown["stages"]) == [0, 1, 2, 3], shown["stages"]
            assert braid_problems(shown["stages"], ink, groups, 2 * plate_figures.SELECTED_WIDTH) == \
                [[] for _ in groups], (sel, shown["stages"])
        assert errors == []
    finally:
        context.close()


def test_a_copy_without_the_series_catalogue_beside_it_is_one_clear_mistake(tmp_path):
    """XIV.5 reads the series catalogue (series.toml) beside its folder: copied alone, the build says so."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    shutil.copytree(root / "plates" / "xiv-5-sharded-data-parallelism", tmp_path / "xiv-5-copy")
    done = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(tmp_path / "xiv-5-copy"),
                           "--out", str(tmp_path / "site")], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 1, done.stderr
    assert "xiv-5-copy/presets.toml: file is missing: a plate reads its models, GPUs and networks from the series' " \
           "series.toml beside its folder" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "site").exists()
