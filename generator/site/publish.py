"""What a static host wants beside the pages: one robots.txt for the site, and with the site's base_url (volume.toml's
[site]) one sitemap of every page and a preview image per plate, named after its page."""
from __future__ import annotations

import re
from html import escape  # not xml.sax.saxutils's: the same three characters, without loading urllib.request
from urllib.parse import urlsplit

from ..plate.charts import Figure

ROBOTS = "robots.txt"
SITEMAP = "sitemap.xml"
HOME = "index.html"  # the page a host serves for the folder itself: its URL is the base URL
PREVIEW_SCALE = 2


def base_url_problem(value: str) -> str | None:
    """Why an http(s) address cannot be the folder a site is served from, or None: pages and previews are named
    by appending to it, so it has a host and no query, fragment, password or '.'/'..' step."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError as error:
        return f"is not a usable address ({error})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "names no host"
    if parts.username is not None or parts.password is not None:
        return "must not hold a user name or password (every page would publish it)"
    if parts.query or "?" in value:
        return "must not hold a query ('?…'): pages are named by appending to it"
    if parts.fragment or "#" in value:
        return "must not hold a fragment ('#…'): pages are named by appending to it"
    if any(step in (".", "..") for step in parts.path.split("/")):
        return "must not hold '.' or '..' steps in its path"
    return None


def folder_url(value: str) -> str:
    """The base URL as a folder: with its trailing slash ('' stays '')."""
    return value if not value or value.endswith("/") else value + "/"


def page_url(base_url: str, page: str) -> str:
    """A page's address on its host ('' without a base_url); index.html's is the folder itself."""
    if not base_url:
        return ""
    return base_url if page == HOME else base_url + page


def preview_name(page: str) -> str:
    """The preview image of a page's plate, named after the page: index.html -> index.png."""
    return re.sub(r"\.html$", "", page) + ".png"


def preview_url(base_url: str, page: str) -> str:
    """The preview image's address ('' without a base_url): link previews need it absolute."""
    return base_url + preview_name(page) if base_url else ""


def robots_txt(base_url: str) -> str:
    """Everything may be crawled; the sitemap is named when there is one."""
    text = "User-agent: *\nAllow: /\n"
    return text + (f"Sitemap: {base_url}{SITEMAP}\n" if base_url else "")


def sitemap_xml(base_url: str, pages: list[str]) -> str:
    """Every page of the site, in order (no date: builds are reproducible)."""
    rows = "".join(f"  <url><loc>{escape(page_url(base_url, page), quote=False)}</loc></url>\n" for page in pages)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n')


def preview_png(figure: Figure) -> bytes:
    """The figure's static SVG (the default selection) as a PNG on white, as link previews show it."""
    import vl_convert as vlc  # here: only a site with a base_url needs it, and a cached build may not load it
    svg = re.sub(r"(<svg\b[^>]*>)", r'\1<rect width="100%" height="100%" fill="#ffffff"/>', figure.svg, count=1)
    return vlc.svg_to_png(svg, scale=PREVIEW_SCALE)


def plate_files(base_url: str, page: str, figures: list[Figure]) -> dict[str, bytes]:
    """A plate's own publishing file: its preview (the first figure), with a base_url only."""
    return {preview_name(page): preview_png(figures[0])} if base_url else {}


def site_files(base_url: str, pages: list[str]) -> dict[str, str]:
    """The site's one robots.txt, and with a base_url its one sitemap of every page."""
    out = {ROBOTS: robots_txt(base_url)}
    if base_url:
        out[SITEMAP] = sitemap_xml(base_url, pages)
    return out
