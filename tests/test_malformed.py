"""Malformed content, one mistake at a time, through the real command: exit status 1, the file and line named,
no traceback, and the previous site left byte for byte as it was."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.plate import charts
from generator.site import build, output
from generator.commands import cli

from xiv4 import PLATE
from conftest import XIV4_MINI, ROOT


@dataclass(frozen=True)
class Case:
    """One author's mistake: edits to the fixture, a fragment of the expected message, and where it points."""

    id: str
    file: str
    edits: tuple  # (old, new) replacements, or (None, whole new text)
    message: str  # a fragment the report must contain
    line: str | int | None  # text on the offending line of the edited file, a line number, or None (no line)


CASES = [
    # plate.md: front matter
    Case("front-matter-unclosed", "plate.md", (("---\nA tiny", "A tiny"),), "never closed", 1),
    Case("front-matter-not-at-top", "plate.md", ((None, "\n{plate.md}"),), "must start on line 1", 1),
    Case("front-matter-missing", "plate.md", ((None, "Just prose.\n\n[[figures]]\n"),),
         "must start with a front matter block", 1),
    Case("front-matter-empty", "plate.md", ((None, "---\n---\nProse.\n\n[[figures]]\n"),),
         "the front matter is empty", 1),
    Case("front-matter-toml-syntax", "plate.md", (('title = "A Small Plate"', 'title = "A Small Plate'),),
         "TOML syntax error", 'title = "A Small Plate'),
    Case("front-matter-missing-key", "plate.md", (('title = "A Small Plate"\n', ""),),
         'front matter: missing key "title"', 1),
    Case("front-matter-unknown-key", "plate.md", (("takeaway =", "take_away ="),),
         'unknown key "take_away" (did you mean "takeaway"?)', "take_away ="),
    Case("front-matter-plate-is-text", "plate.md", (("plate = 1", 'plate = "one"'),),
         'plate must be a positive whole number, got "one"', 'plate = "one"'),
    Case("front-matter-plate-zero", "plate.md", (("plate = 1", "plate = 0"),),
         "plate must be a positive whole number, got 0", "plate = 0"),
    Case("front-matter-plate-beyond-volume", "plate.md", (("plate = 1", "plate = 3"),),
         "plate 3 is beyond plates_in_volume 2", "plate = 3"),
    Case("front-matter-keywords-not-a-list", "plate.md", (('keywords = ["fixture"]', 'keywords = "fixture"'),),
         "keywords must be a list of texts", 'keywords = "fixture"'),
    Case("default-names-missing-preset", "plate.md", (('model = "tiny"', 'model = "tiny-x"'),),
         '[default]: model "tiny-x" is not a preset (did you mean "tiny"?', 'model = "tiny-x"'),
    Case("default-key-at-top-level", "plate.md", (('[default]\nmodel = "tiny"\n', 'model = "tiny"\n[default]\n'),),
         'unknown key "model" here (it belongs in a [default] table)', 'model = "tiny"'),
    Case("figures-inside-front-matter", "plate.md",
         (('network = "slow"\n---', 'network = "slow"\n[[figures]]\n---'), ("\n[[figures]]\n\n## After", "\n## After")),
         "belongs in the prose", "[[figures]]"),
    # plate.md: the prose
    Case("figures-missing", "plate.md", (("[[figures]]\n", ""),), "the prose has no line '[[figures]]'", None),
    Case("figures-doubled", "plate.md", (("## After", "[[figures]]\n\n## After"),),
         "a second line '[[figures]]'", -1),
    Case("figures-inline", "plate.md", (("[[figures]]", "See [[figures]] below."),),
         "must stand on a line of its own", "See [[figures]]"),
    Case("prose-if-without-endif", "plate.md", (("Replicas split the batch.", "{% if true %}Replicas split."),),
         "template syntax error in prose", 1000),
    Case("prose-undefined-fact", "plate.md", (("Replicas split the batch.", "{{ default.nope }}"),),
         "undefined fact or name in prose", "{{ default.nope }}"),
    Case("prose-undefined-name", "plate.md", (("Replicas split the batch.", "{{ nope }}"),),
         "'nope' is undefined", "{{ nope }}"),
    Case("prose-unknown-citation", "plate.md", (('{{ cite("only") }}', '{{ cite("nope") }}'),),
         'cite(): no source "nope" in sources.toml (known: only)', 'cite("nope")'),
    Case("prose-unknown-scenario", "plate.md", (('scenario(network="fast")', 'scenario(model="nope")'),),
         'scenario(): model "nope" is not a preset', 'scenario(model="nope")'),
    Case("prose-scenario-unknown-keyword", "plate.md", (('scenario(network="fast")', 'scenario(colour="fast")'),),
         "scenario() takes only model=, batch=, network=, gpu=, overlap=", 'scenario(colour="fast")'),
    Case("prose-scenario-unknown-option", "plate.md", (('scenario(network="fast")', 'scenario(overlap="fast")'),),
         'scenario(): overlap "fast" is not a choice (known: step, backward)', 'scenario(overlap="fast")'),
    Case("prose-replica-count-off-grid", "plate.md", (("Replicas split the batch.", "{{ default.at(3).efficiency }}"),),
         "3 is not a replica count of the grid", "default.at(3)"),
    Case("prose-filter-on-text", "plate.md", (("Replicas split the batch.", "{{ default.model.name | num }}"),),
         "'num' needs a number, got \"Tiny\"", "model.name | num"),
    Case("prose-reaches-python-internals", "plate.md", (("Replicas split the batch.", "{{ default.__class__ }}"),),
         "not allowed in prose", "default.__class__"),
    Case("prose-writes-a-file", "plate.md",
         (("Replicas split the batch.", '{{ default.grid.replicas.tofile("/tmp/plate-pwned") }}'),),
         "not allowed in prose", "tofile"),
    Case("prose-mutates-presets", "plate.md", (("Replicas split the batch.", "{{ models.clear() }}"),),
         "not allowed in prose", "models.clear()"),
    Case("prose-division-by-zero", "plate.md", (("Replicas split the batch.", "{{ 1 / 0 }}"),),
         "ZeroDivisionError", "{{ 1 / 0 }}"),
    Case("prose-links-missing-term", "plate.md", (("Replicas split the batch.", "[split](#term-splitting)"),),
         'link to #term-splitting: no term "splitting" in terms.toml', "#term-splitting"),
    Case("prose-links-missing-source", "plate.md", (("Replicas split the batch.", "[x](#source-nobody)"),),
         'no source "nobody" in sources.toml', "#source-nobody"),
    Case("plate-not-utf8", "plate.md", (("Replicas split", "Replicas \udcff split"),), "is not UTF-8 text", "Replicas"),
    Case("plate-missing", "plate.md", ((None, None),), "file is missing", None),
    Case("plate-is-a-folder", "plate.md", ((None, "<folder>"),), "is a folder, not a file", None),
    # presets.toml
    Case("network-nvlink-and-bandwidth", "presets.toml",
         (("link_gbytes_per_s = 10", "link_gbytes_per_s = 10\nnvlink = true"),),
         'network "slow": give either link_gbytes_per_s', "[networks.slow]"),
    Case("network-no-link", "presets.toml", (("link_gbytes_per_s = 10\n", ""),),
         "one is missing", "[networks.slow]"),
    Case("network-nvlink-not-a-flag", "presets.toml", (("link_gbytes_per_s = 10", "nvlink = \"yes\""),),
         "nvlink must be true or false", 'nvlink = "yes"'),
    Case("gpu-source-unknown", "presets.toml", (("nvlink_gbytes_per_s = 25", 'nvlink_gbytes_per_s = 25\nsource = "nope"'),),
         'gpu "g": source "nope" is not in sources.toml', 'source = "nope"'),
    Case("gpu-domain-not-a-count", "presets.toml",
         (("nvlink_gbytes_per_s = 25", "nvlink_gbytes_per_s = 25\nnvlink_domain = 7.5"),),
         "nvlink_domain must be a positive whole number", "nvlink_domain = 7.5"),
    Case("bandwidth-negative", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = -1"),),
         'network "slow": link_gbytes_per_s must be a positive number, got -1', "= -1"),
    Case("bandwidth-nan", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = nan"),),
         "link_gbytes_per_s must be a positive number, got nan", "= nan"),
    Case("bandwidth-inf", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = inf"),),
         "link_gbytes_per_s must be a positive number, got inf", "= inf"),
    Case("bandwidth-zero", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = 0"),),
         "link_gbytes_per_s must be a positive number, got 0", "link_gbytes_per_s = 0"),
    Case("bandwidth-bool", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = true"),),
         "link_gbytes_per_s must be a positive number, got true", "= true"),
    Case("bandwidth-text", "presets.toml", (("link_gbytes_per_s = 10", 'link_gbytes_per_s = "10"'),),
         'link_gbytes_per_s must be a positive number, got "10"', '= "10"'),
    Case("params-float", "presets.toml", (("params = 1_000_000_000", "params = 1.0e9"),),
         "params must be a whole number written without a decimal point or exponent (e.g. 1_000_000_000)",
         "params = 1.0e9"),
    Case("params-fractional", "presets.toml", (("params = 1_000_000_000", "params = 1.5"),),
         "params must be a positive whole number, got 1.5", "params = 1.5"),
    Case("params-below-embedding", "presets.toml", (("params = 1_000_000_000", "params = 1_000"),),
         "must exceed the embedding and output head", "params = 1_000"),
    Case("mfu-above-one", "presets.toml", (("mfu = 0.5", "mfu = 1.5"),),
         "[workshop]: mfu must be a number greater than 0 and at most 1, got 1.5", "mfu = 1.5"),
    Case("max-replicas-not-power-of-two", "presets.toml", (("max_replicas = 64", "max_replicas = 100"),),
         "max_replicas must be a power of two", "max_replicas = 100"),
    Case("max-replicas-too-many", "presets.toml", (("max_replicas = 64", "max_replicas = 1_073_741_824"),),
         "max_replicas must be a power of two from 1 to 1,048,576", "max_replicas ="),
    Case("workshop-gpu-missing", "presets.toml", (('gpu = "g"', 'gpu = "h100"'),),
         'gpu "h100" is not a [gpus.<id>] table (known: g)', 'gpu = "h100"'),
    Case("workshop-missing", "presets.toml", (("[workshop]\n", "[other]\n"),),
         "missing table [workshop]", None),
    Case("network-unknown-key", "presets.toml", (('short = "slow"', 'short = "slow"\nlatency_us = 5'),),
         'network "slow": unknown key "latency_us"', "latency_us"),
    Case("model-missing-key", "presets.toml", (("vocab = 32000\n\n[models.huge]", "\n[models.huge]"),),
         'model "tiny": missing key "vocab"', "[models.tiny]"),
    Case("duplicate-table", "presets.toml", (("[networks.fast]", "[networks.slow]"),),
         "TOML syntax error: the table [networks.slow] is written twice", -1),
    Case("duplicate-key", "presets.toml", (('short = "fast"', 'short = "fast"\nshort = "quick"'),),
         "TOML syntax error: a key is written twice", 'short = "quick"'),
    Case("duplicate-key-last-line", "presets.toml", ((None, "{presets.toml}link_gbytes_per_s = 30\n"),),
         "a key is written twice", "link_gbytes_per_s = 30"),
    Case("unclosed-string-at-end", "presets.toml", ((None, '{presets.toml}[networks.x]\nname = """oops\n'),),
         "TOML syntax error: Unterminated string", 'name = """oops'),
    Case("id-with-space", "presets.toml", (("[models.huge]", '[models."huge model"]'),),
         'model id "huge model" must start with a letter or digit', "huge model"),
    Case("key-at-wrong-level", "presets.toml", (("[networks.slow]", "[networks]\nlink_gbytes_per_s = 5\n[networks.slow]"),),
         "[networks]: link_gbytes_per_s = 5 is not a [networks.<id>] table", "link_gbytes_per_s = 5"),
    Case("models-array-of-tables", "presets.toml", (("[models.tiny]", "[[models]]\n[models.tiny]"),),
         "[models] must hold at least one [models.<id>] table, got a list", "[[models]]"),
    Case("duplicate-network-name", "presets.toml", (('name = "Fast link"', 'name = "slow LINK"'),),
         'network "fast": name "slow LINK" is also the name of network "slow"', 'name = "slow LINK"'),
    Case("presets-empty", "presets.toml", ((None, ""),), "missing table [workshop]", None),
    Case("presets-tab-and-bom-but-wrong", "presets.toml",
         ((None, "\ufeff{presets.toml}"), ("mfu = 0.5", "mfu =\t2")), "mfu must be a number", "mfu =\t2"),
    Case("presets-missing", "presets.toml", ((None, None),), "file is missing", None),
    # terms.toml
    Case("term-matches-not-a-list", "terms.toml", (('matches = ["replicas"]', 'matches = "replicas"'),),
         'term "replica": matches must be a list of texts', 'matches = "replicas"'),
    Case("term-duplicate-name", "terms.toml", ((None, '{terms.toml}\n[terms.copy]\nname = "replica"\n'
                                                      'definition = "Again."\n'),),
         'term "copy": "replica" is already a spelling of term "replica"', 'name = "replica"'),
    Case("term-missing-definition", "terms.toml", (('definition = "One copy of the model."', ""),),
         'term "replica": missing key "definition"', "[terms.replica]"),
    Case("term-typo-key", "terms.toml", (("matches =", "match ="),),
         'unknown key "match" (did you mean "matches"?)', "match ="),
    Case("terms-syntax-error", "terms.toml", (('name = "Replica"', "name = Replica"),),
         "TOML syntax error", "name = Replica"),
    Case("terms-empty", "terms.toml", ((None, "# nothing yet\n"),), "missing table [terms.<id>]", None),
    Case("term-id-odd", "terms.toml", (("[terms.replica]", '[terms."-replica"]'),),
         'term id "-replica" must start with a letter or digit', "-replica"),
    # sources.toml
    Case("source-javascript-url", "sources.toml", (('url = "https://arxiv.org/abs/0000.00000"',
                                                     'url = "javascript:alert(1)"'),),
         'source "only": url must be an http:// or https:// address, got "javascript:alert(1)"', "javascript:"),
    Case("source-url-number", "sources.toml", (('url = "https://arxiv.org/abs/0000.00000"', "url = 42"),),
         "url must be an http:// or https:// address, got 42", "url = 42"),
    Case("source-missing-label", "sources.toml", (('label = "arXiv:0000.00000"', ""),),
         'source "only": missing key "label"', "[sources.only]"),
    Case("source-duplicate-table", "sources.toml", ((None, "{sources.toml}\n[sources.only]\ntitle = \"x\"\n"),),
         "the table [sources.only] is written twice", -1),
    Case("source-singular-table", "sources.toml", (("[sources.only]", "[source.only]"),),
         'unknown table or key "source" (did you mean [sources]?)', "[source.only]"),
    Case("source-empty-title", "sources.toml", (('title = "A Paper"', 'title = "  "'),),
         'title must be non-empty text, got "  "', 'title = "  "'),
    # control characters, in every kind of text field and raw in a file (a NUL aborted vl-convert's Rust)
    Case("nul-in-preset-name", "presets.toml", (('name = "Huge"', 'name = "Hu\\u0000ge"'),),
         'model "huge": name holds the control character U+0000 (NUL)', "Hu\\u0000ge"),
    Case("escape-in-network-short", "presets.toml", (('short = "fast"', 'short = "f\\u001bast"'),),
         "short holds the control character U+001B (escape)", "f\\u001bast"),
    Case("nul-in-title", "plate.md", (('title = "A Small Plate"', 'title = "A Small\\u0000Plate"'),),
         "front matter: title holds the control character U+0000", "A Small\\u0000Plate"),
    Case("nul-in-keywords", "plate.md", (('keywords = ["fixture"]', 'keywords = ["fix\\u0000ture"]'),),
         "keywords holds the control character U+0000", "fix\\u0000ture"),
    Case("nul-in-default", "plate.md", (('model = "tiny"', 'model = "ti\\u0000ny"'),),
         "[default]: model holds the control character U+0000", "ti\\u0000ny"),
    Case("nul-in-term-matches", "terms.toml", (('matches = ["replicas"]', 'matches = ["repl\\u0000icas"]'),),
         'term "replica": matches holds the control character U+0000', "repl\\u0000icas"),
    Case("nul-in-term-definition", "terms.toml", (('definition = "One copy', 'definition = "One\\u0000copy'),),
         "definition holds the control character U+0000", "One\\u0000copy"),
    Case("nul-in-source-url", "sources.toml", (("https://arxiv.org/abs/", "https://arxiv.org/\\u0000abs/"),),
         'source "only": url holds the control character U+0000', "\\u0000abs"),
    Case("c1-control-in-source-title", "sources.toml", (('title = "A Paper"', 'title = "A\\u0085Paper"'),),
         "title holds the control character U+0085", "A\\u0085Paper"),
    Case("nul-byte-in-prose", "plate.md", (("Replicas split the batch.", "Replicas \x00 split."),),
         "holds the control character U+0000 (NUL)", "Replicas \x00"),
    Case("nul-byte-in-toml-comment", "terms.toml", (("[terms.replica]", "# a \x00 comment\n[terms.replica]"),),
         "holds the control character U+0000", "a \x00 comment"),
    # numbers positive and finite, yet far beyond any GPU or link: the model would overflow
    Case("bandwidth-1e-300", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = 1e-300"),),
         "link_gbytes_per_s must be from 0.001 to 1,000,000 GB/s per direction, got 1e-300", "= 1e-300"),
    Case("peak-5e-324", "presets.toml", (("peak_tflops = 100", "peak_tflops = 5e-324"),),
         'gpu "g": peak_tflops must be from 0.001 to 1,000,000 TFLOP/s, got 5e-324', "= 5e-324"),
    Case("memory-1e300", "presets.toml", (("memory_gb = 40", "memory_gb = 1e300"),),
         "memory_gb must be from 0.001 to 1,000,000 GB, got 1e+300", "= 1e300"),
    Case("nvlink-tiny", "presets.toml", (("nvlink_gbytes_per_s = 25", "nvlink_gbytes_per_s = 1e-9"),),
         "nvlink_gbytes_per_s must be from 0.001", "= 1e-9"),
    Case("mfu-zero", "presets.toml", (("mfu = 0.5", "mfu = 0"),),
         "[workshop]: mfu must be a number greater than 0 and at most 1, got 0", "mfu = 0"),
    Case("mfu-1e-300", "presets.toml", (("mfu = 0.5", "mfu = 1e-300"),),
         "[workshop]: mfu must be from 0.001 to 1, got 1e-300", "mfu = 1e-300"),
    Case("step-takes-ages", "presets.toml",
         (("params = 10_000_000_000", "params = 9_000_000_000_000_000"),
          ("tokens = 65_536", "tokens = 9_000_000_000_000_000"), ("peak_tflops = 100", "peak_tflops = 0.001"),
          ("mfu = 0.5", "mfu = 0.001")),
         'model "huge" with batch "small" over network "slow": one step would take', "params = 9_000"),
    # content beyond what a series needs: every count in the message
    Case("csv-too-many-rows", "presets.toml",
         ((None, "{presets.toml}" + "".join(f'[batches.b{i}]\nname = "b{i}"\ntokens = 1024\n' for i in range(11_904))),
          ("max_replicas = 64", "max_replicas = 1_048_576")),
         f"the data file would have {2 * 11_905 * 2 * 21:,} rows (2 models × 11,905 batches × 2 networks × 21 "
         f"replica counts), more than the 1,000,000", "max_replicas = 1_048_576"),
    Case("too-many-selections", "presets.toml",
         ((None, "{presets.toml}"
                 + "".join(f'[models.m{i}]\nname = "m{i}"\nparams = 1_000_000_000\nlayers = 8\nd_model = 1024\n'
                           f'ffn = 4096\nvocab = 32000\n' for i in range(98))
                 + "".join(f'[batches.b{i}]\nname = "b{i}"\ntokens = 1024\n' for i in range(99))
                 + "".join(f'[networks.n{i}]\nname = "n{i}"\nshort = "n{i}"\nlink_gbytes_per_s = 1\n'
                           for i in range(39))),),
         "410,000 selections (100 models × 100 batches × 41 networks × 1 GPU), more than the 400,000",
         "[models.tiny]"),
    Case("too-many-terms", "terms.toml",
         ((None, "{terms.toml}" + "".join(f'[terms.t{i}]\nname = "t{i}"\ndefinition = "d"\n' for i in range(1000))),),
         "[terms] holds 1,001 tables, more than the 1,000 a plate can show", "[terms.replica]"),
    # prose nested or long enough to take Markdown or Jinja minutes (or a RecursionError)
    Case("prose-lists-too-deep", "plate.md",
         (("Replicas split the batch.", "".join("    " * i + "- x\n" for i in range(20))),),
         "lists or quotes nested more than 16 levels deep", "    " * 17 + "- x"),
    Case("prose-quotes-too-deep", "plate.md", (("Replicas split the batch.", "> " * 40 + "deep"),),
         "lists or quotes nested more than 16 levels deep", "> > > deep"),
    Case("prose-brackets-too-deep", "plate.md", (("Replicas split the batch.", "ok\n" + "[" * 5000 + "x"),),
         "brackets nested or left open 17 deep", "[[[[x"),
    Case("prose-parentheses-in-a-slot", "plate.md",
         (("Replicas split the batch.", "ok\n{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}"),),
         "brackets nested or left open 17 deep", "{{ (((("),
    Case("prose-ifs-too-deep", "plate.md",
         (("Replicas split the batch.", "{% if true %}" * 16 + "\n{% if 1 %}x" + "{% endif %}" * 17),),
         "{% … %} blocks nested 17 deep", "{% if 1 %}"),
    Case("prose-html-too-deep", "plate.md",
         (("Replicas split the batch.", "<span>" * 16 + "\n<b>x</b>" + "</span>" * 16),),
         "HTML tags nested or left open 17 deep", "<b>x"),
    Case("prose-paragraph-too-long", "plate.md", (("Replicas split the batch.", "\n" + "split " * 4000),),
         "a paragraph of 24,001 characters", "split split"),
    Case("prose-too-long", "plate.md", (("Replicas split the batch.", ("Split. " * 100 + "\n\n") * 80),),
         "this part of the prose holds", "A tiny model of"),
    Case("prose-loop-runs-for-hours", "plate.md",
         (("Replicas split the batch.", "{% for i in range(99999) %}{% for j in range(99999) %}x{% endfor %}"
                                        "{% endfor %}"),),
         "filling the slots", "{% for i in"),  # made too much prose: stopped before the time limit
]


def test_at_least_fifteen_distinct_mistakes_across_every_file():
    assert len({c.id for c in CASES}) == len(CASES) >= 15
    assert {c.file for c in CASES} == {"plate.md", "presets.toml", "terms.toml", "sources.toml"}


@pytest.fixture(scope="module")
def previous_site(tmp_path_factory) -> Path:
    """A site built from the fixture: what every failed build must leave alone."""
    out = tmp_path_factory.mktemp("previous") / "site"
    build.build(XIV4_MINI, out)
    return out


def snapshot(folder: Path) -> dict:
    """Every file below folder (and beside it), with its bytes."""
    return {str(p.relative_to(folder.parent)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.parent.rglob("*"))}


def apply(root: Path, case: Case) -> Path:
    """The fixture with the case's edits applied; the edited file."""
    path = root / case.file
    for old, new in case.edits:
        if old is None and new is None:
            path.unlink()
        elif old is None and new == "<folder>":
            path.unlink()
            path.mkdir()
            (path / "index.md").write_text("x")
        elif old is None:
            new = re.sub(r"\{([a-z]+\.(?:md|toml))\}", lambda m: (XIV4_MINI / m.group(1)).read_text(), new)
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
        else:
            text = path.read_text()
            assert old in text, f"the fixture no longer contains {old!r}"
            path.write_text(text.replace(old, new, 1), encoding="utf-8", errors="surrogateescape")
    return path


def expected_line(path: Path, line) -> int | None:
    """The line a case's message must name."""
    if line is None or isinstance(line, int) and line > 0 and line != 1000:
        return line
    lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    if line == -1:  # the last line that repeats an earlier one (a second [[figures]], a table written twice)
        seen = set()
        found = None
        for number, text in enumerate(lines, 1):
            if text.strip() and text.strip() in seen and text.startswith("["):
                found = number
            seen.add(text.strip())
        return found
    if line == 1000:  # the line of an {% if %} never closed
        line = "{% if"
    return next(n for n, text in enumerate(lines, 1) if line in text)


def run(content_dir: Path, out: Path, capsys) -> tuple[int, str]:
    status = cli.main(["build", "--content", str(content_dir), "--out", str(out)])
    captured = capsys.readouterr()
    return status, captured.err + captured.out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_mistake_is_named_by_file_and_line_and_leaves_the_site(case, tmp_path, previous_site, capsys):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    path = apply(root, case)
    out = tmp_path / "out" / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    status, report = run(root, out, capsys)
    assert status == 1, report
    assert "Traceback" not in report
    line = expected_line(path, case.line)
    where = f"content/{case.file}, line {line}: " if line else f"content/{case.file}: "
    problems = [p.strip() for p in report.splitlines()[1:]]
    assert any(p.startswith(where) and case.message in p for p in problems), \
        f"expected a line starting {where!r} with {case.message!r} in:\n{report}"
    assert snapshot(out) == before


def test_every_mistake_of_a_build_is_reported_together(tmp_path, capsys, previous_site):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    chosen = ["bandwidth-nan", "term-matches-not-a-list", "source-javascript-url", "default-names-missing-preset",
              "front-matter-unknown-key", "params-float"]
    for case in CASES:
        if case.id in chosen:
            apply(root, case)
    out = tmp_path / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    status, report = run(root, out, capsys)
    assert status == 1 and "Traceback" not in report
    assert report.splitlines()[0].startswith("plate: the content has 6 mistakes;")
    for file in ("plate.md", "presets.toml", "terms.toml", "sources.toml"):
        assert f"content/{file}, line " in report
    assert snapshot(out) == before


def test_prose_mistakes_are_all_reported_with_content_mistakes(tmp_path, capsys):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    apply(root, Case("x", "plate.md", (("Replicas split the batch.", "{{ default.nope }}"),
                                       ('scenario(network="fast")', 'scenario(network="nope")')), "", None))
    status, report = run(root, tmp_path / "site", capsys)
    assert status == 1 and "the content has 2 mistakes" in report
    assert "undefined fact" in report and 'network "nope" is not a preset' in report


def test_prose_mistakes_found_without_the_model_come_with_the_files_mistakes(tmp_path, capsys):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    apply(root, Case("x", "presets.toml", (("link_gbytes_per_s = 10", "link_gbytes_per_s = -1"),), "", None))
    apply(root, Case("x", "plate.md", (('cite("only")', 'cite("nope")'), ("Replicas split the batch.", "[x](#term-no)"),
                                       ("## After", "## After {% if true %}")), "", None))
    status, report = run(root, tmp_path / "site", capsys)
    assert status == 1 and "the content has 4 mistakes" in report, report
    for fragment in ("presets.toml, line", 'cite(): no source "nope"', "link to #term-no", "{% if %} is never closed"):
        assert fragment in report


# --- through the real command, in a process of its own ----------------------------------------------

def plate(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONHASHSEED": "0"})


def test_the_command_reports_a_mistake_without_traceback(tmp_path, previous_site):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    apply(root, CASES[[c.id for c in CASES].index("bandwidth-negative")])
    out = tmp_path / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    result = plate("build", "--content", str(root), "--out", str(out))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert re.search(r'content/presets.toml, line \d+: network "slow": link_gbytes_per_s must be a positive '
                     r"number, got -1", result.stderr)
    assert snapshot(out) == before
    debug = plate("--debug", "build", "--content", str(root), "--out", str(out))
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert snapshot(out) == before


# --- failures that are not the author's ---------------------------------------------------------------

def test_unexpected_failure_is_one_line_with_a_hint_and_leaves_the_site(tmp_path, previous_site, capsys,
                                                                          monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("vl-convert fell over\nsecond line")
    monkeypatch.setattr(PLATE, "figures", broken)
    out = tmp_path / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    status, report = run(XIV4_MINI, out, capsys)
    assert status == 1
    assert report.count("\n") == 1 and "Traceback" not in report
    assert "RuntimeError: vl-convert fell over second line" in report and "--debug" in report
    assert snapshot(out) == before


def test_a_write_that_fails_midway_restores_the_previous_site(tmp_path, previous_site, capsys, monkeypatch):
    out = tmp_path / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    calls = []

    def failing_fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
    monkeypatch.setattr(build.os, "fsync", failing_fsync)
    status, report = run(XIV4_MINI, out, capsys)
    assert status == 2 and "No space left on device" in report and "Traceback" not in report
    assert snapshot(out) == before


def test_a_failed_swap_puts_the_previous_site_back(tmp_path, previous_site, monkeypatch):
    out = tmp_path / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)  # the two-rename fallback
    real_rename = Path.rename

    def rename(self, target):
        if self.name.startswith(".site-new-"):
            raise OSError(5, "Input/output error")
        return real_rename(self, target)
    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(build.OutputError):
        build.write({"index.html": "new"}, out)
    assert snapshot(out) == before


def test_interrupted_write_leaves_the_previous_site(tmp_path, previous_site, monkeypatch):
    out = tmp_path / "site"
    shutil.copytree(previous_site, out)
    before = snapshot(out)

    def interrupt(fd):
        raise KeyboardInterrupt
    monkeypatch.setattr(build.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        build.write({"index.html": "new"}, out)
    assert snapshot(out) == before


# --- bad command lines: one line, exit status 2 ----------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["build", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["build", "--content"], "expected one argument"),
    (["serve", "--port", "http"], "invalid port 'http'"),
    (["serve", "--port", "70000"], "invalid port 70000"),
    (["serve", "--port", "65536"], "invalid port 65536"),
    (["serve", "--port", "0"], "invalid port 0"),
    (["publish"], "invalid choice: 'publish'"),
    ([], "required: command"),
])
def test_bad_command_line_is_one_line_and_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(args)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.strip().count("\n") == 0 and message in err


def test_content_folder_missing_or_a_file_exits_2(tmp_path, capsys):
    assert cli.main(["build", "--content", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert cli.main(["build", "--content", str(tmp_path / "file"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("where", ["proc", "parent-is-a-file", "out-is-a-file", "content-folder", "above-content"])
def test_unwritable_or_dangerous_output_exits_2_and_touches_nothing(where, tmp_path, previous_site, capsys):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    (tmp_path / "a-file").write_text("keep me")
    site = tmp_path / "site"
    shutil.copytree(previous_site, site)
    before = snapshot(root.parent / "site"), {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    out = {"proc": Path("/proc/plate-site"), "parent-is-a-file": tmp_path / "a-file" / "site",
           "out-is-a-file": tmp_path / "a-file", "content-folder": root, "above-content": tmp_path}[where]
    status = cli.main(["build", "--content", str(root), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert (tmp_path / "a-file").read_text() == "keep me"
    assert (snapshot(root.parent / "site"), {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}) == before


def test_the_highest_port_is_accepted():
    assert cli.parser().parse_args(["serve", "--port", "65535"]).port == 65535
    assert cli.parser().parse_args(["serve", "--port", "1"]).port == 1


# --- values at the edge of what is allowed build ----------------------------------------------------

@pytest.mark.parametrize("edits", [
    (("plate = 1", "plate = 2"),),  # the last plate of its volume
    (("mfu = 0.5", "mfu = 1"),),
    (("peak_tflops = 100", "peak_tflops = 1_000_000"), ("memory_gb = 40", "memory_gb = 0.001"),
     ("nvlink_gbytes_per_s = 25", "nvlink_gbytes_per_s = 1e6")),
], ids=["last-plate-of-the-volume", "mfu-one", "bounds"])
def test_values_at_the_edge_build(edits, tmp_path, capsys):
    root = tmp_path / "content"
    shutil.copytree(XIV4_MINI, root)
    for old, new in edits:
        file = next(p for p in root.iterdir() if p.is_file() and old in p.read_text())
        file.write_text(file.read_text().replace(old, new, 1))
    status, report = run(root, tmp_path / "site", capsys)
    assert status == 0, report


def test_extreme_numbers_raise_no_numpy_warning(tmp_path, capsys):
    import warnings
    chosen = [c for c in CASES if c.id in ("bandwidth-1e-300", "peak-5e-324", "mfu-1e-300", "step-takes-ages")]
    for case in chosen:
        root = tmp_path / case.id
        shutil.copytree(XIV4_MINI, root)
        apply(root, case)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            status, report = run(root, tmp_path / "site", capsys)
        assert status == 1 and "Traceback" not in report and "InvalidOperation" not in report, report


# --- content files that are not files, or far too large: a message, never a hang -------------------------

@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "dev-null", "socket", "too-large", "too-large-sparse"])
def test_a_content_file_that_is_no_ordinary_file_is_refused_without_waiting(kind, tmp_path, previous_site):
    import socket
    root = tmp_path / "in" / "content"
    shutil.copytree(XIV4_MINI, root)
    target = root / "terms.toml"
    target.unlink()
    expected = {"fifo": "is a FIFO (named pipe), not a regular file", "dev-zero": "is a character device",
                "dev-null": "is a character device", "socket": "is a socket",
                "too-large": "is 2,000,001 bytes, more than the 2,000,000 bytes (2 MB)",
                "too-large-sparse": "is 10,000,000,000 bytes, more than the 2,000,000 bytes"}[kind]
    held = None
    if kind == "fifo":
        os.mkfifo(target)
    elif kind.startswith("dev-"):
        target.symlink_to("/dev/zero" if kind == "dev-zero" else "/dev/null")
    elif kind == "socket":
        held = socket.socket(socket.AF_UNIX)
        held.bind(str(target))
    elif kind == "too-large":
        target.write_text("# " + "x" * (2_000_000 - 2) + "\n")
    else:
        with open(target, "wb") as handle:
            handle.truncate(10_000_000_000)  # sparse: no disk used
    out = tmp_path / "out" / "site"  # snapshot() reads out's parent: not the 10 GB file
    shutil.copytree(previous_site, out)
    before = snapshot(out)
    try:
        result = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(root), "--out",
                                 str(out)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    finally:
        if held is not None:
            held.close()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"content/terms.toml: {expected}" in result.stderr
    assert snapshot(out) == before


def test_an_unreadable_content_folder_is_a_content_error(tmp_path, capsys, monkeypatch):
    from generator.source import content
    real = os.listdir

    def listdir(path="."):
        if Path(path) == tmp_path / "content":
            raise PermissionError(13, "Permission denied")
        return real(path)
    shutil.copytree(XIV4_MINI, tmp_path / "content")
    monkeypatch.setattr(content.os, "listdir", listdir)
    status, report = run(tmp_path / "content", tmp_path / "site", capsys)
    assert status == 1 and "content: the content folder cannot be read: Permission denied" in report, report
