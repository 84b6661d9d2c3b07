"""An author's legitimate edit (a fourth model, a third network, a term, a source) keeps every test of the
shipped plate passing: those tests derive what they expect from the content they build."""
import csv
import json
import os
import re
import subprocess
import sys

from conftest import ROOT
from content_edit import edited_copy
from generator import build, content

# The tests of the shipped plate, run again on the edited content (PLATE_CONTENT points them at it).
SHIPPED = [
    "tests/test_build.py", "tests/test_content.py", "tests/test_charts.py", "tests/test_facts.py",
    "tests/test_render.py", "tests/test_model.py", "tests/test_html_valid.py",
    "tests/test_check.py::test_the_shipped_content_has_no_mistakes_and_no_warnings",
    "tests/test_accessibility.py::test_descriptions_and_tables_follow_every_selection_with_the_readouts_numbers",
    "tests/test_accessibility.py::test_controls_operate_with_the_keyboard_alone",
    "tests/test_browser.py", "tests/test_print.py",
]


def test_the_edit_shows_in_the_built_plate(tmp_path):
    edited = edited_copy(ROOT / "content", tmp_path / "content")
    files = build.build(edited, tmp_path / "site")
    c = content.load(edited)
    assert len(c.presets.models) == 4 and len(c.presets.networks) == 3
    data = json.loads(re.search(r'<script type="application/json" id="plate-data">(.*?)</script>',
                                files["index.html"], re.S)[1])
    assert "mistral-7b" in data["choices"]["model"] and "ib-200" in data["choices"]["network"]
    rows = list(csv.DictReader(open(tmp_path / "site" / c.plate.data_file)))
    assert "mistral-7b" in {r["model"] for r in rows} and "ib-200" in {r["network"] for r in rows}
    page = files["index.html"]
    assert 'href="#term-bucketing"' in page and 'href="#source-goyal2017"' in page


def test_the_shipped_plate_tests_pass_on_the_edited_content(tmp_path):
    edited = edited_copy(ROOT / "content", tmp_path / "content")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SHIPPED], cwd=ROOT,
                            env={**os.environ, "PLATE_CONTENT": str(edited)}, capture_output=True, text=True,
                            timeout=1500)
    assert result.returncode == 0, result.stdout[-4000:]
    assert " passed" in result.stdout.splitlines()[-1]
