"""What names kept work: the build cache's code fingerprint reads every byte of the generator, and the memo a
running `plate serve` keeps is made again when anything the figures are made of changes, the default included."""
from __future__ import annotations

import shutil

from generator.site import assembly, cache

from conftest import XIV4_MINI


def test_an_edit_of_the_same_size_makes_cached_entries_anew(tmp_path, monkeypatch):
    code = tmp_path / "generator"
    code.mkdir()
    (code / "model.py").write_text("MFU = 1.5\n")
    (code / "other.py").write_text("# unchanged\n")
    monkeypatch.setattr(cache, "GENERATOR", code)
    cache.code.cache_clear()
    store = cache.Cache(tmp_path / "cache")
    try:
        assert store.kept("csv", ("parts",), lambda: "made by 1.5") == "made by 1.5"
        assert store.kept("csv", ("parts",), lambda: "made again") == "made by 1.5"  # kept: the code is the same
        before, size = cache.code(), (code / "model.py").stat().st_size
        (code / "model.py").write_text("MFU = 1.4\n")  # an author's edit: the same name, the same size
        assert (code / "model.py").stat().st_size == size
        cache.code.cache_clear()  # a new process
        assert cache.code() != before
        assert store.kept("csv", ("parts",), lambda: "made by 1.4") == "made by 1.4"
    finally:
        cache.code.cache_clear()


def test_a_rebuild_with_the_memo_after_a_new_default_is_a_fresh_build(tmp_path):
    content = tmp_path / "content"
    shutil.copytree(XIV4_MINI, content)
    plate = content / "plate.md"
    memo: dict = {}
    first = assembly.gather(content, memo=memo)
    text = plate.read_text()
    assert 'model = "tiny"' in text and "[models.huge]" in (content / "presets.toml").read_text()
    plate.write_text(text.replace('model = "tiny"', 'model = "huge"', 1))  # the presets stay as they were
    again = assembly.gather(content, memo=memo)
    fresh = assembly.gather(content)
    assert again["index.html"] != first["index.html"]
    assert again == fresh  # the figures' static SVGs show the new default, as a fresh build draws them
