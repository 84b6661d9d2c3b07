"""The series' volume file (generator/source/volume.py): its checks at file and line, the plates' front matter held to it,
and the index page's words and links (the page in a browser: test_volume_page.py)."""
import html
import json
import re
from pathlib import Path

import pytest

from conftest import CONTENT
from generator.source import volume
from generator.plate import charts
from generator.source.schema import ContentError

FRONT = """---
volume = "{volume}"
volume_title = "{title}"
plate = {number}
plates_in_volume = {count}
title = "A plate in {name}"
deck = "Its deck."
---
Prose.
"""


def entries(*rows: str) -> str:
    """[[plates]] tables, each from its body."""
    return "".join(f"\n[[plates]]\n{row}\n" for row in rows)


def series(tmp_path: Path, body: str, plates: dict[str, dict] | None = None, head: str | None = None) -> Path:
    """A series folder: volume.toml (its [volume] head, then body) and plate folders {name: front matter values}."""
    root = tmp_path / "plates"
    root.mkdir(parents=True)
    if head is None:
        head = '[volume]\nid = "XIV"\ntitle = "Parallelism"\npage = "volume-xiv.html"\n'
    (root / "volume.toml").write_text(head + body, encoding="utf-8")
    for name, values in (plates or {}).items():
        (root / name).mkdir()
        front = {"volume": "XIV", "title": "Parallelism", "number": 1, "count": 1, **values}
        (root / name / "plate.md").write_text(FRONT.format(name=name, **front), encoding="utf-8")
    return root


def mistakes(root: Path) -> list[str]:
    with pytest.raises(ContentError) as error:
        volume.load(root)
    return error.value.problems


def test_a_volume_of_plates_written_and_to_come(tmp_path):
    rows = [f"number = {n}" + (f'\ntitle = "Plate {n}"' if n % 2 else "") for n in range(1, 5)]
    rows[1] += '\nfolder = "two"'
    root = series(tmp_path, entries(*rows), {"two": {"number": 2, "count": 4}})
    v = volume.load(root)
    assert (v.id, v.title, v.page) == ("XIV", "Parallelism", "volume-xiv.html")
    assert [e.number for e in v.plates] == [1, 2, 3, 4]
    assert [e.title for e in v.plates] == ["Plate 1", "", "Plate 3", ""]
    assert [e.folder for e in v.written()] == ["two"] and v.folder(v.written()[0]) == root / "two"
    assert v.plate_id(v.plates[2]) == "XIV.3"
    text = (root / "volume.toml").read_text()
    assert [e.line for e in v.plates] == [i for i, line in enumerate(text.splitlines(), 1) if line == "[[plates]]"]


def test_the_page_defaults_to_the_ids_slug(tmp_path):
    root = series(tmp_path, entries("number = 1"), head='[volume]\nid = "XIV"\ntitle = "Parallelism"\n')
    assert volume.load(root).page == "volume-xiv.html"


def test_numbers_must_run_from_one_in_order(tmp_path):
    root = series(tmp_path, entries("number = 1", "number = 3", "number = 2"))
    found = mistakes(root)
    assert found == ["plates/volume.toml, line 10: [[plates]] #2: number 3 is out of order; the plates are listed "
                     "by number, 1, 2, 3, …, so this one is 2",
                     "plates/volume.toml, line 13: [[plates]] #3: number 2 is out of order; the plates are listed "
                     "by number, 1, 2, 3, …, so this one is 3"]


def test_a_number_given_twice_is_named_with_the_first_ones_line(tmp_path):
    root = series(tmp_path, entries("number = 1", "number = 1"))
    assert mistakes(root) == ["plates/volume.toml, line 10: [[plates]] #2: number 1 is also the number of the plate "
                              "at line 7; each plate has its own"]


@pytest.mark.parametrize("row, message", [
    ('number = 1\ntitle = ""', "line 8: [[plates]] #1: title must be non-empty text"),
    ("number = 1\ntitle = 4", "line 8: [[plates]] #1: title must be non-empty text, got 4"),
    ('number = "1"', 'line 7: [[plates]] #1: number must be a positive whole number, got "1"'),
    ("number = 1\nfolders = 'x'", 'line 8: [[plates]] #1: unknown key "folders" (did you mean "folder"?)'),
    ('title = "A"', 'line 6: [[plates]] #1: missing key "number"'),
])
def test_an_entrys_fields_are_checked_at_their_line(tmp_path, row, message):
    root = series(tmp_path, entries(row))
    assert [m for m in mistakes(root) if m.startswith("plates/volume.toml, " + message)], mistakes(root)


@pytest.mark.parametrize("folder, why", [
    ("missing", "does not exist beside volume.toml"),
    ("../outside", "must be the name of a folder beside volume.toml"),
    ("empty", "is not a plate folder: it holds no plate.md"),
    ("afile", "is a file, not a folder"),
])
def test_a_folder_must_be_a_plate_folder_beside_the_volume(tmp_path, folder, why):
    root = series(tmp_path, entries(f'number = 1\nfolder = "{folder}"'))
    (root / "empty").mkdir()
    (root / "afile").write_text("x")
    found = mistakes(root)
    assert len(found) == 1
    assert found[0].startswith(f'plates/volume.toml, line 8: [[plates]] #1: folder "{folder}" {why}')


@pytest.mark.parametrize("folder", ["sub/../one", "one/.", "one/", "sub\\one", "one\n"])
def test_a_folder_is_one_name_whole_not_a_path_that_starts_with_one(tmp_path, folder):
    """Each of these leads to a plate folder beside volume.toml, but is not its name: a path is refused whole."""
    root = series(tmp_path, entries(f"number = 1\nfolder = {json.dumps(folder)}"), {"one": {}})
    (root / "sub").mkdir()
    found = mistakes(root)
    assert len(found) == 1 and found[0].startswith(
        f"plates/volume.toml, line 8: [[plates]] #1: folder {json.dumps(folder)} must be the name of a folder beside "
        f"volume.toml"), found


@pytest.mark.parametrize("page", ["index.html/../../escape.html", "one.html/x.html", "one.html\n", "one.html.x"])
def test_a_page_is_one_file_name_whole_not_a_path_that_starts_with_one(tmp_path, page):
    """A plate's page and the index's are file names in the site: a path that starts with one is refused whole."""
    root = series(tmp_path, entries(f"number = 1\nfolder = \"one\"\npage = {json.dumps(page)}"), {"one": {}})
    found = mistakes(root)
    assert len(found) == 1 and found[0].startswith("plates/volume.toml, line 9: [[plates]] #1: page must be a file "
                                                   "name ending in .html"), found
    head = f'[volume]\nid = "XIV"\ntitle = "Parallelism"\npage = {json.dumps(page)}\n'
    found = mistakes(series(tmp_path / "index", entries("number = 1"), head=head))
    assert len(found) == 1 and found[0].startswith("plates/volume.toml, line 4: [volume]: page must be a file name "
                                                   "ending in .html"), found


def test_a_folder_linked_from_outside_the_series_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "plate.md").write_text(FRONT.format(volume="XIV", title="Parallelism", number=1, count=1, name="elsewhere"))
    root = series(tmp_path, entries('number = 1\nfolder = "linked"'))
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    assert mistakes(root) == ['plates/volume.toml, line 8: [[plates]] #1: folder "linked" leads outside the series '
                              'folder (a symbolic link?); plates live beside volume.toml']


def test_two_plates_may_not_share_a_folder(tmp_path):
    root = series(tmp_path, entries('number = 1\nfolder = "one"', 'number = 2\nfolder = "one"'),
                  {"one": {"number": 1, "count": 2}})
    assert mistakes(root) == ['plates/volume.toml, line 12: [[plates]] #2: folder "one" is also the folder of the '
                              'plate at line 8']


@pytest.mark.parametrize("head, message", [
    ('[volume]\nid = "XIV.1"\ntitle = "P"\n', "line 2: [volume]: id \"XIV.1\" must hold only letters and digits"),
    ('[volume]\nid = "XIV"\ntitle = "P"\npage = "index"\n', "line 4: [volume]: page must be a file name ending in "
                                                          ".html"),
    ('[volume]\nid = "XIV"\n', 'line 1: [volume]: missing key "title"'),
    ('id = "XIV"\n', 'unknown table or key "id"'),
    ('[volume]\nid = "XIV"\ntitle = "P"\nintro = 3\n', "line 4: [volume]: intro must be non-empty text, got 3"),
    ('[volume]\nid = "XIV"\ntitle = "P"\nintro = " "\n', "line 4: [volume]: intro must be non-empty text"),
    ('[volume]\nid = "XIV"\ntitle = "P"\nintro = "A\\u0007B"\n', "line 4: [volume]: intro holds the control "
                                                                "character U+0007"),
    ('[volume]\nid = "XIV"\ntitle = "P"\nintroduction = "A"\n', 'line 4: [volume]: unknown key "introduction"'),
])
def test_the_volumes_head_is_checked(tmp_path, head, message):
    root = series(tmp_path, entries("number = 1"), head=head)
    assert any(m.startswith("plates/volume.toml") and message in m for m in mistakes(root)), mistakes(root)


def test_no_plates_and_a_syntax_error_are_mistakes(tmp_path):
    assert mistakes(series(tmp_path, "")) == ["plates/volume.toml: missing [[plates]] tables: the volume lists its "
                                              "plates, one [[plates]] each (number, and title and folder when known)"]
    root = series(tmp_path / "b", entries("number = 1", "number = = 2"))
    assert mistakes(root)[0].startswith("plates/volume.toml, line 10: TOML syntax error")


@pytest.mark.parametrize("key, value, written, what", [
    ("volume", "XV", 'volume = "XV"', "the volume's id in volume.toml is \"XIV\""),
    ("number", 3, "plate = 3", "its number in volume.toml, line 9 is 2"),
    ("title", "Other", 'volume_title = "Other"', "the volume's title in volume.toml is \"Parallelism\""),
    ("count", 11, "plates_in_volume = 11", "the plates volume.toml lists is 2"),
])
def test_a_plates_front_matter_must_agree_with_the_volume_at_its_line(tmp_path, key, value, written, what):
    root = series(tmp_path, entries("number = 1", 'number = 2\nfolder = "two"'),
                  {"two": {"number": 2, "count": 2, key: value}})
    line = (root / "two" / "plate.md").read_text().splitlines().index(written) + 1
    got = mistakes(root)
    assert len(got) == 1 and got[0].startswith(f"plates/two/plate.md, line {line}: front matter: "), got
    assert got[0].endswith(f"does not agree with the volume: {what}"), got


def test_a_plates_own_mistakes_are_left_to_its_own_checks(tmp_path):
    root = series(tmp_path, entries('number = 1\nfolder = "one"'), {"one": {}})
    (root / "one" / "plate.md").write_text("---\nvolume = = 1\n---\n")
    assert volume.load(root).written()[0].folder == "one"


def test_the_shipped_plate_agrees_with_a_volume_made_from_its_own_front_matter(tmp_path):
    from generator.source import content
    plate = content.load(CONTENT).plate
    rows = [f"number = {n}" + (f'\nfolder = "plate"' if n == plate.plate else "")
            for n in range(1, plate.plates_in_volume + 1)]
    head = f'[volume]\nid = "{plate.volume}"\ntitle = "{plate.volume_title}"\n'
    root = series(tmp_path, entries(*rows), head=head)
    (root / "plate").mkdir()
    (root / "plate" / "plate.md").write_bytes((CONTENT / "plate.md").read_bytes())
    assert [e.number for e in volume.load(root).written()] == [plate.plate]


# --- the index page ----------------------------------------------------------------------------------------------

def index_of(tmp_path, built, pictures=None):
    rows = ['number = 1\ntitle = "First & <best>"', "number = 2", 'number = 3\ntitle = "Third"']
    return volume.index_html(volume.load(series(tmp_path, entries(*rows))), built, pictures)


def items(page: str) -> list[str]:
    return re.findall(r'<li class="volume-plate[^"]*" id="plate-\d+">(.*?)</li>', page, re.S)


def test_the_index_lists_every_plate_in_order_built_ones_as_links(tmp_path):
    page = index_of(tmp_path, {2: ("second.html", "The second", "Its deck, <short> & sweet.")})
    listed = items(page)
    assert len(listed) == 3
    assert [re.search(r"Plate (XIV\.\d+)", li).group(1) for li in listed] == ["XIV.1", "XIV.2", "XIV.3"]
    assert re.findall(r'<a href="([^"]*)">([^<]*)</a>', page) == [("second.html", "The second")]
    assert "Its deck, &lt;short&gt; &amp; sweet." in listed[1] and "to come" not in listed[1]
    assert "First &amp; &lt;best&gt;" in listed[0] and "to come" in listed[0]
    assert "Third" in listed[2] and "to come" in listed[2]
    assert "1 of 3 plates published" in page


def test_the_index_says_how_many_are_published_and_whether_any_are_to_come(tmp_path):
    page = index_of(tmp_path / "a", {n: (f"{n}.html", f"T{n}", "D") for n in (1, 2, 3)})
    assert "3 of 3 plates published." in page and "to come" not in page
    page = index_of(tmp_path / "b", {2: ("2.html", "T", "D")})
    assert "1 of 3 plates published; the others are to come." in page


INTRO = """
The first paragraph & its <words>,
over two lines.

The second names plate XIV.2, built, and plate XIV.3, to come.
"""


def test_the_intro_is_read_as_written(tmp_path):
    head = f'[volume]\nid = "XIV"\ntitle = "Parallelism"\nintro = """{INTRO}"""\n'
    assert volume.load(series(tmp_path / "a", entries("number = 1"), head=head)).intro == INTRO.lstrip("\n")
    assert volume.load(series(tmp_path / "b", entries("number = 1"))).intro == ""


def test_the_index_shows_the_intros_paragraphs_escaped_linking_the_plates_built(tmp_path):
    head = f'[volume]\nid = "XIV"\ntitle = "Parallelism"\nintro = """{INTRO}"""\n'
    v = volume.load(series(tmp_path, entries("number = 1", "number = 2", "number = 3"), head=head))
    page = volume.index_html(v, {2: ("second.html", "The second", "D")})
    intro = re.search(r'<div class="volume-intro">(.*?)</div>', page, re.S).group(1)
    paragraphs = [" ".join(p.split()) for p in INTRO.strip().split("\n\n")]
    expected = [html.escape(p, quote=False).replace("plate XIV.2", '<a href="second.html">plate XIV.2</a>')
                for p in paragraphs]
    assert re.findall(r"<p>(.*?)</p>", intro, re.S) == expected
    assert page.index('class="volume-intro"') < page.index('class="volume-plates"')


def test_without_an_intro_the_index_has_no_intro_block(tmp_path):
    assert 'class="volume-intro"' not in index_of(tmp_path, {2: ("second.html", "The second", "D")})


SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><defs><clipPath id="clip1"><rect width="5" '
       'height="5"/></clipPath></defs><g clip-path="url(#clip1)"><text fill="#333333">{}</text></g></svg>')


def test_a_built_plates_picture_is_its_svg_inline_hidden_with_ids_of_its_own(tmp_path):
    pictures = {n: SVG.format(f"figure of {n}") for n in (1, 2, 3)}  # 2 is to come: its picture is not shown
    page = index_of(tmp_path, {1: ("1.html", "T1", "D1"), 3: ("3.html", "T3", "D3")}, pictures)
    listed = items(page)
    assert [li.count("<svg") for li in listed] == [1, 0, 1]
    assert re.findall(r'<li class="([^"]*)"', page) == ["volume-plate pictured", "volume-plate to-come",
                                                        "volume-plate pictured"]
    for n in (1, 3):
        picture = re.search(r'<div class="chart volume-plate-picture" aria-hidden="true">(<svg.*?</svg>)</div>',
                            listed[n - 1], re.S)
        assert picture and f"figure of {n}" in picture.group(1)
        assert picture.group(1) == charts.unique_ids(pictures[n], f"plate-{n}")  # the figure as drawn, ids apart
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert set(re.findall(r"url\(#([^)]+)\)", page)) <= set(ids)


def test_the_index_escapes_a_page_name_in_its_link(tmp_path):
    page = index_of(tmp_path, {1: ('a"b.html', "T", "D")})
    assert '<a href="a&#34;b.html">T</a>' in page


def test_the_index_carries_its_style_under_a_csp_hash_and_no_script(tmp_path):
    from generator.page import render, theme
    page = index_of(tmp_path, {})
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert f"style-src {render.csp_hash(style)}" in csp and "default-src 'none'" in csp
    assert "script" not in csp and "<script" not in page
    assert theme.current().page_css() in style  # the plate's stylesheet, its theme with it
    assert "@media (prefers-color-scheme: dark)" in style and "@media print" in style


def test_a_plates_page_is_its_own_or_its_folders_name_without_the_plates_prefix(tmp_path):
    rows = ['number = 1\nfolder = "xiv-1-data-parallelism"\npage = "index.html"',
            'number = 2\nfolder = "xiv-2-sharded-data-parallelism"', 'number = 3\nfolder = "pipelines"', "number = 4"]
    root = series(tmp_path, entries(*rows), {f: {"number": n, "count": 4} for n, f in
                                             ((1, "xiv-1-data-parallelism"), (2, "xiv-2-sharded-data-parallelism"),
                                              (3, "pipelines"))})
    v = volume.load(root)
    assert [v.page_of(e) for e in v.written()] == ["index.html", "sharded-data-parallelism.html", "pipelines.html"]


@pytest.mark.parametrize("rows, message", [
    (['number = 1\nfolder = "one"\npage = "volume-xiv.html"'], "line 6: [[plates]] #1: its page \"volume-xiv.html\" "
                                                               "is also the page of the volume's index (line 4)"),
    (['number = 1\nfolder = "one"\npage = "two.html"', 'number = 2\nfolder = "two"'],
     "line 11: [[plates]] #2: its page \"two.html\" is also the page of plate XIV.1 (line 6)"),
    (['number = 1\npage = "one.html"'], "line 8: [[plates]] #1: page is set, but folder is not"),
    (['number = 1\nfolder = "one"\npage = "one.htm"'], "line 9: [[plates]] #1: page must be a file name ending in "
                                                       ".html"),
])
def test_pages_are_file_names_apart_from_each_other_and_the_index(tmp_path, rows, message):
    root = series(tmp_path, entries(*rows), {"one": {"number": 1, "count": len(rows)},
                                             "two": {"number": 2, "count": len(rows)}})
    found = mistakes(root)
    assert len(found) == 1 and found[0].startswith("plates/volume.toml, " + message), found


# --- [site]: where the series is published ---------------------------------------------------------------------

SITE_HEAD = '[site]\nbase_url = {value}\n\n[volume]\nid = "XIV"\ntitle = "Parallelism"\n'


@pytest.mark.parametrize("value, written", [
    ('"https://example.org/plates/vol-xiv/"', "https://example.org/plates/vol-xiv/"),
    ('"https://example.org/plates/vol-xiv"', "https://example.org/plates/vol-xiv/"),  # the folder's slash added
    ('"http://plates.example.org"', "http://plates.example.org/"),
    ('"https://example.org:8443/r&d/"', "https://example.org:8443/r&d/"),
])
def test_the_sites_base_url_is_read_as_a_folder(tmp_path, value, written):
    root = series(tmp_path, entries("number = 1"), head=SITE_HEAD.format(value=value))
    assert volume.load(root).base_url == written


def test_a_volume_without_site_is_not_published_at_an_address(tmp_path):
    assert volume.load(series(tmp_path, entries("number = 1"))).base_url == ""
    root = series(tmp_path / "b", entries("number = 1"), head='[site]\n\n[volume]\nid = "XIV"\ntitle = "P"\n')
    assert volume.load(root).base_url == ""  # an empty [site]: base_url is optional


@pytest.mark.parametrize("value, message", [
    ('"ftp://example.org/"', "must be an http:// or https:// address"),
    ('"javascript:alert(1)"', "must be an http:// or https:// address"),
    ('"example.org/plates/"', "must be an http:// or https:// address"),
    ('""', "must be an http:// or https:// address"),
    ("3", "must be an http:// or https:// address"),
    ('"https://?q=1"', "names no host"),
    ('"https://:8080/plates/"', "names no host"),
    ('"https://example.org/plates/?volume=xiv"', "must not hold a query"),
    ('"https://example.org/plates/?"', "must not hold a query"),
    ('"https://example.org/plates/#top"', "must not hold a fragment"),
    ('"https://editor:secret@example.org/plates/"', "must not hold a user name or password"),
    ('"https://example.org:port/plates/"', "is not a usable address"),
    ('"https://example.org:99999/plates/"', "is not a usable address"),
    ('"https://example.org/plates/../vol-xiv/"', "must not hold '.' or '..' steps"),
])
def test_a_base_url_that_cannot_name_the_sites_folder_is_a_mistake_at_its_line(tmp_path, value, message):
    root = series(tmp_path, entries("number = 1"), head=SITE_HEAD.format(value=value))
    got = mistakes(root)
    assert len(got) == 1 and got[0].startswith("plates/volume.toml, line 2: [site]: base_url "), got
    assert message in got[0], got


@pytest.mark.parametrize("site, line, message", [
    ('[site]\nbase_ur = "https://example.org/"\n', 2, 'unknown key "base_ur" (did you mean "base_url"?)'),
    ('site = "https://example.org/"\n', 1, "[site]: must be a table"),
])
def test_the_site_table_is_checked_field_by_field(tmp_path, site, line, message):
    root = series(tmp_path, entries("number = 1"), head=site + '\n[volume]\nid = "XIV"\ntitle = "P"\n')
    got = mistakes(root)
    assert len(got) == 1 and got[0].startswith(f"plates/volume.toml, line {line}: "), got
    assert message in got[0], got


def test_a_plate_built_alone_takes_the_base_url_of_the_volume_beside_it(tmp_path):
    root = series(tmp_path, entries('number = 1\nfolder = "one"'), {"one": {}},
                  head=SITE_HEAD.format(value='"https://example.org/plates"'))
    assert volume.base_url_beside(root / "one") == "https://example.org/plates/"
    (root / "volume.toml").unlink()
    assert volume.base_url_beside(root / "one") == ""  # no volume beside it: not published at an address


def test_a_plate_built_alone_reports_a_mistake_in_the_sites_base_url_at_its_line(tmp_path, monkeypatch):
    root = series(tmp_path, entries("number = 5"), {"one": {}},  # the rest is the series build's to check
                  head=SITE_HEAD.format(value='"https://example.org/plates/#top"'))
    with pytest.raises(ContentError) as error:
        volume.base_url_beside(root / "one")
    assert error.value.problems == ["plates/volume.toml, line 2: [site]: base_url \"https://example.org/plates/#top\" "
                                    "must not hold a fragment ('#…'): pages are named by appending to it"]
    monkeypatch.chdir(root / "one")
    with pytest.raises(ContentError):
        volume.base_url_beside(Path("."))  # the folder's parent, even when the plate is given as "."


# --- a series of volumes: volume.toml and volume-<id>.toml -------------------------------------------------------

XI_HEAD = '[volume]\nid = "XI"\ntitle = "Optimisation at Scale"\n'


def two_volumes(tmp_path: Path, xi_body: str, xiv_body: str | None = None, plates: dict | None = None,
                xi_head: str = XI_HEAD) -> Path:
    """A series of Vol. XIV (volume.toml) and Vol. XI (volume-xi.toml), with plate folders {name: front matter}."""
    root = series(tmp_path, xiv_body if xiv_body is not None else entries("number = 1"), plates)
    (root / "volume-xi.toml").write_text(xi_head + xi_body, encoding="utf-8")
    return root


def series_mistakes(root: Path) -> list[str]:
    with pytest.raises(ContentError) as error:
        volume.load_series(root)
    return error.value.problems


def line_of(path: Path, text: str, after: int = 0) -> int:
    """The 1-based number of the first line of a file that is text, after line `after`."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if i > after and line == text)


def test_a_series_reads_every_volume_file_in_the_order_of_their_numerals(tmp_path):
    root = two_volumes(tmp_path, entries("number = 1", 'number = 2\ntitle = "The Critical Batch Size"\n'
                                         'folder = "xi-2"'),
                       plates={"xi-2": {"volume": "XI", "title": "Optimisation at Scale", "number": 2, "count": 2}})
    shelf = volume.load_series(root)
    assert [(v.id, v.file, v.page, len(v.plates)) for v in shelf.volumes] == [
        ("XI", "volume-xi.toml", "volume-xi.html", 2), ("XIV", "volume.toml", "volume-xiv.html", 1)]
    assert [e.title for e in shelf.volumes[0].plates] == ["", "The Critical Batch Size"]  # untitled: to come
    assert shelf.pages() == {"XI.2": "xi-2.html"} and shelf.page == volume.SERIES_PAGE == "volumes.html"
    assert [volume.roman(n) for n in ("XI", "XIV", "ix", "IIII", "X1", "")] == [11, 14, 9, None, None, None]


def test_a_further_volume_file_is_named_for_its_id(tmp_path):
    root = two_volumes(tmp_path, entries("number = 1"), xi_head=XI_HEAD.replace('"XI"', '"XII"'))
    assert series_mistakes(root) == [
        'plates/volume-xi.toml, line 2: [volume]: id "XII" is not the volume this file is named for: '
        "volume-xi.toml holds Vol. XI (or rename it volume-xii.toml)"]


def test_two_volumes_with_one_id_are_a_mistake_at_the_second(tmp_path):
    root = series(tmp_path, entries("number = 1"), head='[volume]\nid = "XI"\ntitle = "T"\npage = "a.html"\n')
    (root / "volume-xi.toml").write_text(XI_HEAD + entries("number = 1"), encoding="utf-8")
    assert series_mistakes(root) == [
        'plates/volume-xi.toml, line 2: [volume]: id "XI" is also the id of the volume in volume.toml, line 2; '
        "each volume has its own"]


def test_two_volumes_with_one_index_page_are_a_mistake_at_its_line(tmp_path):
    root = two_volumes(tmp_path, entries("number = 1"), xi_head=XI_HEAD + 'page = "volume-xiv.html"\n')
    assert series_mistakes(root) == [
        'plates/volume-xi.toml, line 4: the index of Vol. XI: its page "volume-xiv.html" is also the page of the '
        'index of Vol. XIV (volume.toml, line 4); set page = "…" to another name']


def test_plate_pages_of_two_volumes_may_not_collide(tmp_path):
    plates = {"xiv-1-scale": {}, "xi-1-scale": {"volume": "XI", "title": "Optimisation at Scale", "count": 1}}
    root = two_volumes(tmp_path, entries('number = 1\nfolder = "xi-1-scale"'),
                       entries('number = 1\nfolder = "xiv-1-scale"'), plates)
    line = line_of(root / "volume-xi.toml", "[[plates]]")
    assert series_mistakes(root) == [
        f'plates/volume-xi.toml, line {line}: plate XI.1: its page "scale.html" is also the page of plate XIV.1 '
        f'(volume.toml, line {line_of(root / "volume.toml", "[[plates]]")}); set page = "…" to another name']


def test_a_plate_folder_listed_by_two_volumes_is_a_mistake_at_the_second(tmp_path):
    plates = {"one": {}}
    root = two_volumes(tmp_path, entries('number = 1\nfolder = "one"\npage = "other.html"'),
                       entries('number = 1\nfolder = "one"'), plates)
    got = series_mistakes(root)
    line = line_of(root / "volume-xi.toml", "[[plates]]")
    assert f'plates/volume-xi.toml, line {line}: [[plates]] #1: folder "one" is also the folder of plate XIV.1 ' \
           f'(volume.toml, line {line_of(root / "volume.toml", "[[plates]]")}); a plate belongs to one volume' in got
    # and the plate's front matter, Vol. XIV's, disagrees with Vol. XI: said at its line, as for any plate
    assert any(m.startswith("plates/one/plate.md, line 2: front matter: volume \"XIV\"") for m in got), got


def test_the_sites_address_is_set_in_one_volume_file(tmp_path):
    site = '[site]\nbase_url = "https://example.org/a/"\n\n'
    root = series(tmp_path, entries("number = 1"), head=site + '[volume]\nid = "XIV"\ntitle = "P"\n')
    (root / "volume-xi.toml").write_text(XI_HEAD + entries("number = 1"), encoding="utf-8")
    shelf = volume.load_series(root)
    assert shelf.base_url == "https://example.org/a/" and {v.base_url for v in shelf.volumes} == {shelf.base_url}
    (root / "volume-xi.toml").write_text(site + XI_HEAD + entries("number = 1"), encoding="utf-8")
    assert series_mistakes(root) == ["plates/volume-xi.toml, line 1: [site] is also set in volume.toml, line 1: the "
                                     "series is published at one address, set in one volume file"]


@pytest.mark.parametrize("where", ["index", "plate"])
def test_no_page_may_take_the_top_pages_name(tmp_path, where):
    if where == "index":
        head = '[volume]\nid = "XIV"\ntitle = "P"\npage = "volumes.html"\n'
        root = series(tmp_path, entries("number = 1"), head=head)
        want = 'plates/volume.toml, line 4: [volume]: page "volumes.html" is the series\' top page'
    else:
        root = series(tmp_path, entries('number = 1\nfolder = "xiv-1-volumes"'), {"xiv-1-volumes": {}})
        want = (f"plates/volume.toml, line {line_of(root / 'volume.toml', '[[plates]]')}: [[plates]] #1: its page "
                f"\"volumes.html\" is also the page of the series' top page;")
    got = series_mistakes(root)
    assert len(got) == 1 and got[0].startswith(want), got


def test_a_plate_of_a_further_volume_is_held_to_that_volumes_file(tmp_path):
    root = two_volumes(tmp_path, entries("number = 1", 'number = 2\nfolder = "xi-2"'),
                       plates={"xi-2": {"volume": "XI", "title": "Optimisation at Scale", "number": 2, "count": 3}})
    assert series_mistakes(root) == [
        "plates/xi-2/plate.md, line 5: front matter: plates_in_volume 3 does not agree with the volume: the plates "
        "volume-xi.toml lists is 2"]


def test_a_plate_built_alone_takes_the_base_url_from_any_volume_file_beside_it(tmp_path):
    root = two_volumes(tmp_path, entries("number = 1"), plates={"one": {}})
    (root / "volume-xi.toml").write_text('[site]\nbase_url = "https://example.org/b"\n' + XI_HEAD, encoding="utf-8")
    assert volume.base_url_beside(root / "one") == "https://example.org/b/"


def test_an_untitled_plate_to_come_shows_its_number_and_to_come(tmp_path):
    v = volume.load(two_volumes(tmp_path, entries("number = 1", 'number = 2\ntitle = "Two"')), "volume-xi.toml")
    listed = items(volume.index_html(v, {}))
    assert [" ".join(re.sub(r"<[^>]+>", " ", li).split()) for li in listed] == [
        "Plate XI.1 to come", "Plate XI.2 Two to come"]  # the stylesheet puts "· " before "to come"
    assert "volume-plate-title" not in listed[0] and "volume-plate-title" in listed[1]


TOP_INTRO = 'intro = """\nFirst of XI, naming plate XIV.1 & <more>.\n\nSecond, not shown on the top page.\n"""\n'


def test_the_top_page_lists_each_volume_its_first_paragraph_and_plates_linking_the_built(tmp_path):
    from generator.page import render
    root = two_volumes(tmp_path, entries("number = 1", 'number = 2\ntitle = "Two"'),
                       entries('number = 1\ntitle = "One"', "number = 2"), xi_head=XI_HEAD + TOP_INTRO)
    shelf = volume.load_series(root)
    page = volume.series_html(shelf, {"XIV.1": ("one.html", "One, as written", "D")})
    sections = re.findall(r'<section class="series-volume"[^>]*>(.*?)</section>', page, re.S)
    assert [re.search(r"<h2[^>]*>(.*?)</h2>", s).group(1) for s in sections] == [
        '<a href="volume-xi.html">Vol. XI · Optimisation at Scale</a>', '<a href="volume-xiv.html">Vol. XIV · '
        'Parallelism</a>']
    assert re.findall(r'<p class="series-volume-intro">(.*?)</p>', page) == [
        'First of XI, naming <a href="one.html">plate XIV.1</a> &amp; &lt;more&gt;.']
    rows = [[" ".join(re.sub(r"<[^>]+>", " ", li).split()) for li in re.findall(r"<li[^>]*>(.*?)</li>", s, re.S)]
            for s in sections]
    assert rows == [["Plate XI.1 to come", "Plate XI.2 Two to come"],
                    ["Plate XIV.1 One, as written", "Plate XIV.2 to come"]]
    assert [re.findall(r'<a href="([^"]+)">', li) for li in re.findall(r"<li[^>]*>(.*?)</li>", page, re.S)] == [
        [], [], ["one.html"], []]
    assert "1 of 4 plates published" in page and "<script" not in page
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert f"style-src {render.csp_hash(style)};" in page and ".series-plate" in style
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and 'rel="canonical"' not in page


def test_the_shipped_series_has_vol_xi_with_xi_2_titled_and_listed_once_written(tmp_path):
    from conftest import ROOT
    shelf = volume.load_series(ROOT / "plates")
    xi = next(v for v in shelf.volumes if v.id == "XI")
    assert xi.file == "volume-xi.toml" and xi.title == "Optimisation at Scale" and xi.intro
    assert [e.title for e in xi.plates[:-1]] == [""] * (len(xi.plates) - 1)  # to come, untitled
    assert xi.plates[-1].title == "The Critical Batch Size" and xi.plates[-1].number == 2
    folder = ROOT / "plates" / "xi-2-critical-batch-size"
    assert xi.plates[-1].folder == (folder.name if (folder / "plate.md").is_file() else "")
