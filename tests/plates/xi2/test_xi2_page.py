"""Plate XI.2's page, built alone from its folder: content and Python only, `plate check` clean, the compiled page
computing what the Python computes, and the engine's promises of every shipped plate (tests/test_every_plate.py's
checks, run here on this page until the series lists it): valid, CSP-clean, offline, axe-clean, readable without
JavaScript, within the print budget; in Chromium, the readout and the figures follow the controls."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import current, wait_until
from generator.plate import texts
from generator.site import build
from generator.commands import cli
from generator.page.notation import num
from test_compiler import agree, page_data, perturbed, selections
from test_every_plate import (  # the engine's promises, held for this page as for the listed ones
    test_axe_finds_no_wcag_violation_on_any_plate as axe_clean,
    test_every_inline_script_and_style_is_allowed_by_its_hash_and_nothing_else as csp_clean,
    test_every_page_goes_live_offline_and_redraws_for_another_choice as goes_live,
    test_every_plate_prints_within_the_readmes_budget as prints_within_budget,
    test_without_javascript_every_plate_shows_its_words_figures_and_tables as reads_without_javascript)
from test_accessibility import axe_js  # noqa: F401 - the fixture, by its name
from test_html_valid import _checker
from xi2_support import FOLDER, default_ids, facts, loaded, presets, submodule

PAGE = "index.html"  # a plate built alone


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("xi2") / "site"
    build.build(FOLDER, out)
    return out


def test_the_plate_is_content_and_python_and_checks_clean(capsys):
    assert not [p for p in FOLDER.rglob("*") if p.suffix in (".js", ".mjs")]
    assert cli.main(["check", "--content", str(FOLDER)]) == 0
    said = capsys.readouterr()
    assert "no mistakes (0 warnings)" in said.out + said.err, said


def test_the_compiled_page_gives_what_the_python_gives(site, tmp_path):
    data = page_data((site / PAGE).read_text(encoding="utf-8"))
    sels = selections(data, 20, 7)
    assert {k for k in data["keys"] + data["cluster_keys"]} == set(data["choices"])
    assert agree(loaded().module, data, sels, data["presets"], tmp_path)[:20] == []


def test_the_compiled_page_agrees_on_random_presets(site, tmp_path):
    """Every number of the presets scaled at random (test_compiler's perturbed), random selections."""
    import random
    data = page_data((site / PAGE).read_text(encoding="utf-8"))
    rng = random.Random(2031)
    problems = []
    for round_ in range(6):
        sels = selections(data, 4, round_)[-4:]
        problems += agree(loaded().module, data, sels, perturbed(data["presets"], rng), tmp_path / str(round_))
    assert problems[:20] == []


def test_the_page_passes_the_nu_checker(site):
    run = subprocess.run([_checker(), str(site / PAGE), "--log", "INFO"], capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == 0 and not [line for line in output.splitlines() if "error" in line.lower()], output


def test_every_inline_script_and_style_is_allowed_by_its_hash(site):
    csp_clean(site, PAGE)


@pytest.mark.browser
def test_the_page_goes_live_offline(site, new_page):
    goes_live(site, new_page, PAGE)


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_wcag_violation(site, new_page, axe_js, scheme):  # noqa: F811
    axe_clean(site, new_page, axe_js, PAGE, scheme)


@pytest.mark.browser
def test_without_javascript_the_page_shows_its_words_figures_and_tables(site, new_page):
    reads_without_javascript(site, new_page, PAGE)


@pytest.mark.browser
def test_the_page_prints_within_the_readmes_budget(site, browser):
    prints_within_budget(site, browser, PAGE)


@pytest.mark.browser
def test_readout_and_figures_follow_the_controls_in_the_browser(site, open_page):
    c = loaded()
    page_fns = texts.page_of(c.module)
    watched = open_page(site)
    page = watched.page
    data = json.loads(page.locator("#plate-data").text_content())
    W = data["words_context"]
    chosen = dict(data["default"])
    for key, ident in (("critical", "l2"), ("network", "nvlink"), ("per_replica", "q16")):
        assert ident != chosen[key]
        before = page.locator("#readout").text_content()
        page.select_option(f"#choose-{key}", ident)
        wait_until(page, f"location.href.includes('{key}={ident}')")  # written after the draw
        current(page)  # Figure 2, out of sight, waits for the reader: brought now
        chosen[key] = ident
        f = page_fns["facts"](chosen, c.presets)
        shown = [p.text_content() for p in page.locator("#readout p").all()]
        assert shown == page_fns["readout"](f, W) and "".join(shown) != before
        for fid in ("fig-steps", "fig-time"):  # each figure's point follows the selection
            assert page.locator(f'[data-title="{fid}"]').text_content() == page_fns["title"](f, fid, W)
        drawn = page.evaluate("window.plate.views[1].data('time').map(({replicas, hours, way}) => "
                              "({replicas, hours, way}))")
        assert drawn == page_fns["datasets"](f)["time"]
    assert watched.problems() == [] and watched.outside_requests(site) == []


def test_each_figure_s_title_says_its_selection_s_numbers():
    """Every choice of every control, one at a time: Figure 1's title names the critical batch, Figure 2's each knee
    of the selection (or that there is none), each number generator/page/notation.py's formatting of the facts'."""
    words = submodule("page_words")
    checked = 0
    for key, table in (("critical", "critical"), ("size", "size"), ("network", "networks"), ("gpu", "gpus"),
                       ("batch", "batches"), ("per_replica", "per_replica")):
        for ident in presets()[table]:
            f = facts(**{key: ident})
            title = words.title(f, "fig-steps", {})
            assert title == f"Past the critical batch of {words.count(f['critical'])} tokens, a bigger batch mostly " \
                            f"adds tokens", (key, ident)
            limits = {"critical": "the critical batch", "communication": "communication"}
            # a fixed global batch whose knee lies past its last whole sequence per replica stops there first
            knees = [f"{words.WAY_NAMES[w['way']]} at {num(f['sequence_replicas'])} (one sequence per replica; "
                     f"{limits[w['limit']]} would stop it past {num(w['knee_replicas'])})"
                     if w["way"] == "global" and w["knee_replicas"] > f["sequence_replicas"] else
                     f"{words.WAY_NAMES[w['way']]} past {num(w['knee_replicas'])} ({limits[w['limit']]})"
                     for w in f["ways"] if w["knee"] >= 0]
            time = words.title(f, "fig-time", {})
            for knee in knees:
                assert knee in time, (key, ident, time)
            assert ("still saves time" in time) == (not knees), (key, ident, time)
            checked += 1
    assert checked > 3 and default_ids()
