"""The build cache: entries keyed by all they are made of, sealed, written only inside their folder."""
import dataclasses
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from conftest import XIV4_MINI, ROOT
from generator.source import checks, content, prose
from generator.plate import charts
from generator.site import assembly, build, cache
from generator.site.cache import Cache
from xiv4 import facts, xfigures


@pytest.fixture(scope="module")
def mini():
    """The fixture plate's atlas and default selection."""
    plate = content.load(XIV4_MINI, check_prose=checks.check_prose)
    return facts.Atlas(plate.presets), plate.plate.default


@pytest.fixture
def made(monkeypatch):
    """Counts of the Altair compilations and SVG drawings the figures really do (cache misses)."""
    counts = {"vega": 0, "svg": 0}
    to_vega, static_svg = charts.to_vega, charts.static_svg

    def counted_vega(*args, **kwargs):
        counts["vega"] += 1
        return to_vega(*args, **kwargs)

    def counted_svg(*args, **kwargs):
        counts["svg"] += 1
        return static_svg(*args, **kwargs)

    monkeypatch.setattr(charts, "to_vega", counted_vega)
    monkeypatch.setattr(charts, "static_svg", counted_svg)
    return counts


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file below folder, {relative path: bytes}."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_second_build_takes_every_figure_from_the_cache(mini, made, tmp_path):
    atlas, default = mini
    store = Cache(tmp_path / "cache")
    first = xfigures.figures(atlas, default, store)
    assert made["vega"] == len(first) and made["svg"] == len(first)
    again = xfigures.figures(atlas, default, store)
    assert made["vega"] == len(first) and made["svg"] == len(first)  # nothing compiled or drawn again
    assert again == first
    assert again == xfigures.figures(atlas, default)  # the same as figures made without any cache


def test_the_key_changes_with_every_input(mini, made, tmp_path, monkeypatch):
    """Each thing a figure is made of (its inputs, the generator's code, Altair, vl-convert, the fonts) is in its
    key: change one and the entries it shapes are made anew."""
    atlas, default = mini
    store = Cache(tmp_path / "cache")
    count = len(xfigures.figures(atlas, default, store))
    before = dict(made)
    xfigures.figures(atlas, default, store)
    assert made == before

    def changed(what):
        """How many compilations and drawings the next build does after what()."""
        start = dict(made)
        what()
        xfigures.figures(atlas, default, store)
        return made["vega"] - start["vega"], made["svg"] - start["svg"]

    assert changed(lambda: monkeypatch.setattr(cache, "code", lambda: "edited generator")) == (count, count)
    real = cache.package
    assert changed(lambda: monkeypatch.setattr(
        cache, "package", lambda m: "altair 0.0" if m == "altair" else real(m))) == (count, 0)  # same specs out
    assert changed(lambda: monkeypatch.setattr(
        cache, "package", lambda m: "vl-convert 0.0" if m == "vl_convert" else real(m))) == (count, count)
    assert changed(lambda: monkeypatch.setattr(cache, "fonts", lambda: (("/new/font.ttf", 1, 1),))) == (0, count)
    # Other inputs: another default selection (other rows to draw), another grid size (other specs).
    other = next(s for s in atlas.selections if atlas.facts(s).caption != atlas.facts(default).caption)
    start = dict(made)
    xfigures.figures(atlas, other, store)
    assert made["vega"] == start["vega"] and made["svg"] > start["svg"]
    bigger = facts.Atlas(dataclasses.replace(atlas.presets, workshop=dataclasses.replace(
        atlas.presets.workshop, max_replicas=atlas.presets.workshop.max_replicas * 2)))
    start = dict(made)
    xfigures.figures(bigger, default, store)
    assert made["vega"] - start["vega"] == 3  # the three figures on a replica axis; the timeline has none


def test_the_code_fingerprint_reads_every_module(tmp_path, monkeypatch):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(f"# {name}\n")
    monkeypatch.setattr(cache, "GENERATOR", tmp_path)
    cache.code.cache_clear()
    try:
        before = cache.code()
        cache.code.cache_clear()
        (tmp_path / "b.py").write_text("# b.py, edited\n")
        assert cache.code() != before
    finally:
        cache.code.cache_clear()


def test_a_package_fingerprint_follows_its_installed_files(tmp_path, monkeypatch):
    """Two installs of one version that differ in any file differ in RECORD, hence in the key."""
    site = tmp_path / "site-packages"
    (site / "fakepkg").mkdir(parents=True)
    (site / "fakepkg" / "__init__.py").write_text("")
    record = site / "fakepkg-1.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("fakepkg/__init__.py,sha256=aaaa,0\n")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: importlib.machinery.ModuleSpec(
        name, None, origin=str(site / "fakepkg" / "__init__.py")))
    cache.package.cache_clear()
    try:
        before = cache.package("fakepkg")
        assert before.startswith("fakepkg-1.0.dist-info ")
        cache.package.cache_clear()
        record.write_text("fakepkg/__init__.py,sha256=bbbb,0\n")
        assert cache.package("fakepkg") != before
    finally:
        cache.package.cache_clear()


def test_the_font_fingerprint_sees_a_new_font(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "FONT_FOLDERS", (str(tmp_path),))
    cache.fonts.cache_clear()
    try:
        before = cache.fonts()
        cache.fonts.cache_clear()
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "New.ttf").write_bytes(b"\0font")
        assert cache.fonts() != before and str(tmp_path / "sub" / "New.ttf") in str(cache.fonts())
    finally:
        cache.fonts.cache_clear()


@pytest.fixture(scope="module")
def filled(mini, tmp_path_factory) -> tuple[Path, list]:
    """A cache the fixture's figures were made into, from empty, once for the module: (its folder, the figures). The
    tests copy it (drawing the figures costs more than the copy) and only read the copy's source."""
    atlas, default = mini
    folder = tmp_path_factory.mktemp("filled") / "cache"
    return folder, xfigures.figures(atlas, default, Cache(folder))


@pytest.mark.parametrize("damage", ["truncated", "byte flipped", "seal only", "empty", "not an entry"])
def test_a_damaged_entry_is_made_again_never_used(mini, made, filled, tmp_path, damage):
    atlas, default = mini
    shutil.copytree(filled[0], tmp_path / "cache")
    store, good = Cache(tmp_path / "cache"), filled[1]
    assert xfigures.figures(atlas, default, store) == good and made == {"vega": 0, "svg": 0}  # the copy is whole
    for entry in sorted((tmp_path / "cache").iterdir()):
        data = entry.read_bytes()
        entry.write_bytes({"truncated": data[:len(data) // 2],
                           "byte flipped": data[:-2] + bytes([data[-2] ^ 1]) + data[-1:],
                           "seal only": data.partition(b"\n")[0] + b"\n", "empty": b"",
                           "not an entry": b"someone else's file\n"}[damage])
    start = dict(made)
    assert xfigures.figures(atlas, default, store) == good
    assert made["vega"] - start["vega"] == len(good) and made["svg"] - start["svg"] == len(good)
    kept = files_under(tmp_path / "cache")
    if damage == "not an entry":  # a file that is not the cache's own is left as it was, whatever its name
        assert set(kept.values()) == {b"someone else's file\n"}
    else:  # the cache's own damaged entries are replaced by sound ones
        assert all(cache.unsealed(data) is not None for data in kept.values())
        start = dict(made)
        xfigures.figures(atlas, default, store)
        assert made == start


def test_the_seal_states_length_and_sha256():
    data = "π ≈ 3.14159".encode()
    sealed = cache.seal(data) + data
    head = sealed.partition(b"\n")[0].decode()
    assert head == f"plate-cache 1 {len(data)} {hashlib.sha256(data).hexdigest()}"
    assert cache.unsealed(sealed) == data
    assert cache.unsealed(sealed + b" ") is None and cache.unsealed(sealed[:-1]) is None
    assert cache.unsealed(data) is None


def test_an_unwritable_cache_only_costs_time(mini, made, tmp_path):
    atlas, default = mini
    (tmp_path / "a-file").write_text("not a folder\n")
    store = Cache(tmp_path / "a-file" / "cache")
    first = xfigures.figures(atlas, default, store)
    assert xfigures.figures(atlas, default, store) == first == xfigures.figures(atlas, default)
    assert made["vega"] == 3 * len(first)  # made each time (the third with no cache at all), never failing
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"] and (tmp_path / "a-file").read_text() == "not a folder\n"


def test_the_cache_writes_only_inside_its_folder_and_leaves_no_temporary_files(mini, tmp_path):
    atlas, default = mini
    folder = tmp_path / "root" / "cache"
    folder.mkdir(parents=True)
    (tmp_path / "root" / "beside.txt").write_text("mine\n")
    (folder / "notes.txt").write_text("mine too\n")
    xfigures.figures(atlas, default, Cache(folder))
    assert files_under(tmp_path / "root").keys() - {"beside.txt", "cache/notes.txt"} == {
        f"cache/{p.name}" for p in folder.iterdir() if p.name != "notes.txt"}
    assert (tmp_path / "root" / "beside.txt").read_text() == "mine\n"
    assert (folder / "notes.txt").read_text() == "mine too\n"
    names = [p.name for p in folder.iterdir() if p.name != "notes.txt"]
    assert names and all(not n.startswith(".") and not n.endswith(".tmp") for n in names)
    assert all(cache.unsealed((folder / n).read_bytes()) is not None for n in names)


def test_a_cached_build_is_byte_identical_to_an_uncached_one(tmp_path, monkeypatch):
    """Three builds of the fixture: with an empty cache, from that cache (every entry a hit), and with no cache."""
    stores = {"cold": Cache(tmp_path / "cache"), "none": Cache(None)}
    which = ["cold"]
    monkeypatch.setattr(cache, "at", lambda root, module=None: stores[which[0]])
    sites = {}
    for run in ("cold", "cached", "none"):
        which[0] = "cold" if run == "cached" else run
        build.build(XIV4_MINI, tmp_path / run)
        sites[run] = files_under(tmp_path / run)
    assert sites["cold"] == sites["cached"] == sites["none"]
    kinds = sorted(p.name.split(".", 1)[1] for p in (tmp_path / "cache").iterdir())
    assert kinds.count("csv") == 1 and kinds.count("svg") == kinds.count("vega.json") >= 4


def test_a_build_from_a_full_cache_never_loads_altair_or_vl_convert(tmp_path):
    """In a new process, as `plate build` runs: the second build finds every entry and imports neither package
    for the figures (the runtime module, the lead's, may still load vl-convert: checked through the figures' path)."""
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from generator.source import checks, content
        from generator.site import cache
        plate = content.load(Path({str(XIV4_MINI)!r}), check_prose=checks.check_prose)
        module = plate.module
        module.figures(plate, module.model_of(plate), cache.Cache(Path({str(tmp_path / "cache")!r}), module.CODE))
        print(sorted(m for m in ("altair", "vl_convert") if m in sys.modules))
    """)
    run = [sys.executable, "-c", script]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    first = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    second = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(first.replace("'", '"')) == ["altair", "vl_convert"]  # the first build compiled them
    assert json.loads(second.replace("'", '"')) == []


def test_the_build_keeps_its_cache_beside_the_runtime(tmp_path, monkeypatch):
    """assembly.gather takes the cache at assembly.cache_dir() ($PLATE_CACHE, else the user's cache), in a folder of its
    own there, and fills it."""
    assert cache.at(tmp_path).folder == tmp_path / cache.FOLDER
    asked = []
    monkeypatch.setattr(cache, "at", lambda root, module=None: asked.append(root) or Cache(tmp_path / "kept"))
    assembly.gather(XIV4_MINI)
    assert asked == [assembly.cache_dir()]
    assert cache.FOLDER not in {"", ".", ".."} and "/" not in cache.FOLDER  # its own folder, inside the root
    kinds = sorted(p.name.split(".", 1)[1] for p in (tmp_path / "kept").iterdir())
    assert "csv" in kinds and "svg" in kinds and "vega.json" in kinds


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = Cache(tmp_path / "cache")
    real = os.replace

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.put("entry.svg", "<svg/>")
    assert list((tmp_path / "cache").iterdir()) == []
    monkeypatch.setattr(os, "replace", real)
    store.put("entry.svg", "<svg/>")
    assert store.get("entry.svg") == "<svg/>" and [p.name for p in (tmp_path / "cache").iterdir()] == ["entry.svg"]


def test_the_least_recently_used_entries_go_beyond_the_limit_and_only_entries(tmp_path):
    folder = tmp_path / "cache"
    store = Cache(folder)
    names = [f"{cache.key(i)}.svg" for i in range(6)]
    for i, name in enumerate(names):
        store.put(name, "x" * 1000)
        os.utime(folder / name, ns=(i * 10**9, i * 10**9))  # written in this order, a second apart
    assert store.get(names[0]) == "x" * 1000  # read now: the most recently used
    foreign = {f"{cache.key('foreign')}.svg": b"not sealed by the cache\n", "notes.txt": b"mine\n"}
    for name, data in foreign.items():
        (folder / name).write_bytes(data)
        os.utime(folder / name, ns=(0, 0))  # older than every entry
    (folder / f"{cache.key('link')}.svg").symlink_to(folder / names[1])
    store.prune(limit=3 * 1100)
    kept = {p.name for p in folder.iterdir()}
    assert names[0] in kept and names[5] in kept and names[4] in kept  # the three most recently used
    assert not {names[1], names[2], names[3]} & kept
    assert all((folder / name).read_bytes() == data for name, data in foreign.items())  # never another's file
    assert (folder / f"{cache.key('link')}.svg").is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero", "link-to-an-entry"])
def test_an_entry_that_is_no_regular_file_is_made_anew_without_hanging(kind, tmp_path):
    store = cache.Cache(tmp_path / "c")
    text = store.kept("csv", ("a",), lambda: "made")
    [entry] = (tmp_path / "c").iterdir()
    entry.rename(tmp_path / "elsewhere")
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "link-to-dev-zero":
        entry.symlink_to("/dev/zero")
    else:
        entry.symlink_to(tmp_path / "elsewhere")  # a sealed entry, but reached through a link
    results = []
    worker = threading.Thread(target=lambda: results.append(store.kept("csv", ("a",), lambda: "made again")),
                              daemon=True)
    worker.start()
    worker.join(timeout=30)  # a bound for a hang, not a speed target
    assert results == ["made again"] and text == "made"
    assert entry.is_symlink() or not entry.is_file()  # left as it was: not the cache's to replace
