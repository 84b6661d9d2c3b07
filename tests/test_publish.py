"""Publishing on a static host: robots.txt always; with the site's base_url (volume.toml's [site]) a canonical link,
link-preview meta, a preview image of the default figure named after the page, and a sitemap of every page; the
shipped series published under a sub-path and served from it, every link followed."""
import functools
import json
import re
import shutil
import struct
import threading
import tomllib
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urldefrag, urljoin, urlsplit

import pytest

from conftest import FIXTURE, ROOT
from generator.source import content, volume
from generator.site import build, publish
from generator.source.schema import ContentError

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


# --- the shipped series published under a sub-path, served from it ------------------------------------------------

SERIES = ROOT / "plates"
SUB_BASE = "https://example.org/plates/vol-xiv/"
SUB_PATH = urlsplit(SUB_BASE).path  # where the site lies under the served root: /plates/vol-xiv/


class Page(HTMLParser):
    """A page's links (every href and src, inline SVG's xlink:href too), its ids, and its head's meta and link."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.meta: dict[str, str] = {}
        self.canonical: list[str] = []
        self.feed(text)
        data = re.search(r'<script type="application/json" id="plate-data">(.*?)</script>', text, re.S)
        # The controls' choices, which a fragment "#key=value&..." (templates/page/state.js) selects.
        self.choices: dict[str, list[str]] = json.loads(data[1]).get("choices", {}) if data else {}

    def reads_as_selection(self, fragment: str) -> bool:
        """Whether the page reads this fragment as a selection: every key one of its controls, each value one of
        that control's choices (a link to a removed preset would open on the default, not where it points)."""
        pairs = parse_qsl(fragment, keep_blank_values=True)
        return bool(pairs) and all(k in self.choices and v in self.choices[k] for k, v in pairs)

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        self.links += [v for k, v in attrs if v is not None and (k in ("href", "src") or k.endswith(":href"))]
        if values.get("id"):
            self.ids.add(values["id"])
        if tag == "meta" and (values.get("property") or values.get("name")):
            self.meta[values.get("property") or values.get("name")] = values.get("content") or ""
        if tag == "link" and values.get("rel") == "canonical":
            self.canonical.append(values.get("href") or "")


def shipped_series_at(plates: Path, base: str) -> None:
    """The shipped series copied to plates/, its volume.toml's [site] giving base as the base_url."""
    shutil.copytree(SERIES, plates, ignore=shutil.ignore_patterns("__pycache__"))
    toml = plates / "volume.toml"
    text = toml.read_text(encoding="utf-8")
    site = tomllib.loads(text).get("site")
    line = f"base_url = {json.dumps(base)}"
    if site is not None:  # the shipped volume sets a [site] of its own: its base_url replaced, or given one
        pattern = r"(?m)^\s*base_url\s*=.*$" if "base_url" in site else r"(?m)^\s*\[\s*site\s*\]\s*(#.*)?$"
        text, count = re.subn(pattern, line if "base_url" in site else f"[site]\n{line}", text)
        assert count == 1, "the shipped volume.toml's [site] and its base_url are each written on a line of their own"
    else:
        text = f"[site]\nbase_url = {json.dumps(base)}\n\n{text}"
    toml.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The shipped series built with a sub-path base_url into root/plates/vol-xiv/, root served over http."""
    tmp = tmp_path_factory.mktemp("served")
    shipped_series_at(tmp / "plates", SUB_BASE)
    out = tmp / "root" / SUB_PATH.strip("/")
    build.build(tmp / "plates", out)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp / "root")))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"out": out, "series": volume.load_series(tmp / "plates"),
               "origin": f"http://127.0.0.1:{httpd.server_port}"}
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=60)


def fetch(served, url: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of a URL under the base, asked of the local server at the same path."""
    assert url.startswith(SUB_BASE), url
    local = served["origin"] + urlsplit(url)._replace(scheme="", netloc="", fragment="").geturl()
    try:
        with urllib.request.urlopen(local, timeout=60) as answer:
            return answer.status, answer.headers.get_content_type(), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, "", b""


def page_urls(served) -> dict[str, str]:
    """{URL: file name} of every page the build wrote."""
    return {publish.page_url(SUB_BASE, p.name): p.name for p in sorted(served["out"].glob("*.html"))}


def sitemap(served) -> list[str]:
    urlset = ET.parse(served["out"] / "sitemap.xml").getroot()
    return [e.text for e in urlset.findall("s:url/s:loc", {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"})]


def test_the_sitemap_of_the_shipped_series_lists_every_page_under_the_sub_path(served):
    series = served["series"]
    pages = set(series.pages().values()) | {v.page for v in series.volumes} | {series.page}
    assert len(series.volumes) > 1 and series.page == volume.SERIES_PAGE
    assert set(page_urls(served).values()) == pages  # each plate's page, each index and the top page, nothing else
    listed = sitemap(served)
    assert sorted(listed) == sorted(page_urls(served)) and len(set(listed)) == len(listed)
    assert all(url.startswith(SUB_BASE) for url in listed)
    for url in listed:
        status, kind, _ = fetch(served, url)
        assert (status, kind) == (200, "text/html"), url
    robots = (served["out"] / "robots.txt").read_text(encoding="utf-8")
    assert f"Sitemap: {SUB_BASE}sitemap.xml" in robots.splitlines()


def inside(url: str) -> bool:
    return url.startswith(SUB_BASE)


def page_address(url: str) -> str:
    """A page's URL as the sitemap writes it: the folder for its index.html."""
    return SUB_BASE if url == SUB_BASE + publish.HOME else url


def test_no_link_of_the_shipped_series_is_broken_under_the_sub_path(served):
    pages = {url: Page((served["out"] / name).read_text(encoding="utf-8")) for url, name in page_urls(served).items()}
    robots = (served["out"] / "robots.txt").read_text(encoding="utf-8")
    links = [(SUB_BASE + "robots.txt", line.split(":", 1)[1].strip()) for line in robots.splitlines()
             if line.lower().startswith("sitemap:")]
    links += [(url, link) for url, page in pages.items() for link in page.links]
    checked, broken = 0, []
    answers: dict[str, int] = {}
    for where, link in links:
        target = urljoin(where, link)
        if urlsplit(target).scheme in ("data", "mailto") or not target.startswith(("http:", "https:")):
            continue
        if not inside(target):
            if not urlsplit(link).scheme:  # relative, yet it climbs out of the folder the site is served from
                broken.append(f"{where}: {link} leaves {SUB_BASE}")
            continue  # another site's page
        checked += 1
        address, fragment = urldefrag(target)
        if address not in answers:
            answers[address] = fetch(served, address)[0]
        if answers[address] != 200:
            broken.append(f"{where}: {link} answers {answers[address]}")
        elif fragment and fragment not in getattr(pages.get(page_address(address)), "ids", ()):
            target_page = pages.get(page_address(address))
            if not (target_page and target_page.reads_as_selection(fragment)):
                broken.append(f"{where}: {link} names no id {fragment!r} in its page, nor a selection of its choices")
    print(f"{checked} links inside the site checked, {len(answers)} addresses, {len(links)} links in all")
    assert not broken, broken
    assert checked >= len(pages) + 1  # the pages link each other (the index its plates) and robots.txt the sitemap


def test_each_plate_of_the_shipped_series_has_its_canonical_link_and_preview_under_the_base(served):
    series = served["series"]
    plates = list(series.pages().values())
    previews = set()
    for name in plates:
        page = Page((served["out"] / name).read_text(encoding="utf-8"))
        url = publish.page_url(SUB_BASE, name)
        assert page.canonical == [url] and page.meta["og:url"] == url, name
        image = page.meta["og:image"]
        assert image == page.meta["twitter:image"] and inside(image) and image != url, name
        status, kind, body = fetch(served, image)
        assert (status, kind, body[:8]) == (200, "image/png", b"\x89PNG\r\n\x1a\n"), image
        previews.add(image)
    assert len(previews) == len(plates)  # one preview per plate, none shared
    for name in [v.page for v in series.volumes] + [series.page]:  # each volume's index and the top page
        index = Page((served["out"] / name).read_text(encoding="utf-8"))
        assert index.canonical == [SUB_BASE + name] and index.meta["og:url"] == SUB_BASE + name
    assert publish.page_url(SUB_BASE, "index.html") == SUB_BASE  # the host serves index.html for the folder


def test_a_base_url_with_an_ampersand_gives_a_sitemap_that_is_xml():
    """A folder address may hold `&` (`/a&b/`): the sitemap escapes it, so it still parses as XML and lists the
    address exactly."""
    base = "https://plates.example.org/a&b/x<y/"
    assert publish.base_url_problem(base) is None
    text = publish.sitemap_xml(base, ["index.html", "volumes.html"])
    locs = [e.text for e in ET.fromstring(text).iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert locs == [publish.page_url(base, "index.html"), publish.page_url(base, "volumes.html")]
    assert "&amp;" in text
