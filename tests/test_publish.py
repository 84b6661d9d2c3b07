"""Publishing on a static host: robots.txt always; with the site's base_url (volume.toml's [site]) a canonical link,
link-preview meta, a preview image of the default figure named after the page, and a sitemap of every page; the
shipped series published under a sub-path and served from it, every link followed."""
import re
import shutil
import struct
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURE
from generator import build, content
from generator.schema import ContentError

BASE = "https://plates.example.org/ix/1"


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The fixture plate built alone, beside a volume.toml whose [site] gives a base_url (without its slash)."""
    root = tmp_path_factory.mktemp("pub") / "content"
    shutil.copytree(FIXTURE, root)
    (root.parent / "volume.toml").write_text(f'[site]\nbase_url = "{BASE}"\n', encoding="utf-8")
    out = root.parent / "site"
    build.build(root, out)
    return out, content.load(root)


def meta(html: str, key: str) -> str | None:
    found = re.search(rf'<meta (?:property|name)="{re.escape(key)}" content="([^"]*)">', html)
    return found.group(1) if found else None


def test_without_base_url_only_robots_txt_and_no_absolute_links(mini_site):
    assert (mini_site / "robots.txt").read_text() == "User-agent: *\nAllow: /\n"
    assert sorted(p.suffix for p in mini_site.iterdir() if p.suffix in (".xml", ".png")) == []
    html = (mini_site / "index.html").read_text()
    assert 'rel="canonical"' not in html and meta(html, "og:image") is None
    plate = content.load(FIXTURE).plate
    assert meta(html, "og:title") == plate.title


def test_base_url_gives_canonical_link_and_preview_meta(published):
    out, c = published
    html = (out / "index.html").read_text()
    page = BASE + "/"
    assert f'<link rel="canonical" href="{page}">' in html
    assert meta(html, "og:url") == page
    assert meta(html, "og:title") == c.plate.title == meta(html, "twitter:title")
    assert meta(html, "og:description") == c.plate.deck == meta(html, "twitter:description")
    assert meta(html, "og:image") == page + "index.png" == meta(html, "twitter:image")
    assert meta(html, "twitter:card") == "summary_large_image"


def test_preview_is_a_png_of_the_default_figure(published):
    out, _ = published
    png = (out / "index.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    svg = re.search(r'<svg[^>]*\bwidth="(\d+)" height="(\d+)"', (out / "index.html").read_text())
    assert (width, height) == (2 * int(svg.group(1)), 2 * int(svg.group(2)))  # the first figure, at 2x


def test_sitemap_and_robots_name_the_page(published):
    out, _ = published
    loc = ET.parse(out / "sitemap.xml").getroot()
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    assert [e.text for e in loc.findall("s:url/s:loc", ns)] == [BASE + "/"]
    assert (out / "robots.txt").read_text().splitlines()[-1] == f"Sitemap: {BASE}/sitemap.xml"


def test_a_base_url_in_a_plates_front_matter_is_a_mistake_that_names_the_volumes_site_table(tmp_path):
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    plate = root / "plate.md"
    plate.write_text(plate.read_text().replace("takeaway = ", f'base_url = "{BASE}/"\ntakeaway = ', 1))
    line = plate.read_text().splitlines().index(f'base_url = "{BASE}/"') + 1
    with pytest.raises(ContentError) as caught:
        content.load(root)
    assert [p for p in caught.value.problems if "base_url" in p] == [
        f'content/plate.md, line {line}: front matter: unknown key "base_url" here (the site\'s address is set once '
        f"for the whole series now: base_url in volume.toml's [site])"]


def test_a_mistake_in_the_sites_base_url_fails_a_plate_built_alone_at_its_line(tmp_path):
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    (tmp_path / "volume.toml").write_text('# the site\n[site]\nbase_url = "https://example.org/plates/?v=1"\n')
    with pytest.raises(ContentError) as caught:
        build.build(root, tmp_path / "site")
    assert len(caught.value.problems) == 1, caught.value.problems
    assert caught.value.problems[0].startswith(f"{tmp_path.name}/volume.toml, line 3: [site]: base_url ")
    assert not (tmp_path / "site").exists()


def test_a_published_build_is_byte_identical_when_repeated(published, tmp_path):
    out, c = published
    again = tmp_path / "again"
    build.build(c.root, again)
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(p.name for p in again.iterdir())
    assert files == sorted([build.MARKER, c.plate.data_file, "index.html", "index.png", "robots.txt", "sitemap.xml"])
    for name in files:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name
