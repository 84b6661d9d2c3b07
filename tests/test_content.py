"""Loading content: the real plate, the fixture, and mistakes reported with file and line."""
import re
import shutil
import tomllib

import pytest

from generator.source import content
from generator.source.schema import ContentError

from conftest import CONTENT, XIV4_MINI, ROOT, SPEC_IDS
from xiv4 import SHIPPED, xpresets


def raw(root):
    """The content's TOML as written (front matter included), read without the loader under test; "presets.toml"
    is the series catalogue beside the folder (if any) with the plate's presets.toml laid over it, an entry of the
    latter replacing the former's, a [workshop] key its key (docs/plates.md, "The series catalogue")."""
    text = (root / "plate.md").read_text(encoding="utf-8")
    front = tomllib.loads(text.split("---\n", 2)[1])
    files = {name: tomllib.loads((root / name).read_text(encoding="utf-8"))
             for name in ("presets.toml", "terms.toml", "sources.toml")}
    beside = root.parent / "series.toml"
    if beside.is_file():
        merged = tomllib.loads(beside.read_text(encoding="utf-8"))
        merged.pop("site", None)
        for table, value in files["presets.toml"].items():
            merged[table] = {**merged.get(table, {}), **value}
        files["presets.toml"] = merged
    return front, files


def test_real_content_loads_as_written():
    """Every table and field of the content being built, read back as the author wrote it; optional fields that
    are left out (a GPU's source or NVLink domain, a term's other spellings) take their defaults."""
    c = content.load(CONTENT)
    front, files = raw(CONTENT)
    p = c.plate
    assert (p.volume, p.volume_title, p.plate, p.plates_in_volume, p.title, p.deck, p.takeaway) == \
        tuple(front[k] for k in ("volume", "volume_title", "plate", "plates_in_volume", "title", "deck", "takeaway"))
    assert p.keywords == tuple(front["keywords"])
    assert p.default == xpresets.Selection(**front["default"])
    presets = files["presets.toml"]
    assert c.presets.workshop == xpresets.WorkshopSettings(**presets["workshop"])
    assert c.presets.gpu == c.presets.gpus[presets["workshop"]["gpu"]]
    assert c.presets.models == {i: xpresets.Model(id=i, **m) for i, m in presets["models"].items()}
    assert c.presets.layouts == {i: xpresets.Layout(id=i, name=v.get("name") or xpresets.catalogue.layout_name(
        v["tensor"], v["pipeline"]), tensor=v["tensor"], pipeline=v["pipeline"])
        for i, v in presets.get("layouts", {}).items()}
    assert c.presets.batches == {i: xpresets.Batch(id=i, **b) for i, b in presets["batches"].items()}
    assert set(c.presets.networks) == set(presets["networks"])
    for i, n in presets["networks"].items():
        got = c.presets.networks[i]
        own = n.get("interconnect", n.get("nvlink", False))  # the GPU's own link; nvlink = true is its old key
        link = c.presets.gpu.interconnect  # the GPU's own link takes its names from the workshop GPU where not given
        assert (got.name, got.short, got.nvlink) == (n.get("name", link if own else None),
                                                     n.get("short", link if own else None), own)
        if not got.nvlink:
            assert got.link_gbytes_per_s == n["link_gbytes_per_s"]
    new_keys = {"interconnect_gbytes_per_s": "nvlink_gbytes_per_s", "interconnect_domain": "nvlink_domain",
                "interconnect_domain_name": "nvlink_domain_name"}  # presets.toml's keys, and the Gpu fields they fill
    assert c.presets.gpus == {i: xpresets.Gpu(id=i, **{"nvlink_domain": None, "nvlink_domain_name": "", "source": "",
                                                        **{new_keys.get(k, k): v for k, v in g.items()}})
                              for i, g in presets["gpus"].items()}
    assert all(g.source == "" or g.source in c.sources for g in c.presets.gpus.values())  # `source` is optional
    terms = files["terms.toml"]["terms"]
    assert c.terms == {i: content.Term(id=i, **{**t, "matches": tuple(t.get("matches", ()))}) for i, t in terms.items()}
    assert c.sources == {i: content.Source(id=i, **s) for i, s in files["sources.toml"]["sources"].items()}


def test_the_spec_presets_hold_the_spec_values():
    """MODEL.md's presets, by their ids, with MODEL.md's figures, wherever the content being built holds them."""
    c = content.load(CONTENT)
    spec_models = {"llama3-8b": ("Llama 3 8B", 8_030_261_248, 32, 4096, 14336, 128256),
                   "llama3-70b": ("Llama 3 70B", 70_553_706_496, 80, 8192, 28672, 128256),
                   "llama3-405b": ("Llama 3.1 405B", 405_853_388_800, 126, 16384, 53248, 128256)}
    spec_gpus = {"h100-sxm": ("H100 SXM", 989, 80, 450), "a100-sxm": ("A100 SXM 80GB", 312, 80, 300),
                 "h200-sxm": ("H200 SXM", 989, 141, 450), "b200": ("B200", 2250, 180, 900)}
    checked = 0
    for i, (name, *shape) in spec_models.items():
        if i in c.presets.models:
            m = c.presets.models[i]
            assert (m.name, m.params, m.layers, m.d_model, m.ffn, m.vocab) == (name, *shape)
            checked += 1
    for i, tokens in {"1M": 2**20, "4M": 2**22}.items():
        if i in c.presets.batches:
            assert c.presets.batches[i].tokens == tokens
            checked += 1
    if "ib-400" in c.presets.networks:
        n = c.presets.networks["ib-400"]
        assert not n.nvlink and n.link_gbytes_per_s == 50  # 400 Gb/s
        checked += 1
    if "nvlink" in c.presets.networks:
        assert c.presets.networks["nvlink"].nvlink
        checked += 1
    for i, figures in spec_gpus.items():
        if i in c.presets.gpus:
            g = c.presets.gpus[i]
            assert (g.name, g.peak_tflops, g.memory_gb, g.nvlink_gbytes_per_s) == figures
            assert g.nvlink_domain in (8, 72, 256)  # MODEL.md's domains: HGX, GB200 NVL72, NVLink Switch System
            checked += 1
    if not checked:
        pytest.skip(f"{CONTENT} holds none of MODEL.md's presets")


def test_the_repository_content_holds_every_spec_preset():
    """The repository's own content (whatever PLATE_CONTENT says) holds every preset MODEL.md names, so that the
    tests of MODEL.md's claims run on it rather than skip."""
    c = content.load(SHIPPED)
    tables = {"model": c.presets.models, "batch": c.presets.batches, "network": c.presets.networks,
              "gpu": c.presets.gpus}
    assert {kind: [i for i in ids if i not in tables[kind]] for kind, ids in SPEC_IDS.items()} == \
        {kind: [] for kind in SPEC_IDS}


def test_prose_is_split_at_the_figures_line():
    p = content.load(CONTENT).plate
    lines = (CONTENT / "plate.md").read_text().splitlines()
    mark = p.after_figures.first_line - 2
    assert lines[mark].strip() == content.FIGURES_MARK
    assert p.after_figures.text.strip() == "\n".join(lines[mark + 1:]).strip()
    # The prose before [[figures]]: up to the [[assumptions]] line, and from it to [[figures]] (the disclosure's).
    split = p.assumptions.first_line - 2
    assert lines[split].strip() == content.ASSUMPTIONS_MARK
    assert p.before_figures.text.strip() == "\n".join(lines[p.before_figures.first_line - 1:split]).strip()
    assert p.assumptions.text.strip() == "\n".join(lines[split + 1:mark]).strip()


def test_a_misplaced_or_second_assumptions_line_is_a_mistake_at_its_line(tmp_path):
    """[[assumptions]] after [[figures]], or twice, is reported at file:line, not rendered as text."""
    twice = "[[assumptions]]\n\n[[assumptions]]\n[[figures]]"
    for n, edit in enumerate((lambda t: t + "\n[[assumptions]]\n", lambda t: t.replace("[[figures]]", twice))):
        root = copy_fixture(tmp_path / str(n))
        text = (root / "plate.md").read_text()
        (root / "plate.md").write_text(edit(text), encoding="utf-8")
        with pytest.raises(ContentError) as error:
            content.load(root)
        lines = edit(text).splitlines()
        where = [i + 1 for i, line in enumerate(lines) if line.strip() == content.ASSUMPTIONS_MARK][-1]
        assert f"plate.md, line {where}:" in str(error.value), str(error.value)


def copy_fixture(tmp_path):
    target = tmp_path / "content"
    shutil.copytree(XIV4_MINI, target)
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


def test_first_controls_default_to_the_first_three_and_must_name_controls(tmp_path):
    """Without first_controls the page's first three controls sit beside Figure 1 and the rest in the disclosure;
    a key no control has fails the build, naming it."""
    from generator.site import build
    root = copy_fixture(tmp_path / "plain")
    build.build(root, tmp_path / "plain-site")
    html = (tmp_path / "plain-site" / "index.html").read_text(encoding="utf-8")
    keys = re.findall(r'<select id="choose-([^"]+)"', html)
    beside = re.findall(r'<select id="choose-([^"]+)"', html[:html.index('id="more"')])
    assert len(keys) > 3 and beside == keys[:3]
    root = copy_fixture(tmp_path / "named")
    text = (root / "plate.md").read_text(encoding="utf-8")
    (root / "plate.md").write_text(text.replace("\ntakeaway = ", '\nfirst_controls = ["model", "nope"]\ntakeaway = ', 1),
                                   encoding="utf-8")
    with pytest.raises(ContentError, match="first_controls names 'nope'"):
        build.build(root, tmp_path / "named-site")
