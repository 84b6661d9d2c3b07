"""Cross-references as links (generator/page/crossrefs.py): "plate XIV.5" becomes a link to its page when that plate is
in the build, and nothing else of the HTML changes."""
import html
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from generator.page.crossrefs import HTML_SPACES, link_plates
from generator.page.references import split_references
from generator.source.prose import markdown_to_html

PAGES = {"XIV.5": "sharded-data-parallelism.html", "XIV.4": "index.html"}
SETTINGS = settings(max_examples=int(os.environ.get("PLATE_FUZZ_EXAMPLES", 200)), deadline=None,
                    derandomize=bool(os.environ.get("CI")), suppress_health_check=[HealthCheck.too_slow])


def link(text: str, page: str = "sharded-data-parallelism.html") -> str:
    return f'<a href="{page}">{text}</a>'


def test_a_reference_to_a_plate_in_the_build_becomes_a_link():
    got = link_plates("<p>Sharding is the remedy (plate XIV.5).</p>", PAGES)
    assert got == f"<p>Sharding is the remedy ({link('plate XIV.5')}).</p>"


def test_capitalised_and_across_a_line_break_the_text_is_kept_as_written():
    got = link_plates("<p>Plate XIV.5 shards them; see plate\nXIV.4 and plate&nbsp;XIV.5.</p>", PAGES)
    assert got == (f"<p>{link('Plate XIV.5')} shards them; see {link('plate' + chr(10) + 'XIV.4', 'index.html')} "
                   f"and {link('plate&nbsp;XIV.5')}.</p>")


def test_the_split_names_each_reference_and_its_plate_and_joins_back_to_the_text():
    """generator/page/references.py, which the build runs here and the page runs compiled: the one rule of the two."""
    text = "Plate XIV.5 and plate\u00a0XI.2, plate XIV.50 but not template XIV.4; plate&nbsp;XIV.4."
    every = split_references(text, None, HTML_SPACES)
    assert every[1::2] == [["Plate XIV.5", "XIV.5"], ["plate\u00a0XI.2", "XI.2"], ["plate XIV.50", "XIV.50"],
                           ["plate&nbsp;XIV.4", "XIV.4"]]
    assert "".join(p if isinstance(p, str) else p[0] for p in every) == text
    built = split_references(text, PAGES, [])  # only plates in the build; as plain text, an entity is no space
    assert built == ["", ["Plate XIV.5", "XIV.5"], text[len("Plate XIV.5"):]]


def test_a_plate_outside_the_build_stays_text():
    text = "<p>Past the critical batch (plate XI.2) and plate XIV.6.</p>"
    assert link_plates(text, PAGES) == text


def test_the_period_ending_a_sentence_is_not_part_of_the_id():
    assert link_plates("<p>See plate XIV.5.</p>", PAGES) == f"<p>See {link('plate XIV.5')}.</p>"
    assert link_plates("<p>See plate XIV.5. Then</p>", PAGES) == f"<p>See {link('plate XIV.5')}. Then</p>"


def test_a_longer_id_is_another_plate():
    for text in ("plate XIV.50", "plate XIV.5.1", "plate XIV.5a", "plate XIV.51."):
        assert link_plates(f"<p>{text}</p>", PAGES) == f"<p>{text}</p>", text
    assert link_plates("<p>plate AXIV.5, template XIV.5, plates XIV.5</p>", PAGES) == \
        "<p>plate AXIV.5, template XIV.5, plates XIV.5</p>"


def test_links_code_and_attributes_are_left_alone():
    text = ('<p><a href="#x" title="plate XIV.5">see <em>plate XIV.5</em></a> <code>plate XIV.5</code> '
            '<abbr title="plate XIV.5">Z</abbr></p><pre><code>plate XIV.5</code></pre>')
    assert link_plates(text, PAGES) == text
    after = link_plates(text + "<p>plate XIV.5</p>", PAGES)
    assert after == text + f"<p>{link('plate XIV.5')}</p>"  # the elements above were closed again


@pytest.mark.parametrize("tag", ["title", "button", "select", "option", "textarea", "kbd", "samp", "script",
                                 "style", "TITLE", "Button"])
def test_no_link_is_made_inside_an_element_whose_text_is_not_prose(tag):
    """A link inside a title, a button or a form's choice would be invalid HTML or a control that navigates."""
    text = f'<{tag} class="x">plate XIV.5 <b>plate XIV.4</b></{tag}>'
    assert link_plates(text, PAGES) == text
    got = link_plates(f"<p>{text} then plate XIV.5</p>", PAGES)
    assert got == f"<p>{text} then {link('plate XIV.5')}</p>"  # linking goes on once the element is closed


@pytest.mark.parametrize("text", ["<select><option>plate XIV.5</option><option selected>plate XIV.4</option></select>",
                                  "<select><option>plate XIV.5<option>plate XIV.4<option>x</select>"])
def test_options_in_a_select_are_left_alone(text):
    """Also when their end tags are left out, as HTML allows: the select's end closes them."""
    assert link_plates(text + "<p>plate XIV.4</p>", PAGES) == text + f"<p>{link('plate XIV.4', 'index.html')}</p>"


@pytest.mark.parametrize("stray", ["</a>", "</code>", "</pre>", "</title>", "</option>", "</CODE>", "</a></a></a>"])
def test_a_stray_closing_tag_does_not_stop_the_linking_after_it(stray):
    got = link_plates(f"<p>plate XIV.5 {stray} plate XIV.5</p><p>and plate XIV.4</p>", PAGES)
    assert got == (f"<p>{link('plate XIV.5')} {stray} {link('plate XIV.5')}</p>"
                   f"<p>and {link('plate XIV.4', 'index.html')}</p>")
    # and what follows is still kept where it should be: a stray close does not count against the next element
    text = f"<p>{stray}<code>plate XIV.5</code> plate XIV.5</p>"
    assert link_plates(text, PAGES) == f"<p>{stray}<code>plate XIV.5</code> {link('plate XIV.5')}</p>"


def test_inside_other_tags_the_reference_becomes_a_link():
    got = link_plates("<ul><li><strong>plate XIV.5</strong></li></ul>", PAGES)
    assert got == f"<ul><li><strong>{link('plate XIV.5')}</strong></li></ul>"


def test_a_page_name_is_escaped_in_the_link():
    got = link_plates("<p>plate XIV.5</p>", {"XIV.5": 'a"&<b.html'})
    assert got == '<p><a href="a&quot;&amp;&lt;b.html">plate XIV.5</a></p>'


def test_the_prose_pipelines_html_links_its_references():
    prose = markdown_to_html("Sharding is the remedy (plate XIV.5), past the critical batch (plate XI.2).\n\n"
                             "`plate XIV.5` in code, [plate XIV.5](#term-x) as a link.")
    got = link_plates(prose, PAGES)
    assert got.count('href="sharded-data-parallelism.html"') == 1 and "(plate XI.2)" in got
    assert got.replace(link("plate XIV.5"), "plate XIV.5") == prose


# --- by property ---------------------------------------------------------------------------------------------------

words = st.sampled_from(["plate", "Plate", "plates", "the", "XIV.5", "XIV.50", "XIV.4", "XI.2", "&amp;", "&lt;",
                         "&nbsp;", ".", ",", "(", ")", " ", "\n", "5", "plateXIV.5", "a&b"])
ids = st.sampled_from(["XIV.5", "XIV.4", "XI.2", "XIV.50", "XIV.5.1", "XV.5"])
reference = st.builds(lambda p, s, i, end: f"{p}{s}{i}{end}", st.sampled_from(["plate", "Plate"]),
                      st.sampled_from([" ", "\n", "&nbsp;"]), ids, st.sampled_from(["", ".", ",", ")", " and"]))
texts = st.lists(st.one_of(words, reference), max_size=12).map("".join)
wrappers = st.sampled_from(["p", "em", "strong", "li", "a", "code", "pre", "button", "option", "title"])
KEPT = ("a", "code", "pre", "button", "option", "title")  # the wrappers whose text is never linked


@st.composite
def documents(draw, depth=0):
    """HTML as the prose pipeline writes it: text, and elements (some of which keep their text) holding more."""
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if depth < 3 and draw(st.booleans()):
            tag = draw(wrappers)
            attrs = ' href="#term-x" title="plate XIV.5"' if tag == "a" else ""
            parts.append(f"<{tag}{attrs}>{draw(documents(depth + 1))}</{tag}>")
        else:
            parts.append(draw(texts))
    return "".join(parts)


def unlinked(text: str) -> str:
    """The HTML with every link link_plates makes taken out again."""
    return re.sub(r'<a href="(?:sharded-data-parallelism|index)\.html">(.*?)</a>', r"\1", text, flags=re.S)


def visible(text: str, keep=KEPT) -> list[str]:
    """The text runs outside the elements whose text is kept, in order, as HTML parses them: an option's start tag
    ends the option open (options do not nest), and a stray end tag ends nothing."""
    runs, depth = [], {}
    for piece in re.split(r"(<[^>]*>)", text):
        tag = re.match(r"<(/?)(\w+)", piece)
        if tag:
            name = tag.group(2)
            if name in keep:
                depth[name] = max(depth.get(name, 0) + (-1 if tag.group(1) else 1), 0)
                if name == "option":
                    depth[name] = min(depth[name], 1)
        elif not any(depth.values()):
            runs.append(piece)
    return runs


@SETTINGS
@given(documents())
def test_nothing_changes_but_the_links_made(doc):
    assert unlinked(link_plates(doc, PAGES)) == doc


@SETTINGS
@given(documents())
def test_every_reference_outside_links_and_code_is_linked_and_no_other(doc):
    got = link_plates(doc, PAGES)
    made = re.findall(r'<a href="((?:sharded-data-parallelism|index)\.html)">(.*?)</a>', got, re.S)
    for page, text in made:
        word, _, ident = re.fullmatch(r"([Pp]late)(\s|&nbsp;)(.*)", text).groups()
        assert PAGES[ident] == page
    # the references a reader sees in the text outside links and code: each is linked, once
    expected = [m.group(2) for run in visible(doc) for m in
                re.finditer(r"(?<![\w&#-])[Pp]late(\s|&nbsp;)+([A-Za-z0-9]+\.\d+)(?![\w]|\.\d)", run)]
    assert [ident for _, text in made for ident in [re.split(r"\s|&nbsp;", text)[-1]]] == \
        [i for i in expected if i in PAGES]


@SETTINGS
@given(documents())
def test_with_no_plate_in_the_build_nothing_changes(doc):
    assert link_plates(doc, {}) == doc and link_plates(doc, {"XII.1": "x.html"}) == doc


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_escaped_text_stays_escaped(raw):
    doc = f"<p>{html.escape(raw)} plate XIV.5</p>"
    got = link_plates(doc, PAGES)
    assert got.endswith(f" {link('plate XIV.5')}</p>") and unlinked(got) == doc
