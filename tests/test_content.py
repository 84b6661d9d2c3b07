"""Loading content: the real plate, the fixture, and mistakes reported with file and line."""
import shutil

import pytest

from generator import content
from generator.schema import ContentError

from conftest import CONTENT, FIXTURE


def test_real_content_loads_with_the_spec_presets():
    c = content.load(CONTENT)
    p = c.plate
    assert (p.volume, p.volume_title, p.plate, p.plates_in_volume) == ("XIV", "Parallelism", 4, 11)
    assert p.title == "Data Parallelism"
    assert {"data parallelism", "gradient all-reduce", "scaling efficiency"} <= set(p.keywords)
    models = {m.name: m.params for m in c.presets.models.values()}
    # The spec's models (MODEL.md) are among the presets; an author may add more.
    assert models.items() >= {"Llama 3 8B": 8_030_261_248, "Llama 3 70B": 70_553_706_496,
                              "Llama 3.1 405B": 405_853_388_800}.items()
    assert {b.tokens for b in c.presets.batches.values()} >= {2**20, 2**22}
    assert {n.link_gbytes_per_s for n in c.presets.networks.values()} >= {50, 450}
    assert (c.presets.gpu.peak_tflops, c.presets.gpu.memory_gb) == (989, 80)
    assert {"data-parallelism", "replica", "global-batch", "overlap"} <= set(c.terms)
    assert {"https://doi.org/10.14778/3415478.3415530", "https://arxiv.org/abs/1812.06162",
         "https://arxiv.org/abs/2407.21783"} <= \
        {s.url for s in c.sources.values()}
    # MODEL.md's GPU table, each GPU cited to a source that exists
    gpus = {g.name: (g.peak_tflops, g.memory_gb, g.nvlink_gbytes_per_s) for g in c.presets.gpus.values()}
    assert gpus.items() >= {"H100 SXM": (989, 80, 450), "A100 SXM 80GB": (312, 80, 300), "H200 SXM": (989, 141, 450),
                    "B200": (2250, 180, 900)}.items()
    assert all(g.source in c.sources and g.nvlink_domain in (8, 72, 256) for g in c.presets.gpus.values())
    assert c.presets.networks["nvlink"].nvlink and not c.presets.networks["ib-400"].nvlink
    assert p.default == content.Selection("llama3-8b", "4M", "ib-400")


def test_prose_is_split_at_the_figures_line():
    p = content.load(CONTENT).plate
    assert "## Workshop" in p.before_figures.text
    assert "## Where the curves meet" in p.after_figures.text
    lines = (CONTENT / "plate.md").read_text().splitlines()
    assert lines[p.after_figures.first_line - 2].strip() == content.FIGURES_MARK


def copy_fixture(tmp_path):
    target = tmp_path / "content"
    shutil.copytree(FIXTURE, target)
    return target


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"fixture no longer contains {old!r}"
    path.write_text(text.replace(old, new))


def test_bad_bandwidth_names_file_line_and_value(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / "presets.toml", "link_gbytes_per_s = 10", "link_gbytes_per_s = -1")
    with pytest.raises(ContentError) as caught:
        content.load(root)
    line = next(i for i, l in enumerate((root / "presets.toml").read_text().splitlines(), 1) if "= -1" in l)
    assert caught.value.problems == [
        f'content/presets.toml, line {line}: network "slow": link_gbytes_per_s must be a positive number, got -1']


def test_every_mistake_is_reported_together(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / "presets.toml", "mfu = 0.5", "mfu = nan")
    edit(root / "terms.toml", 'definition = "One copy of the model."', 'definiton = "typo"')
    edit(root / "plate.md", 'model = "tiny"', 'model = "small"')
    with pytest.raises(ContentError) as caught:
        content.load(root)
    text = "\n".join(caught.value.problems)
    assert "content/presets.toml, line 3: [workshop]: mfu must be a number greater than 0 and at most 1, got nan" in text
    assert 'content/terms.toml, line 4: term "replica": unknown key "definiton" (did you mean "definition"?)' in text
    assert 'content/terms.toml, line 1: term "replica": missing key "definition"' in text
    assert 'content/plate.md, line 12: [default]: model "small" is not a preset' in text


def test_unclosed_front_matter(tmp_path):
    root = copy_fixture(tmp_path)
    text = (root / "plate.md").read_text().replace("---\nA tiny", "A tiny", 1)
    (root / "plate.md").write_text(text)
    with pytest.raises(ContentError, match=r"content/plate.md, line 1: the front matter opened here is never closed"):
        content.load(root)


def test_toml_syntax_error_has_its_line(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / "sources.toml", 'title = "A Paper"', 'title = "A Paper')
    with pytest.raises(ContentError, match=r"content/sources.toml, line 3: TOML syntax error"):
        content.load(root)
