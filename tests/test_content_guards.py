"""Authors' mistakes and publishing at their edges: two presets of one table under one name, a source named in
the prose without being cited, and a base_url with a character XML must escape."""
from __future__ import annotations

import json
import shutil
import tomllib
import xml.etree.ElementTree as ET

import pytest

from generator.source import checks, content, volume
from generator.site import publish
from generator.source.schema import ContentError

from conftest import XIV4_MINI


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "content"
    shutil.copytree(XIV4_MINI, folder)
    return folder


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


@pytest.mark.parametrize("table", ["gpus", "models", "batches", "networks"])
def test_two_presets_of_a_table_under_one_name_are_refused_at_the_line(root, table):
    presets = root / "presets.toml"
    data = tomllib.loads(presets.read_text())
    first, values = next(iter(data[table].items()))
    ident = next(f"{first}-{i}" for i in range(100) if f"{first}-{i}" not in data[table])
    twin = {**values, "name": values["name"].upper()}  # readers see names; case does not tell them apart
    if "short" in twin:
        twin["short"] = twin["short"] + " 2"  # only the name clashes
    added = f"\n[{table}.{ident}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in twin.items())
    presets.write_text(presets.read_text() + added)
    line = presets.read_text().splitlines().index(f"name = {toml_value(twin['name'])}") + 1
    with pytest.raises(ContentError) as caught:
        content.load(root)
    assert any(p.startswith(f"content/presets.toml, line {line}: ") and f'"{ident}"' in p
               and f'is also the name of' in p and f'"{first}"' in p for p in caught.value.problems), \
        caught.value.problems


NEVER_CITED = 'source "only" is never cited'


@pytest.mark.parametrize("citation, cited", [
    ('{{ cite("only") }}', True),
    ("[the paper](#source-only)", True),
    ("(see #source-only)", False),  # the fragment as bare text: no link
    ("`#source-only`", False),
    ("source-only", False),
])
def test_only_a_real_citation_or_link_counts_as_citing_a_source(root, citation, cited):
    plate = root / "plate.md"
    text = plate.read_text()
    assert '{{ cite("only") }}' in text
    plate.write_text(text.replace('{{ cite("only") }}', citation, 1))
    warnings = checks.checked(root).warnings
    assert any(NEVER_CITED in w for w in warnings) is not cited, warnings


def test_a_base_url_with_an_ampersand_gives_a_sitemap_that_is_xml(tmp_path):
    base = "https://example.org/r&d/plates/"
    (tmp_path / "volume.toml").write_text(f"[site]\nbase_url = {json.dumps(base)}\n")
    assert volume.base_url_beside(tmp_path / "content") == base
    urlset = ET.fromstring(publish.sitemap_xml(base, ["index.html", "b&c.html"]))
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    assert [e.text for e in urlset.findall("s:url/s:loc", ns)] == [base, base + "b&c.html"]
