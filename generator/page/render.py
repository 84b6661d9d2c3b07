"""Turn content, figures and prose into the one HTML page (a string): the plate module fills in its controls,
words and data (docs/plates.md); this module assembles the page, its script and its CSP."""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re

import jinja2
from markupsafe import Markup, escape

from . import crossrefs, jsmodules, theme
from ..plate import plates, texts
from ..site import publish
from ..plate.charts import Figure
from ..source.content import Content
from ..source.prose import FILTERS, prose_html
from .runtime import Runtime
from ..source.schema import ContentError
from .theme import TEMPLATES

def reserved_heights(figures: list[Figure]) -> str:
    """CSS keeping each figure's box as tall as its live view will be (Vega fits the width, not the height), so
    swapping the static SVG for it shifts nothing; only where scripts run, else the static SVG sets the height."""
    rules = []
    for f in figures:
        height = re.search(r'<svg[^>]*\bheight="([\d.]+)"', f.svg)
        if height:
            rules.append(f"#{f.id} .chart {{ min-height: {float(height.group(1)):g}px; }}")
    return "\n@media screen and (scripting: enabled) {\n  " + "\n  ".join(rules) + "\n}\n" if rules else ""


_CSS_STRING_UNSAFE = re.compile(r'[\\"<>\x00-\x1f\x7f-\x9f\u2028\u2029]')


def running_heads(content: Content) -> str:
    """CSS for paper: the volume and plate at the head of every printed page, page numbers at the foot."""
    plate = content.plate

    def css_string(text: str) -> str:
        # Every control character and line separator as a CSS escape: a raw line break would end the string
        # (the rest would be live CSS), and HTML parsing turns CR into LF, so the hashed <style> would not match.
        return '"' + _CSS_STRING_UNSAFE.sub(lambda m: f"\\{ord(m.group(0)):x} ", text) + '"'
    left = css_string(f"Vol. {plate.volume} · {plate.volume_title}")
    right = css_string(f"Plate {plate.volume}.{plate.plate} · {plate.title}")
    box = "font: 8pt system-ui, sans-serif; color: #333;"
    return (f"\n@page {{ @top-left {{ content: {left}; {box} }} @top-right {{ content: {right}; {box} }} "
            f'@bottom-center {{ content: "Page " counter(page) " of " counter(pages); {box} }} }}\n'
            "@page :first { @top-left { content: none; } @top-right { content: none; } }\n")


def csv_cell(value) -> str:
    """A number or id as the CSVs write it: Python's shortest round-trip text for a float, without the ".0" of a
    whole one; booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value) if isinstance(value, float) else str(value)
    return text[:-2] if text.endswith(".0") else text


def csv_table(columns, rows) -> str:
    """A CSV's text: the header of columns, then one line of csv_cell per row."""
    return "\n".join([",".join(columns), *(",".join(map(csv_cell, row)) for row in rows)]) + "\n"


def controls_page(content, facts: dict, figures: list, words, *, keys, cluster_keys, controls: dict, labels: dict,
                  tips: dict, option_name, columns, csv_columns, context: dict) -> dict:
    """What the template fills in for a plate whose controls each pick an entry of a presets table (controls: key ->
    table): the controls, the default's words (words: readout, describe, table_rows) and the page script's data."""
    plate, p = content.plate, content.presets
    default = dataclasses.asdict(plate.default)
    data = {
        "keys": keys, "default": default, "cluster_keys": cluster_keys, "presets": p,
        "choices": {key: list(p[table]) for key, table in controls.items()}, "plates": plate.plates,
        "words_context": context, "csv_columns": csv_columns, "csv_name": plate.data_file,
    }
    return dict(
        controls=[(key, labels[key], {i: option_name(key, c) for i, c in p[table].items()})
                  for key, table in controls.items()],
        tips=tips, selected=default, readout=words.readout(facts, context), caption=facts["caption"],
        columns=columns, tables={fig.id: words.table_rows(facts, fig.id) for fig in figures},
        descriptions={fig.id: words.describe(facts, fig.id, context) for fig in figures}, data=data,
    )


def csv_column(values: list) -> list[str]:
    """csv_cell of every value of a column whose values are of one type, at a fraction of the calls."""
    if not values or isinstance(values[0], str):
        return values
    if isinstance(values[0], bool):
        return ["true" if v else "false" for v in values]
    if isinstance(values[0], float):
        return [t[:-2] if t[-2:] == ".0" else t for t in map(float.__repr__, values)]
    return list(map(csv_cell, values))


def live_figure(figure: Figure, dataflows: dict[str, dict] | None) -> dict:
    """How the page script makes a figure's live view: the names of the datasets it feeds (its dataflow, parsed at
    build time, is carried apart: see dataflow_scripts); or, with vl-convert's fallback runtime, the Vega spec that
    runtime parses."""
    if dataflows is None:
        return {"id": figure.id, "vega": figure.vega}
    return {"id": figure.id, "datasets": [d["name"] for d in figure.vega["data"]]}


def page_datasets(module, data: dict, figures: list[Figure]) -> tuple[list[str], dict[str, str]]:
    """The datasets a plate's PAGE makes, named for the page's views, and each figure's title at the default
    ({figure: text}), once the page passes the checks a plate's PAGE must (docs/plates.md, "What the engine
    checks"), each a PageError at the plate's file and line:
    - a figure none of whose datasets `datasets` fills for the default selection, at `datasets`;
    - a readout that is not a list of paragraphs (texts), at `readout`;
    - a figure with no title (`title` gives no text for it at the default), at `title`;
    - a figure with no words (`describe` gives no text, or `table_rows` no row, at the default), at that function;
    - a control none of whose choices changes anything in the facts or the rows, at the line declaring its key."""
    page = texts.page_of(module)
    presets = texts.plain(data["presets"])
    facts = texts.page_call(module, "facts", texts.plain(data["default"]), presets)
    rows = texts.page_call(module, "datasets", facts)
    for figure in figures:
        names = [d["name"] for d in figure.vega.get("data", [])]
        if not any(rows.get(name) for name in names):
            raise PageError(f"{plates.defined_at(module, page['datasets'])}: the figure {figure.id!r} reads "
                            f"{', '.join(names) or 'no dataset'}, and {page['datasets'].__name__} gives no rows for "
                            f"any of them at the default selection")
    context = texts.plain(data.get("words_context", {}))
    readout = texts.page_call(module, "readout", facts, context)
    if not isinstance(readout, list) or not all(isinstance(p, str) for p in readout):
        raise PageError(f"{plates.defined_at(module, page['readout'])}: {page['readout'].__name__} gives "
                        f"{type(readout).__name__} at the default selection, not a list of paragraphs (texts): the "
                        f"page would show {'one paragraph per character' if isinstance(readout, str) else 'nothing'}")
    titles = {}
    for figure in figures:
        title = texts.page_call(module, "title", facts, figure.id, context)
        if not isinstance(title, str) or not title.strip():
            raise PageError(f"{plates.defined_at(module, page['title'])}: the figure {figure.id!r} has no title: "
                            f"{page['title'].__name__} gives {title!r} for it at the default selection (the "
                            f"sentence above the figure that says what it shows)")
        titles[figure.id] = title
        described = texts.page_call(module, "describe", facts, figure.id, context)
        if not isinstance(described, str) or not described.strip():
            raise PageError(f"{plates.defined_at(module, page['describe'])}: the figure {figure.id!r} has no words: "
                            f"{page['describe'].__name__} gives {described!r} for it at the default selection "
                            f"(its description for readers who do not see the figure)")
        table = texts.page_call(module, "table_rows", facts, figure.id)
        if not isinstance(table, list) or not table:
            raise PageError(f"{plates.defined_at(module, page['table_rows'])}: the figure {figure.id!r} has no words: "
                            f"{page['table_rows'].__name__} gives {table!r} for it at the default selection (its "
                            f"data table)")
    _check_controls(module, data, presets, _values(facts) + _values(rows))
    return list(rows), titles


def _values(value, path: str = "") -> list[tuple[str, str]]:
    """Every value in plain data, with where it is (NaN equal to NaN): what a control's choice must change. Names
    count: two choices of equal numbers (an author's two GPUs of the same figures) differ by their names."""
    if isinstance(value, dict):
        return [n for key in sorted(value, key=str) for n in _values(value[key], f"{path}/{key}")]
    if isinstance(value, list):
        return [(f"{path}#", str(len(value)))] + [n for i, v in enumerate(value) for n in _values(v, f"{path}/{i}")]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(path, repr(float(value)))]
    return [(path, repr(value))]


def _check_controls(module, data: dict, presets, default_numbers: list) -> None:
    """A control of the page (its data's `choices`) none of whose other choices changes anything in the facts or the
    figures' rows is the plate's mistake, at the line declaring its key."""
    default = texts.plain(data["default"])
    for key, choices in dict(data.get("choices") or {}).items():
        others = [c for c in choices if c != default.get(key)]
        if not others:
            continue
        for choice in others:
            try:
                facts = texts.page_call(module, "facts", {**default, key: choice}, presets)
                numbers = _values(facts) + _values(texts.page_call(module, "datasets", facts))
            except plates.ModuleError:
                break  # a choice the page completes (the reader's own values) fails here: no sign it changes nothing
            if numbers != default_numbers:
                break
        else:
            where = plates.declared_line(module, key) or plates.defined_at(module, texts.page_of(module)["facts"])
            raise PageError(f"{where}: the control {key!r}: no choice of it ({', '.join(map(str, others))}) changes "
                            f"anything in the facts or the figures' rows from the default's "
                            f"({default.get(key)!r}), so the reader's choice would change nothing")


FIRST_CONTROLS = 3  # beside Figure 1 when the plate names none (first_controls in plate.md's front matter)


def first_controls(content: Content, controls: list) -> tuple[list, list]:
    """The page's controls split: those beside Figure 1 (the front matter's first_controls, in the page's order;
    else the first three) and those in the disclosure with the assumptions; a key no control has is a PageError."""
    named = content.plate.first_controls
    keys = [c[0] for c in controls]
    unknown = [k for k in named if k not in keys]
    if unknown:
        raise PageError(f"{content.root / 'plate.md'}: front matter: first_controls names "
                        f"{', '.join(map(repr, unknown))}, which the page has no control for (its controls: "
                        f"{', '.join(keys)})")
    first = set(named) if named else set(keys[:FIRST_CONTROLS])
    return [c for c in controls if c[0] in first], [c for c in controls if c[0] not in first]


class PageError(ContentError):
    """A plate's PAGE breaks a promise the page makes: the message names file:line."""

    def __init__(self, message: str):
        super().__init__([message])


def dataflow_scripts(dataflows: dict[str, dict] | None) -> dict[str, Markup]:
    """Each figure's dataflow as JSON of its own, read by the page script only when it makes that figure's view:
    most of the page's data (about 300 kB raw), which a load that makes no view need not parse."""
    return {fid: script_json(flow) for fid, flow in (dataflows or {}).items()}


def script_json(data) -> Markup:
    """JSON safe inside <script>: no '</', '<!--', U+2028 or U+2029 can end or confuse the element."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def csp_hash(code: str) -> str:
    """A CSP source expression allowing exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode() + "'"


def raw_template(env: jinja2.Environment, name: str) -> str:
    """A template file's text as written (CSS and JavaScript are not Jinja templates)."""
    return env.loader.get_source(env, name)[0]


def script_safe(code: str) -> str:
    """JavaScript that cannot close its <script> element early (the page hashes this exact text)."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE).replace("<!--", "<\\!--")


def page_environment(module=None) -> jinja2.Environment:
    """Jinja for the page: autoescaped, strict about names; a plate module's page/ folder holds its fragments."""
    folders = [TEMPLATES, *(plates.page_folders(module) if module is not None else [])]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folders), undefined=jinja2.StrictUndefined,
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(FILTERS)
    env.globals["ink"] = lambda name: theme.current()[name]  # the key's colours (templates/key.html.j2), as charts.ink
    return env


def page(content: Content, model, figures: list[Figure], live: Runtime, store=None, links=None,
         pdfs: dict[str, str] | None = None, page: str = publish.HOME, base_url: str = "") -> str:
    """The whole plate as one HTML string, with live the Vega runtime its figures run on; model is what the plate
    module made of the content (model_of), and store (a cache.Cache) keeps the default's words between builds; links
    (a crossrefs.Links, in a series build) makes the prose's references to the other plates built, the volume's
    name in the head and the series' top page links; pdfs ({link text: file name}) are the page's PDFs in the site,
    linked in its head; with the site's base_url, the page (its file name) gets its canonical and preview links."""
    plate, module = content.plate, content.module
    parts = prose_html(content, model)
    before, after = parts[0], parts[1]
    pages = links.pages if links is not None else {}
    before, after = (crossrefs.link_plates(part, pages) for part in (before, after))
    env = page_environment(module)
    style = theme.current().page_css()  # templates/plate.css, the figures' rules keyed by the variables' values
    if live.minify:  # the templates only: a minifier would undo the escapes that keep content's text in its string
        style = live.minify(style, "css")
    modules = texts.page_modules(module)
    script = jsmodules.concatenate(modules)  # checked on either path: what esbuild would rename, one scope refuses
    if live.bundle:
        script = live.bundle(modules)
    style += running_heads(content) + reserved_heights(figures)
    runtime_js = script_safe(live.code)
    fill = module.page(content, model, figures, live.dataflows, store)
    data = fill.pop("data")
    # The plates built alongside: the readout's and the takeaway's references become links (texts.js does the same
    # for the live readout), and a control named by a [plates] subject links to the plate of that subject.
    data["links"] = pages
    # A link to a plate carries the choices the plate module names for its subject (LINK_KEYS: {subject: keys}).
    data["carry"] = {plate.plates[s]: list(keys) for s, keys in module.LINK_KEYS.items()
                     if s in plate.plates and plate.plates[s] in pages}
    fill["readout"] = [Markup(crossrefs.link_plates(str(escape(p)), pages)) for p in fill["readout"]]
    see = {key: (plate.plates[key], pages[plate.plates[key]]) for key in plate.plates if plate.plates[key] in pages}
    data["figures"] = [live_figure(f, live.dataflows) for f in figures]
    titles = {f.id: f.title for f in figures}  # a plate with page modules of its own: its figures' names
    if texts.page_of(module) is not None:
        data["datasets"], titles = page_datasets(module, data, figures)
    first, more = first_controls(content, fill.pop("controls"))
    tips = fill.pop("tips", {})  # optional: {control key: the engineer's term for it}, the select's tip
    return env.get_template("page.html.j2").render(
        plate=plate, terms=content.terms, sources=parts.sources,
        before=Markup(before), after=Markup(after), figures=figures, first_controls=first, more_controls=more, tips=tips,
        assumptions=Markup(crossrefs.link_plates(parts.assumptions, pages)),
        volume_page=links.volume_page if links is not None else "",
        series_page=links.series_page if links is not None else "", see=see,
        takeaway=Markup(crossrefs.link_plates(str(escape(plate.takeaway)), pages)),
        svgs={f.id: Markup(f.svg) for f in figures}, titles=titles, csv_name=plate.data_file,
        url=publish.page_url(base_url, page), image=publish.preview_url(base_url, page), pdfs=pdfs or {},
        data=script_json(data), dataflows=dataflow_scripts(live.dataflows),
        style=Markup(style), runtime=Markup(runtime_js), script=Markup(script_safe(script)),
        # The bundle (a function, window.vegaRuntime) is carried inert and run by the page script when the first
        # view is made: loading the page does not even parse it. vl-convert's fallback is a module, run at load.
        runtime_inert=live.dataflows is not None,
        csp_scripts=Markup(" ".join([csp_hash(runtime_js), csp_hash(script_safe(script))])),
        csp_style=Markup(csp_hash(style)), **fill,
    )
