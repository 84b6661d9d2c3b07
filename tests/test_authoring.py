"""Texts an author controls from content: the CSV's name, the page's fixed labels, the command's description."""
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURE, ROOT
from generator.source import content
from generator.site import build
from generator.source.content import LABELS
from generator.source.schema import ContentError


@pytest.fixture
def root(tmp_path):
    copy = tmp_path / "content"
    shutil.copytree(FIXTURE, copy)
    return copy


def front(root, extra: str, table: str = "") -> None:
    """Add keys to the front matter (before its first table) and, optionally, a table at its end."""
    plate = root / "plate.md"
    text = plate.read_text()
    text = text.replace("\n[default]", f"\n{extra}\n[default]", 1) if extra else text
    head, sep, rest = text.partition("\n---\n")
    plate.write_text(head + ("\n" + table if table else "") + sep + rest)


def test_the_csv_is_named_from_the_title_or_data_file(root, tmp_path):
    assert content.load(root).plate.data_file == "a-small-plate.csv"
    front(root, 'data_file = "numbers.csv"')
    files = build.build(root, tmp_path / "site")
    assert "numbers.csv" in files and (tmp_path / "site" / "numbers.csv").exists()
    assert 'href="numbers.csv" download>' in files["index.html"]


@pytest.mark.parametrize("bad", ["../x.csv", "index.html", "data.txt", ".hidden.csv"])
def test_a_data_file_that_is_not_a_plain_csv_name_is_refused_at_its_line(root, bad):
    front(root, f'data_file = "{bad}"')
    line = (root / "plate.md").read_text().splitlines().index(f'data_file = "{bad}"') + 1
    with pytest.raises(ContentError) as caught:
        content.load(root)
    assert caught.value.problems[0].startswith(f"content/plate.md, line {line}: front matter: data_file must be")


def test_the_pages_fixed_texts_come_from_the_front_matter(root, tmp_path):
    front(root, "", '[labels]\nterms = "Glossar"\nsources = "Quellen"\ndownload = "Die Daten (CSV)"\n')
    page = build.build(root, tmp_path / "site")["index.html"]
    assert '<h2 id="terms-heading">Glossar</h2>' in page and '<h2 id="sources-heading">Quellen</h2>' in page
    assert "download>Die Daten (CSV)</a>" in page
    assert f">{LABELS['skip']}</a>" in page  # what was not given keeps its default
    for default in (LABELS["terms"], LABELS["sources"], LABELS["download"]):
        assert f">{default}<" not in page


def test_an_unknown_label_gets_a_did_you_mean(root):
    front(root, "", '[labels]\nsorces = "Quellen"\n')
    with pytest.raises(ContentError) as caught:
        content.load(root)
    assert 'unknown key "sorces" (did you mean "sources"?)' in caught.value.problems[0]


def test_the_command_describes_the_plate_of_its_content(root):
    plate = root / "plate.md"
    plate.write_text(plate.read_text().replace('title = "A Small Plate"', 'title = "Pipelines"'))
    result = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(root), "--help"],
                            capture_output=True, text=True, cwd=ROOT)
    top = subprocess.run([sys.executable, "-m", "generator", "--help", "--content", str(root)],
                         capture_output=True, text=True, cwd=ROOT)
    assert "Build Plate IX.1, 'Pipelines'" in " ".join(top.stdout.split())
    assert result.returncode == 0
