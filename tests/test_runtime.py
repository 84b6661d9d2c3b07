"""The Vega runtime bundle: self-contained, exposing what the page script uses."""
import re

import pytest

from generator import build, runtime


@pytest.fixture(scope="module")
def code() -> str:
    return build.runtime_js()


def test_bundle_exposes_view_parse_and_the_interpreter(code):
    assert "window.vega=" in code.replace(" ", "")
    assert "window.vegaExpressionInterpreter=" in code.replace(" ", "")


def test_bundle_imports_nothing(code):
    assert not re.search(r"^\s*import\s", code, re.M)
    assert "import(" not in code
    assert "cdn.jsdelivr" not in code
    urls = set(re.findall(r"https?://[^\s\"'`)]+", code))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/2000/xmlns/", "http://www.w3.org/1999/xlink"}


def test_snippet_pins_versions():
    assert f"vega@{runtime.VEGA_VERSION}/" in runtime.SNIPPET
    assert f"vega-interpreter@{runtime.INTERPRETER_VERSION}/" in runtime.SNIPPET


def test_cache_name_changes_with_the_snippet(monkeypatch):
    before = runtime.cache_name()
    monkeypatch.setattr(runtime, "SNIPPET", runtime.SNIPPET + "\n// changed")
    assert runtime.cache_name() != before


def test_cache_name_changes_with_vl_convert_version(monkeypatch):
    before = runtime.cache_name()
    monkeypatch.setattr(runtime.vlc, "__version__", runtime.vlc.__version__ + ".post-test")
    assert runtime.cache_name() != before


# --- the cache is checked on every read: a damaged runtime is bundled anew, never shipped ------------------

@pytest.fixture
def counted(tmp_path, monkeypatch):
    """A private cache and a stand-in bundler that counts its calls: (cached file, calls)."""
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    calls = []

    def bundle():
        calls.append(1)
        return "window.vega={View:1,parse:2};window.vegaExpressionInterpreter=3;/*" + "x" * 4000 + "*/\n"
    monkeypatch.setattr(runtime, "bundle", bundle)
    return tmp_path / "cache" / runtime.cache_name(), calls


@pytest.mark.parametrize("damage", ["truncated", "empty", "one-byte-changed", "seal-missing", "seal-truncated"])
def test_a_damaged_cached_runtime_is_bundled_anew(damage, counted):
    path, calls = counted
    code = build.runtime_js()
    assert build.runtime_js() == code and len(calls) == 1  # the second read comes from the cache
    seal = path.with_name(path.name + ".sha256")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "one-byte-changed":
        path.write_bytes(data[:100] + b"y" + data[101:])
    elif damage == "seal-missing":
        seal.unlink()
    else:
        seal.write_text(seal.read_text()[:10])
    assert build.runtime_js() == code and len(calls) == 2
    assert path.read_text() == code and build.runtime_js() == code and len(calls) == 2  # repaired


def test_an_empty_bundle_fails_the_build_and_keeps_the_site(counted, tmp_path, monkeypatch, capsys):
    from generator import cli

    from conftest import FIXTURE
    out = tmp_path / "site"
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    counted[0].unlink()
    monkeypatch.setattr(runtime, "bundle", lambda: "")
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty Vega runtime" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_truncated_cache_gives_the_same_page(tmp_path, monkeypatch):
    from conftest import FIXTURE
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    build.build(FIXTURE, tmp_path / "a")
    cached = tmp_path / "cache" / runtime.cache_name()
    cached.write_bytes(cached.read_bytes()[:1000])  # a build killed while the cache was written
    build.build(FIXTURE, tmp_path / "b")
    assert (tmp_path / "a" / "index.html").read_bytes() == (tmp_path / "b" / "index.html").read_bytes()
