"""What a static host wants beside the page: robots.txt, and with a base_url a sitemap and a preview image."""
from __future__ import annotations

import re
from html import escape  # not xml.sax.saxutils's: the same three characters, without loading urllib.request

from .charts import Figure
from .content import Plate

PREVIEW_NAME = "preview.png"  # the first figure for the default selection, for link previews (Open Graph)
PREVIEW_SCALE = 2


def page_url(plate: Plate) -> str:
    """The page's address on its host ('' without a base_url): the folder, which serves index.html."""
    return plate.base_url.rstrip("/") + "/" if plate.base_url else ""


def robots_txt(plate: Plate) -> str:
    """Everything may be crawled; the sitemap is named when there is one."""
    text = "User-agent: *\nAllow: /\n"
    return text + (f"Sitemap: {page_url(plate)}sitemap.xml\n" if plate.base_url else "")


def sitemap_xml(plate: Plate) -> str:
    """The one page of the site (no date: builds are reproducible)."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"  <url><loc>{escape(page_url(plate), quote=False)}</loc></url>\n</urlset>\n")


def preview_png(figure: Figure) -> bytes:
    """The figure's static SVG (the default selection) as a PNG on white, as link previews show it."""
    import vl_convert as vlc  # here: only a plate with a base_url needs it, and a cached build may not load it
    svg = re.sub(r"(<svg\b[^>]*>)", r'\1<rect width="100%" height="100%" fill="#ffffff"/>', figure.svg, count=1)
    return vlc.svg_to_png(svg, scale=PREVIEW_SCALE)


def files(plate: Plate, figures: list[Figure]) -> dict[str, str | bytes]:
    """The publishing files of the site."""
    out: dict[str, str | bytes] = {"robots.txt": robots_txt(plate)}
    if plate.base_url:
        out["sitemap.xml"] = sitemap_xml(plate)
        out[PREVIEW_NAME] = preview_png(figures[0])
    return out
