"""`plate check`: every mistake at file:line with "did you mean", warnings about unused content, nothing written;
the build prints the same warnings."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import CONTENT, XIV4_MINI, ROOT


def plate(*args, cwd):
    return subprocess.run([sys.executable, "-m", "generator", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def tree(folder):
    """Every file and folder below folder with its bytes (folders as None)."""
    return {p: (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


@pytest.fixture
def content(tmp_path):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    return root


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_clean_content_passes_and_nothing_is_written(content, tmp_path):
    before = tree(tmp_path)
    result = plate("check", "--content", content, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no mistakes (0 warnings)" in result.stdout and result.stderr == ""
    assert tree(tmp_path) == before


def test_every_mistake_at_its_line_with_did_you_mean(content, tmp_path):
    lines = (content / "plate.md").read_text().splitlines()
    slot_line = next(i for i, line in enumerate(lines, 1) if "default.crossing_replicas" in line)
    edit(content / "plate.md", "{{ default.crossing_replicas | num }}",
         "{{ default.crossing_replica | num }} {{ 0.5 | percentage }} {{ default.at(1).efficiencyy }}")
    edit(content / "terms.toml", 'name = "Replica"', "name = 3")
    before = tree(tmp_path)
    result = plate("check", "--content", content, cwd=tmp_path)
    assert result.returncode == 1
    err = result.stderr
    assert "Traceback" not in err
    assert f'content/plate.md, line {slot_line}: undefined fact or name in prose: default.crossing_replica: no fact "crossing_replica" in Facts ' \
           f'(did you mean "crossing_replicas"?)' in err
    assert f'content/plate.md, line {slot_line}: no filter "percentage" in prose (did you mean "percent"?)' in err
    assert '"efficiencyy" in Point (did you mean "efficiency"?)' in err
    assert "content/terms.toml, line 2:" in err
    assert err.startswith("plate: the content has 4 mistakes")
    assert tree(tmp_path) == before


def test_a_misspelt_preset_in_a_slot_is_named_with_its_neighbours(content, tmp_path):
    edit(content / "plate.md", 'scenario(network="fast").crossing_replicas',
         'networks["fats"].short }} {{ scenario(network="fast").crossing_replicas')
    result = plate("check", "--content", content, cwd=tmp_path)
    assert result.returncode == 1
    assert 'networks["fats"]: no preset "fats" in [networks] (did you mean "fast"?)' in result.stderr


def test_a_term_written_in_its_plural_is_used_and_linked(content, tmp_path):
    """An author adds "Bucket", "Policy" and "Mesh" as terms and writes buckets, policies and meshes: each is
    used (no warning, so the test command passes) and linked from its plural."""
    with open(content / "terms.toml", "a") as f:
        for ident, name in (("bucket", "Bucket"), ("policy", "Policy"), ("mesh", "Mesh")):
            f.write(f'\n[terms.{ident}]\nname = "{name}"\ndefinition = "A {name.lower()}."\n')
    with open(content / "plate.md", "a") as f:
        f.write("\nGradients travel in buckets; the policies decide their size, whatever the meshes.\n")
    checked = plate("check", "--content", content, cwd=tmp_path)
    assert checked.returncode == 0 and "(0 warnings)" in checked.stdout and checked.stderr == "", checked.stderr
    built = plate("build", "--content", content, "--out", tmp_path / "site", cwd=tmp_path)
    assert built.returncode == 0 and "warning" not in built.stderr, built.stderr
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    for ident, word in (("bucket", "buckets"), ("policy", "policies"), ("mesh", "meshes")):
        assert f'href="#term-{ident}" aria-describedby="def-{ident}">{word}</a>' in page


def test_unused_term_and_source_are_warned_about_by_check_and_build(content, tmp_path):
    with open(content / "terms.toml", "a") as f:
        f.write('\n[terms.zebra]\nname = "zebra crossing"\ndefinition = "Never in the prose."\n')
    with open(content / "sources.toml", "a") as f:
        f.write('\n[sources.nobody]\nauthors = "N. Body"\ntitle = "Uncited"\nvenue = "Nowhere, 2001"\n'
                'url = "https://example.org/"\nlabel = "example.org"\n')
    with open(content / "presets.toml", "a") as f:
        f.write('\n[gpus.spare]\nname = "Spare"\npeak_tflops = 100\nmemory_gb = 40\nnvlink_gbytes_per_s = 100\n')

    def line_of(path, header):
        return path.read_text().splitlines().index(header) + 1

    expected = [
        f'content/terms.toml, line {line_of(content / "terms.toml", "[terms.zebra]")}: term "zebra" is never used',
        f'content/sources.toml, line {line_of(content / "sources.toml", "[sources.nobody]")}: source "nobody" is '
        f'never cited',
    ]
    checked = plate("check", "--content", content, cwd=tmp_path)
    # Every [gpus.*] table is offered by the GPU control, so an extra one is used, not warned about.
    assert checked.returncode == 0 and "(2 warnings)" in checked.stdout and "gpus.spare" not in checked.stderr
    built = plate("build", "--content", content, "--out", tmp_path / "site", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    for result in (checked, built):
        warnings = [line for line in result.stderr.splitlines() if line.startswith("plate: warning: ")]
        assert len(warnings) == 2, result.stderr
        for text, line in zip(expected, warnings):
            assert text in line
    assert checked.stderr == "\n".join(line for line in built.stderr.splitlines()) + "\n"


def test_the_shipped_content_has_no_mistakes_and_no_warnings(tmp_path):
    result = plate("check", "--content", CONTENT, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
