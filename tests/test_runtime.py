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
