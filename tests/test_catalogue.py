"""The series catalogue (plates/series.toml, platelib.catalogue): read by every plate of the series beside its
folder, laid under a plate's own presets.toml, each mistake named once at its file and line by `plate check` and
`plate build`; its [site] is the engine's, and a volume file's [site] still reads, with a warning."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SERIES, copy_plate
from generator.source import content, volume
from generator.source.schema import ContentError

XIV4, XIV5, XI2 = "xiv-4-data-parallelism", "xiv-5-sharded-data-parallelism", "xi-2-critical-batch-size"


def plate(*args, cwd):
    return subprocess.run([sys.executable, "-m", "generator", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)


@pytest.fixture
def series(tmp_path) -> Path:
    """The shipped series copied to tmp_path/plates."""
    root = tmp_path / "plates"
    shutil.copytree(SERIES, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def insert_after(path: Path, header: str, line: str, skip: int = 0) -> int:
    """line written after header (and skip more lines); its line number."""
    lines = path.read_text(encoding="utf-8").splitlines()
    at = lines.index(header) + 1 + skip
    lines.insert(at, line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return at + 1


def line_of(path: Path, text: str) -> int:
    """The line that starts with text."""
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(text))


def test_no_plate_names_another_plates_folder():
    """Issue 42's first acceptance line: `grep -rn "xiv-4-data-parallelism" plates/*/plate plates/lib` finds
    nothing outside XIV.4's own folder; and no plate module names any other plate's folder."""
    folders = [p for p in SERIES.iterdir() if (p / "plate").is_dir()]
    for own in folders:
        for other in folders:
            if other != own:
                for path in (own / "plate").rglob("*.py"):
                    assert other.name not in path.read_text(encoding="utf-8"), (path, other.name)
    for path in (SERIES / "lib").rglob("*.py"):
        for other in folders:
            assert other.name not in path.read_text(encoding="utf-8"), (path, other.name)


def test_every_plate_reads_one_catalogue():
    """The models, GPUs, networks and layouts each plate offers are the catalogue's, the same objects' values."""
    four, five, two = (content.load(SERIES / f) for f in (XIV4, XIV5, XI2))
    assert four.presets.models == five.presets.models
    assert {i: m.name for i, m in four.presets.models.items()} == {i: m["name"] for i, m in two.presets["models"].items()}
    assert list(four.presets.gpus) == list(five.presets.gpus) == list(two.presets["gpus"])
    assert four.presets.layouts == five.presets.layouts
    assert four.presets.workshop == five.presets.workshop
    assert not (SERIES / XIV5 / "presets.toml").exists()  # XIV.5 offers the catalogue alone


def test_catalogue_mistakes_are_each_one_line_at_their_file_and_line_in_check_and_build(series, tmp_path):
    catalogue = series / "series.toml"
    unknown = insert_after(catalogue, "[models.llama3-70b]", 'colour = "red"', skip=2)
    text = catalogue.read_text(encoding="utf-8").replace('[layouts.tp8-pp2]\ntensor = 8', '[layouts.tp8-pp2]\ntensor = "eight"')
    catalogue.write_text(text + '\n[modles.x]\nname = "x"\n', encoding="utf-8")
    bad_value = line_of(catalogue, 'tensor = "eight"')
    typo = line_of(catalogue, "[modles.x]")
    # presets.toml: a key written well below its table's header is named at its own line (issue 43: "117 for 128")
    presets = series / XIV4 / "presets.toml"
    text = presets.read_text(encoding="utf-8")
    presets.write_text(text.replace('layout = "tp8-pp16"', "layout = 128"), encoding="utf-8")
    own = line_of(presets, "layout = 128")
    assert own - line_of(presets, "[selections.llama3-405b]") > 5
    expected = [f"series.toml, line {unknown}: model \"llama3-70b\": unknown key \"colour\"",
                f"series.toml, line {bad_value}: layout \"tp8-pp2\": tensor must be a positive whole number",
                f"series.toml, line {typo}: unknown table or key \"modles\" (did you mean [models]?)",
                f"{XIV4}/presets.toml, line {own}: selection \"llama3-405b\": layout must be a string"]
    site = tmp_path / "site"
    for command in (("check", "--content", series), ("build", "--content", series, "--out", site)):
        result = plate(*command, cwd=tmp_path)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        lines = [line.strip() for line in result.stderr.splitlines()[1:]]
        assert result.stderr.startswith(f"plate: the content has {len(expected)} mistakes"), result.stderr
        for want in expected:  # each once, though three plates read the catalogue
            assert len([line for line in lines if line.startswith(want)]) == 1, (want, result.stderr)
    assert not site.exists()
    # a plate built alone names the same lines
    result = plate("check", "--content", series / XIV5, cwd=tmp_path)
    assert result.returncode == 1 and f"line {unknown}: model \"llama3-70b\"" in result.stderr, result.stderr


def test_a_plate_adds_a_choice_of_its_own_or_replaces_the_catalogues(series):
    presets = series / XIV4 / "presets.toml"
    presets.write_text(presets.read_text(encoding="utf-8") + '\n[models.mistral-7b]\nname = "Mistral 7B"\n'
                       'params = 7_241_732_096\nlayers = 32\nd_model = 4096\nffn = 14336\nvocab = 32000\n\n'
                       '[batches.4M]\nname = "4M tokens, one plate"\ntokens = 4_000_000\n\n'
                       '[workshop]\nmfu = 0.4\n', encoding="utf-8")
    four, five = content.load(series / XIV4), content.load(series / XIV5)
    assert "mistral-7b" in four.presets.models and "mistral-7b" not in five.presets.models
    assert four.presets.batches["4M"].tokens == 4_000_000 and list(four.presets.batches)[1] == "4M"  # in its place
    assert four.presets.workshop.mfu == 0.4 and five.presets.workshop.mfu == 0.45
    assert four.presets.workshop.gpu == five.presets.workshop.gpu  # the keys it does not give stay the catalogue's


def test_a_name_given_twice_across_the_two_files_is_a_mistake_at_the_later(series):
    presets = series / XIV4 / "presets.toml"
    presets.write_text(presets.read_text(encoding="utf-8") + '\n[batches.four]\nname = "4M tokens"\n'
                       'tokens = 4_000_000\n', encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        content.load(series / XIV4)
    line = line_of(presets, 'name = "4M tokens"')
    assert [p for p in caught.value.problems if "4M tokens" in p] == [
        f'{XIV4}/presets.toml, line {line}: batch "four": name "4M tokens" is also the name of "4M" in series.toml; '
        f"readers could not tell them apart"]


def test_a_copied_plate_reads_the_catalogue_beside_it(tmp_path):
    copy = copy_plate(SERIES / XIV5, tmp_path / "mine" / XIV5, ignore=shutil.ignore_patterns("__pycache__"))
    assert content.load(copy).presets.models.keys() == content.load(SERIES / XIV5).presets.models.keys()
    (copy.parent / "series.toml").unlink()
    with pytest.raises(ContentError) as caught:
        content.load(copy)
    assert caught.value.problems == [f"{XIV5}/presets.toml: file is missing: a plate reads its models, GPUs and "
                                     f"networks from the series' series.toml beside its folder "
                                     f"({copy.parent / 'series.toml'}), or from a presets.toml of its own"]


def test_the_sites_address_is_read_from_the_series_file(series, tmp_path):
    catalogue = series / "series.toml"
    catalogue.write_text('[site]\nbase_url = "https://example.org/plates"\n\n' + catalogue.read_text(encoding="utf-8"))
    shelf = volume.load_series(series)
    assert shelf.base_url == "https://example.org/plates/" and shelf.warnings == ()
    assert volume.base_url_beside(series / XIV4) == "https://example.org/plates/"
    # a [site] in a volume file too: one address, set in one file
    vol = series / "volume.toml"
    vol.write_text('[site]\nbase_url = "https://example.org/other/"\n\n' + vol.read_text(encoding="utf-8"))
    with pytest.raises(ContentError) as caught:
        volume.load_series(series)
    assert caught.value.problems == ["plates/volume.toml, line 1: [site] is also set in series.toml, line 1: the "
                                     "series is published at one address, set there"]


def test_a_site_left_in_a_volume_file_reads_with_a_warning_at_its_line(series, tmp_path):
    vol = series / "volume.toml"
    text = vol.read_text(encoding="utf-8")
    vol.write_text(text.replace("[volume]", '[site]\nbase_url = "https://example.org/plates/"\n\n[volume]', 1))
    line = line_of(vol, "[site]")
    shelf = volume.load_series(series)
    assert shelf.base_url == "https://example.org/plates/"
    warning = f"plates/volume.toml, line {line}: [site] belongs in series.toml now"
    assert [w for w in shelf.warnings if w.startswith(warning)] and len(shelf.warnings) == 1
    result = plate("check", "--content", series, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if warning in line] and "1 warning" in result.stdout
    warnings: list[str] = []
    assert volume.base_url_beside(series / XIV4, warnings) == "https://example.org/plates/"
    assert len(warnings) == 1 and "[site] belongs in series.toml" in warnings[0]


def test_the_engine_reads_the_site_alone_and_the_catalogue_reader_accepts_it(series):
    """The engine reads series.toml's [site] and nothing else of it; the catalogue's reader takes [site] as the
    engine's and reports any table neither knows."""
    catalogue = series / "series.toml"
    catalogue.write_text('[site]\nbase_url = "https://example.org/"\n\n' + catalogue.read_text(encoding="utf-8"))
    assert content.load(series / XIV4).presets is not None
    catalogue.write_text(catalogue.read_text(encoding="utf-8") + '\n[sitemap]\nfile = "x"\n')
    with pytest.raises(ContentError) as caught:
        content.load(series / XIV4)
    assert re.fullmatch(r'series\.toml, line \d+: unknown table or key "sitemap" \(did you mean \[site\]\?\)',
                        caught.value.problems[0])
