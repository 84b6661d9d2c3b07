"""The page's theme in one place: the custom properties of the stylesheet's first top-level `:root` rule, which the
page's CSS reads as var(--name) and the figures are drawn with (their light values), and the names the CSS's
figure rules are keyed to."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# An installed package carries the templates as package data (generator/templates, mapped from the
# repository's templates/ by pyproject.toml); a source checkout reads templates/ beside generator/.
_HERE = Path(__file__).resolve().parents[1]  # the generator package
TEMPLATES = _HERE / "templates" if (_HERE / "templates" / "page.html.j2").is_file() else _HERE.parent / "templates"
STYLESHEET = TEMPLATES / "plate.css"
DECLARATION = re.compile(r"(--[A-Za-z0-9_-]+)\s*:\s*([^;{}]+?)\s*;")
# A figure rule's selector names a variable, not a colour: `[fill="--c-compute"]` matches what Vega wrote
# for that variable's light value, whatever it is.
KEYED = re.compile(r'\[(fill|stroke)="(--[A-Za-z0-9_-]+)"\]')


class ThemeError(ValueError):
    """A mistake in the theme block, at its file and line."""


@dataclass(frozen=True)
class Theme:
    """The theme block's variables: {name: value as written} and the line of each; the stylesheet's text."""

    path: Path
    values: dict[str, str]
    lines: dict[str, int]
    css: str

    def __getitem__(self, name: str) -> str:
        if name not in self.values:
            raise ThemeError(f"{self.path}: the figures use {name}, which the :root block does not set "
                             f"(it sets {', '.join(self.values) or 'nothing'})")
        return self.values[name]

    def font(self, name: str) -> str:
        """A font stack, its quotes made single: Vega writes it into an attribute between double quotes."""
        return self[name].replace('"', "'")

    def page_css(self) -> str:
        """The stylesheet as the page carries it: each figure rule's variable name made the colour Vega writes."""
        # Two variables of one value would be one colour to the CSS: refused at the second's line.
        seen: dict[str, str] = {}
        for name in dict.fromkeys(m.group(2) for m in KEYED.finditer(self.css)):
            value = self[name].lower()
            if seen.setdefault(value, name) != name:
                raise ThemeError(f"{self.path}, line {self.lines[name]}: {name} has the value of {seen[value]} "
                                 f"({value}); the figures' colours must differ for the CSS to re-ink each")
        return KEYED.sub(lambda m: f'[{m.group(1)}="{self[m.group(2)]}"]', self.css)


def _root_block(css: str) -> tuple[str, int]:
    """The body of the first `:root { … }` at the top level (not in @media) and the offset where it starts."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), css, flags=re.S)  # keeps offsets
    depth, start = 0, 0
    for m in re.finditer(r"[{}]", text):
        if m.group(0) == "{":
            if depth == 0 and text[start:m.start()].strip().rsplit(";", 1)[-1].strip() == ":root":
                end = text.index("}", m.end())
                return text[m.end():end], m.end()
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                start = m.end()
    return "", 0


def parse(css: str, path: Path) -> Theme:
    """The theme of a stylesheet's text."""
    body, offset = _root_block(css)
    values, lines = {}, {}
    for m in DECLARATION.finditer(body):
        values[m.group(1)] = m.group(2)
        lines[m.group(1)] = css.count("\n", 0, offset + m.start(1)) + 1
    if not values:
        raise ThemeError(f"{path}: no top-level :root block setting custom properties (--name: value;)")
    return Theme(path, values, lines, css)


_loaded: dict[tuple, Theme] = {}


def current() -> Theme:
    """The theme of STYLESHEET as it is now (read again when the file changes)."""
    path = Path(STYLESHEET)
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _loaded:
        _loaded.clear()
        _loaded[key] = parse(path.read_text(encoding="utf-8"), path)
    return _loaded[key]
