"""`pip install` puts Vega's npm packages beside the engine (generator/packaging.py, runtime.install_packaged): a
build then needs no network, and an offline first build writes the page an online one does."""
import os
import subprocess
import sys

import pytest

from conftest import FIXTURE, ROOT
from generator.page import runtime


def fake_npm(calls: list):
    """A stand-in for `npm ci` that writes the same small tree each time, as npm ci does from one lockfile."""
    def npm_ci(staging, cache, say):
        calls.append(staging)
        for rel, text in {"vega-view/index.js": "export {};\n", "esbuild/bin/esbuild": "#!/bin/sh\n"}.items():
            (staging / "node_modules" / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / "node_modules" / rel).write_text(text)
    return npm_ci


@pytest.fixture
def target(tmp_path, monkeypatch):
    """A folder as the package build gives it (the lockfiles, no install yet), and a private cache."""
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "node"
    folder.mkdir()
    for name in runtime.PACKAGE_FILES:
        (folder / name).write_bytes((runtime.NODE_SOURCES / name).read_bytes())
    return folder


def test_the_install_goes_beside_the_scripts_once_and_is_what_builds_use(target, monkeypatch):
    calls = []
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls))
    assert runtime.install_packaged(target, lambda line: None) is True
    assert (target / "node_modules" / "vega-view" / "index.js").is_file()
    assert runtime._verify(target, runtime.install_key()) == (None, [])
    assert runtime.install_packaged(target, lambda line: None) is False and len(calls) == 1  # whole: left as it is
    # its working folder went; npm's downloads stay in the cache for the next install
    assert not list((target.parent / "cache").glob("node-*"))
    monkeypatch.setattr(runtime, "PACKAGED", target)
    assert runtime.toolchain(target.parent / "elsewhere") == target  # no npm at build time
    assert not (target.parent / "elsewhere").exists()


def test_a_damaged_install_is_made_again_and_a_foreign_one_left(target, monkeypatch):
    calls = []
    monkeypatch.setattr(runtime, "_npm_ci", fake_npm(calls))
    runtime.install_packaged(target, lambda line: None)
    (target / "node_modules" / "vega-view" / "index.js").write_text("export con")
    monkeypatch.setattr(runtime, "PACKAGED", target)
    assert "not whole" in runtime.packaged_problem()
    assert runtime.install_packaged(target, lambda line: None) is True and len(calls) == 2
    assert (target / "node_modules" / "vega-view" / "index.js").read_text() == "export {};\n"
    assert runtime.packaged_problem() is None
    (target / "node_modules" / "vega-view" / "mine.js").write_text("someone's")
    with pytest.raises(runtime.Unavailable, match="holds files npm did not write"):
        runtime.install_packaged(target, lambda line: None)
    assert (target / "node_modules" / "vega-view" / "mine.js").read_text() == "someone's"
    (target / runtime.STAMP).unlink()  # a node_modules plate did not make
    with pytest.raises(runtime.Unavailable, match="was not installed by plate"):
        runtime.install_packaged(target, lambda line: None)
    assert (target / "node_modules" / "vega-view" / "mine.js").read_text() == "someone's" and len(calls) == 2


# Every way a build could reach the network, pointed at a port where nothing listens (refused at once).
DEAD = "http://127.0.0.1:9/"
OFFLINE = {"npm_config_registry": DEAD, "NPM_CONFIG_REGISTRY": DEAD, "http_proxy": DEAD, "https_proxy": DEAD,
           "HTTP_PROXY": DEAD, "HTTPS_PROXY": DEAD, "ALL_PROXY": DEAD, "all_proxy": DEAD, "no_proxy": "",
           "NO_PROXY": ""}


def first_build(tmp_path, name: str, **env) -> tuple[dict[str, bytes], str]:
    """`plate build` of the fixture in a new process with a cache of its own (nothing cached: a first build):
    {file: bytes}, and what it printed on stderr."""
    out = tmp_path / name
    done = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(FIXTURE), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PLATE_CACHE": str(tmp_path / f"cache-{name}"), **env})
    assert done.returncode == 0, done.stderr
    return {p.name: p.read_bytes() for p in out.iterdir()}, done.stderr


def test_an_offline_first_build_writes_the_page_an_online_one_does(tmp_path):
    assert runtime.packaged_problem() is None, "pip install -e . puts Vega's packages beside generator/node/'s scripts"
    offline, said = first_build(tmp_path, "offline", **OFFLINE)
    assert "warning" not in said, said
    online, _ = first_build(tmp_path, "online")
    assert offline.keys() == online.keys() and all(offline[name] == online[name] for name in online)
    page = offline["index.html"].decode()
    assert 'id="dataflow-' in page  # the lean runtime, parsed at build time (vl-convert's fallback carries specs)
    assert not list((tmp_path / "cache-offline").glob("node-*"))  # nothing installed into the cache
