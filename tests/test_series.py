"""A series build (generator/site/series.py): every plate volume.toml lists with a folder, one page each, the volume's
index, the cross-references between the plates built linked; one failing plate fails it all, nothing written.
The series is made in tmp_path from the shipped plate and a copy of it numbered as the plate it refers to."""
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import escape

from conftest import CONTENT, ROOT, copy_plate
from generator.source import content, volume
from generator.plate import charts
from generator.page import crossrefs
from generator.site import assembly, build, series
from generator.commands import cli
from generator.source.schema import ContentError


def referred(plate) -> tuple[str, str]:
    """(a plate the shipped plate's [plates] names in its own volume, one it names in another volume)."""
    own = [i for i in plate.plates.values() if i.split(".")[0] == plate.volume and i != f"{plate.volume}.{plate.plate}"]
    other = [i for i in plate.plates.values() if i.split(".")[0] != plate.volume]
    if not own or not other:
        pytest.skip(f"{CONTENT}'s [plates] names no plate of its own volume and one of another")
    return own[0], other[0]


def make_series(root: Path, copy_title: str = "The plate referred to") -> dict:
    """plates/: the shipped plate, and a copy numbered as the plate of its volume it refers to; volume.toml."""
    plate = content.load(CONTENT).plate
    target, _ = referred(plate)
    number = int(target.split(".")[1])
    root.mkdir(parents=True)
    copy_plate(CONTENT, root / "shipped", symlinks=True)
    copy_plate(CONTENT, root / f"{plate.volume.lower()}-{number}-referred", symlinks=True)
    copy = root / f"{plate.volume.lower()}-{number}-referred" / "plate.md"
    text = copy.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^plate = \d+$", f"plate = {number}", text, count=1)
    text = re.sub(r'(?m)^title = ".*"$', f'title = "{copy_title}"', text, count=1)
    copy.write_text(text, encoding="utf-8")
    rows = []
    for n in range(1, plate.plates_in_volume + 1):
        row = f"[[plates]]\nnumber = {n}\n"
        if n == plate.plate:
            row += 'folder = "shipped"\npage = "index.html"\n'
        elif n == number:
            row += f'folder = "{copy.parent.name}"\n'
        rows.append(row)
    (root / "volume.toml").write_text(f'[volume]\nid = "{plate.volume}"\ntitle = "{plate.volume_title}"\n\n'
                                      + "\n".join(rows), encoding="utf-8")
    return {"plate": plate, "target": target, "number": number, "copy": copy.parent,
            "copy_page": "referred.html", "index": f"volume-{plate.volume.lower()}.html"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The series built once, and the shipped plate built alone."""
    base = tmp_path_factory.mktemp("series")
    made = make_series(base / "plates")
    made["files"] = build.build(base / "plates", base / "site")
    made["alone"] = build.build(CONTENT, base / "alone")
    made["site"] = base / "site"
    return made


def test_every_written_plate_has_its_page_and_the_volume_its_index(built):
    names = set(built["files"])
    assert {"index.html", built["copy_page"], built["index"], built["plate"].data_file} <= names
    assert sorted(p.name for p in built["site"].iterdir() if not p.name.startswith(".")) == sorted(names)
    index = built["files"][built["index"]]
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', index.split("<main>")[0]) == [(volume.SERIES_PAGE,
                                                                                       "Volumes")]
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', index.split("<main>")[1])
    assert links == [("index.html", built["plate"].title), (built["copy_page"], "The plate referred to")] or \
        links == [(built["copy_page"], "The plate referred to"), ("index.html", built["plate"].title)]
    order = sorted([built["plate"].plate, built["number"]])
    assert [page for page, _ in links] == [{built["plate"].plate: "index.html", built["number"]: built["copy_page"]}[n]
                                           for n in order]
    assert index.count('class="volume-plate-status">to come') == built["plate"].plates_in_volume - 2


def test_the_index_draws_each_written_plates_first_figure_as_its_page_does(built):
    index = built["files"][built["index"]]
    for number, page in ((built["plate"].plate, "index.html"), (built["number"], built["copy_page"])):
        first = re.search(r'<div class="chart"[^>]*>(<svg.*?</svg>)</div>', built["files"][page], re.S).group(1)
        row = re.search(rf'<li [^>]*id="plate-{number}">(.*?)</li>', index, re.S).group(1)
        assert re.findall(r"<svg.*?</svg>", row, re.S) == [charts.unique_ids(first, f"plate-{number}")]
    ids = re.findall(r'\bid="([^"]+)"', index)
    assert len(ids) == len(set(ids))


def test_the_shipped_plate_links_the_plate_built_with_it_and_not_the_other(built):
    page = built["files"]["index.html"]
    target, other = referred(built["plate"])
    assert re.search(rf'<a href="{built["copy_page"]}">[Pp]late\s+{re.escape(target)}</a>', page)
    assert not re.search(rf'<a [^>]*>[Pp]late\s+{re.escape(other)}</a>', page)
    assert re.search(rf"[Pp]late\s+{re.escape(other)}", page)  # still there, as text
    head = re.search(r'<span class="volume">(.*?)</span>', page).group(1)
    assert head.startswith(f'<a href="{volume.SERIES_PAGE}">Volumes</a> · <a href="{built["index"]}">Vol. ')


def test_a_plate_does_not_link_to_itself(built):
    page = built["files"][built["copy_page"]]
    assert not re.search(rf'<a href="{built["copy_page"]}">', page)
    assert re.search(rf"[Pp]late\s+{re.escape(built['target'])}", page)  # its own id, as text


def test_the_shipped_plates_page_and_csv_are_its_own_build_but_for_the_intended_links(built):
    page, alone = built["files"]["index.html"], built["alone"]["index.html"]
    unlinked = re.sub(rf'<a href="{built["copy_page"]}">(.*?)</a>', r"\1", page, flags=re.S)
    unlinked = unlinked.replace(f'<a href="{volume.SERIES_PAGE}">Volumes</a> · ', "", 1)
    unlinked = unlinked.replace(f'<a href="{built["index"]}">', "", 1).replace("</a></span>", "</span>", 1)
    # the control named by the [plates] subject of the plate built alongside links to it; the page data lists it
    subject = next(k for k, v in built["plate"].plates.items() if v == built["target"])
    see = f'\n      <a class="see-plate" href="{built["copy_page"]}">See plate {built["target"]}</a>'
    assert page.count(see) == (1 if f'id="choose-{subject}"' in page else 0)
    unlinked = unlinked.replace(see, "").replace(
        f'"links":{{"{built["target"]}":"{built["copy_page"]}"}}', '"links":{}', 1)
    assert unlinked == alone and page != alone
    assert built["files"][built["plate"].data_file] == built["alone"][built["plate"].data_file]


def test_one_failing_plate_fails_the_build_at_its_line_and_nothing_is_written(tmp_path):
    made = make_series(tmp_path / "plates")
    plate_md = made["copy"] / "plate.md"
    text = plate_md.read_text()
    plate_md.write_text(text.replace("\ntitle = ", "\ntitel = \"x\"\ntitle = ", 1))
    line = plate_md.read_text().splitlines().index('titel = "x"') + 1
    with pytest.raises(ContentError) as error:
        build.build(tmp_path / "plates", tmp_path / "site")
    assert any(p.startswith(f"{made['copy'].name}/plate.md, line {line}: ") and "titel" in p
               for p in error.value.problems), error.value.problems
    assert not (tmp_path / "site").exists()


def test_a_volume_mistake_fails_the_command_and_leaves_the_site_as_it_was(tmp_path, monkeypatch, capsys):
    made = make_series(tmp_path / "plates")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["build", "--out", "site"]) == 0  # no --content: the series in plates/
    before = {p.name: p.read_bytes() for p in (tmp_path / "site").iterdir()}
    assert made["index"] in before and made["copy_page"] in before
    volume_toml = tmp_path / "plates" / "volume.toml"
    volume_toml.write_text(volume_toml.read_text().replace(f"number = {made['number']}\n",
                                                           f"number = {made['number'] + 100}\n"))
    capsys.readouterr()
    assert cli.main(["build", "--out", "site"]) == cli.EXIT_CONTENT
    assert "plates/volume.toml, line" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (tmp_path / "site").iterdir()} == before


def test_two_plates_writing_one_file_name_with_other_contents_is_a_mistake(tmp_path, monkeypatch):
    made = make_series(tmp_path / "plates")
    real = assembly.gather

    def gather(folder, *args, **kwargs):  # each plate adds a file of one name, its contents its own page's name
        files = real(folder, *args, **kwargs)
        return {**files, "shared.txt": kwargs["page"]}
    monkeypatch.setattr(assembly, "gather", gather)
    with pytest.raises(ContentError) as error:
        series.gather(tmp_path / "plates")
    vol = volume.load(tmp_path / "plates")
    first, second = vol.written()
    assert made["target"] in (vol.plate_id(first), vol.plate_id(second))
    assert error.value.problems == [f'plates/volume.toml, line {second.line}: plate {vol.plate_id(second)} writes '
                                    f'"shared.txt", as plate {vol.plate_id(first)} does, with other contents; give '
                                    f"one of them another name (data_file, page)"]


def test_a_series_without_a_base_url_writes_one_robots_txt_and_no_sitemap_preview_or_canonical(built):
    files = built["files"]
    assert files["robots.txt"] == "User-agent: *\nAllow: /\n"
    assert "sitemap.xml" not in files and not [name for name in files if name.endswith(".png")]
    pages = [name for name in files if name.endswith(".html")]
    assert sorted(pages) == sorted(["index.html", built["copy_page"], built["index"], volume.SERIES_PAGE])
    assert not [name for name in pages if 'rel="canonical"' in files[name]]


def test_a_plate_folder_is_built_alone_and_a_series_folder_as_a_series(tmp_path):
    make_series(tmp_path / "plates")
    assert series.is_series(tmp_path / "plates") and not series.is_series(tmp_path / "plates" / "shipped")
    assert not series.is_series(CONTENT)
    shutil.copy(tmp_path / "plates" / "volume.toml", tmp_path / "plates" / "shipped" / "volume.toml")
    assert not series.is_series(tmp_path / "plates" / "shipped")  # a plate's folder, whatever else it holds
    assert volume.load(tmp_path / "plates").written()


def test_the_shipped_series_builds_with_the_shipped_plate_as_index_html(tmp_path):
    root = Path(__file__).resolve().parent.parent / "plates"
    vol = volume.load(root)
    shipped = [e for e in vol.written() if vol.folder(e).resolve() == CONTENT]
    if not shipped:
        pytest.skip(f"{CONTENT} is not a plate of {root}")
    assert vol.page_of(shipped[0]) == "index.html"  # external checks read the plate's page there


def links_in(markup: str) -> list[tuple[str, str]]:
    """(href, text) of each link in a piece of HTML, unescaped."""
    return [(html.unescape(href), html.unescape(re.sub(r"<[^>]*>", "", text)))
            for href, text in re.findall(r'<a href="([^"]*)">(.*?)</a>', markup, re.S)]


@pytest.mark.browser
def test_the_live_readout_links_the_plate_built_alongside_as_the_page_as_built_does(built, open_page):
    """The readout the page script writes for each model links what the build's crossrefs.link_plates links in the
    same text, and a plate not built not at all; back at the default, it is the page as built's, links and all."""
    target, pages = built["target"], {built["target"]: built["copy_page"]}
    page = open_page(built["site"])
    paragraphs = "() => [...document.querySelectorAll('#readout p')].map((p) => [p.innerHTML, p.textContent])"
    static = page.page.evaluate(paragraphs)
    models = page.page.evaluate("() => { const d = JSON.parse(document.getElementById('plate-data').textContent);"
                                " return d.choices.model.filter((m) => m in d.presets.models); }")  # not Custom…
    shown, unfit = [], []
    for model in models:
        page.page.evaluate("(m) => window.plate.show({model: m})", model)
        shown += page.page.evaluate(paragraphs)
        unfit.append(page.page.evaluate("() => !window.plate.factsOf(window.plate.selection()).points[0].fits"))
    page.page.evaluate("() => window.plate.show({})")
    assert page.page.evaluate(paragraphs) == static
    for inner, text in shown:
        assert links_in(inner) == links_in(crossrefs.link_plates(str(escape(text)), pages)), text
        assert "undefined" not in inner, inner
    # the plate's words name the plate on sharding when the states do not fit on one GPU: with such a model among
    # the presets (the shipped ones have several) a link was made and checked above, not only texts without any
    assert any(links_in(inner) for inner, _ in shown) == any(unfit), f"plate {target}: links against unfit models"


def test_plate_check_checks_every_plate_of_a_series_and_writes_nothing(tmp_path, monkeypatch, capsys):
    made = make_series(tmp_path / "plates")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check"]) == 0  # no --content: the series in plates/
    assert "plates/ has no mistakes" in capsys.readouterr().out
    plate_md = made["copy"] / "plate.md"
    plate_md.write_text(plate_md.read_text().replace("\ntitle = ", "\ntitel = \"x\"\ntitle = ", 1))
    line = plate_md.read_text().splitlines().index('titel = "x"') + 1
    assert cli.main(["check"]) == cli.EXIT_CONTENT
    assert f"{made['copy'].name}/plate.md, line {line}: " in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plates"]


MISSING_VOLUME = {
    "missing": (lambda path: None, "file is missing: a series' folder lists its plates in volume.toml (and a plate's "
                                   "folder holds its plate.md; plates/ has neither)"),
    "a FIFO": (os.mkfifo, "is a FIFO (named pipe), not a regular file; content files must be ordinary files"),
    "a folder": (os.mkdir, "is a folder, not a file"),
}


@pytest.mark.parametrize("case", list(MISSING_VOLUME))
@pytest.mark.parametrize("command", ["check", "build"])
def test_a_series_whose_volume_toml_is_missing_or_not_a_file_names_it_in_one_line(tmp_path, case, command):
    """plates/ with its plates but no volume.toml, or a FIFO (never opened: it would block) or a folder in its place:
    one mistake at plates/volume.toml, exit 1, nothing written (it was "plates/plate: no plate module")."""
    make_series(tmp_path / "plates")
    os.unlink(tmp_path / "plates" / "volume.toml")
    make, what = MISSING_VOLUME[case]
    make(tmp_path / "plates" / "volume.toml")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = subprocess.run([sys.executable, "-m", "generator", command], cwd=tmp_path, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == cli.EXIT_CONTENT, result.stderr
    assert result.stderr.splitlines()[1:] == [f"  plates/volume.toml: {what}"], result.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.fixture(scope="module")
def two_volumes(tmp_path_factory):
    """make_series' Vol. of the shipped plate, and a further volume (its own volume-<id>.toml) holding a copy of the
    shipped plate numbered as the plate of that volume it refers to; built once."""
    base = tmp_path_factory.mktemp("volumes")
    made = make_series(base / "plates")
    _, other = referred(made["plate"])
    ident, number = other.split(".")[0], int(other.split(".")[1])
    folder = base / "plates" / f"{ident.lower()}-{number}-elsewhere"
    copy_plate(CONTENT, folder, symlinks=True)
    text = (folder / "plate.md").read_text(encoding="utf-8")
    for key, value in (("volume", f'"{ident}"'), ("volume_title", '"Elsewhere"'), ("plate", number),
                       ("plates_in_volume", number), ("title", '"The plate of another volume"')):
        text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text, count=1)
    (folder / "plate.md").write_text(text, encoding="utf-8")
    rows = "".join(f"\n[[plates]]\nnumber = {n}\n" + (f'folder = "{folder.name}"\n' if n == number else "")
                   for n in range(1, number + 1))
    (base / "plates" / volume.file_name(ident)).write_text(
        f'[volume]\nid = "{ident}"\ntitle = "Elsewhere"\nintro = "Its plate {other}, and plate '
        f'{made["target"]} of the other volume."\n{rows}', encoding="utf-8")
    made.update(other=other, other_page="elsewhere.html", other_index=f"volume-{ident.lower()}.html",
                files=build.build(base / "plates", base / "site"), series=volume.load_series(base / "plates"))
    return made


def test_a_series_of_two_volumes_builds_each_index_and_the_top_page(two_volumes):
    files = two_volumes["files"]
    pages = {two_volumes["index"], two_volumes["other_index"], volume.SERIES_PAGE, "index.html",
             two_volumes["copy_page"], two_volumes["other_page"]}
    assert {name for name in files if name.endswith(".html")} == pages
    top = files[volume.SERIES_PAGE]
    order = [v.page for v in two_volumes["series"].volumes]
    assert re.findall(r'<h2[^>]*><a href="([^"]+)">', top) == order and set(order) == {
        two_volumes["index"], two_volumes["other_index"]}
    lists = "".join(re.findall(r'<ol class="series-plates">(.*?)</ol>', top, re.S))
    plate_links = [href for href, _ in links_in(lists)]
    assert plate_links == [v.page_of(e) for v in two_volumes["series"].volumes for e in v.written()]
    assert sorted(plate_links) == sorted(["index.html", two_volumes["copy_page"], two_volumes["other_page"]])
    index = files[two_volumes["other_index"]]
    assert links_in(index.split("<main>")[0]) == [(volume.SERIES_PAGE, "Volumes")]
    assert (two_volumes["other_page"], f"plate {two_volumes['other']}") in links_in(index)  # its intro, its own
    assert ("referred.html", f"plate {two_volumes['target']}") in links_in(index)  # and the other volume's


def test_a_plate_links_the_plate_of_another_volume_and_its_head_its_own_volume(two_volumes):
    files = two_volumes["files"]
    shipped = files["index.html"]
    assert re.search(rf'<a href="{two_volumes["other_page"]}">[Pp]late\s+{re.escape(two_volumes["other"])}</a>',
                     shipped)
    for page, index in (("index.html", two_volumes["index"]), (two_volumes["other_page"], two_volumes["other_index"])):
        head = re.search(r'<span class="volume">(.*?)</span>', files[page]).group(1)
        assert [href for href, _ in links_in(head)] == [volume.SERIES_PAGE, index], page


def test_a_folder_with_only_a_further_volume_file_is_a_series(tmp_path):
    (tmp_path / "plates" / "plate").mkdir(parents=True)  # a plate module's folder: a plate, unless a volume file
    assert not series.is_series(tmp_path / "plates")
    (tmp_path / "plates" / "volume-xi.toml").write_text('[volume]\nid = "XI"\ntitle = "T"\n')
    assert series.is_series(tmp_path / "plates")


def test_a_plate_the_series_does_not_list_is_never_built_over_a_series_site(tmp_path):
    """One plate built into a folder holding a series' site is refused (exit 2, nothing touched) unless the series
    lists it: its build would replace every other plate's files with its one page."""
    import subprocess
    import sys
    from generator.site import output
    from conftest import FIXTURE, ROOT
    out = tmp_path / "site"
    output.write({"index.html": "<p>one</p>", "volume-x.html": "<p>the index</p>", "two.html": "<p>two</p>"}, out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    result = subprocess.run([sys.executable, "-m", "generator", "build", "--content", str(FIXTURE), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "holds a series' site (two.html, volume-x.html)" in result.stderr and "another --out" in result.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_a_served_series_makes_again_only_the_plate_an_edit_touches(tmp_path, monkeypatch):
    """`plate serve` keeps each plate's files between rebuilds (its memo): an edit of one plate's prose makes that
    plate again and no other, and the indexes follow its new title; an edit of a volume file makes every plate
    again (their links and pages come from there)."""
    import shutil
    from generator.source import volume
    from generator.site import assembly, build, series
    from conftest import ROOT
    root = tmp_path / "plates"
    shutil.copytree(ROOT / "plates", root, ignore=shutil.ignore_patterns("__pycache__"))
    memo: dict = {}
    first = series.gather(root, [], memo)
    made = []
    gather = assembly.gather
    monkeypatch.setattr(assembly, "gather", lambda folder, *a, **k: made.append(Path(folder).name) or gather(folder, *a, **k))
    assert series.gather(root, [], memo) == first and made == []
    shelf = volume.load_series(root)
    vol, entry = shelf.written()[-1]
    plate_md = vol.folder(entry) / "plate.md"
    text = plate_md.read_text(encoding="utf-8")
    plate_md.write_text(text + "\nA sentence added while served.\n", encoding="utf-8")
    again = series.gather(root, [], memo)
    assert made == [entry.folder] and "A sentence added while served." in again[vol.page_of(entry)]
    assert {n for n in first if first[n] != again[n]} == {vol.page_of(entry)}
    front = volume.front_matter(plate_md)[0]
    plate_md.write_text(text.replace(f'title = "{front["title"]}"', 'title = "A Title Changed While Served"', 1),
                        encoding="utf-8")
    made.clear()
    retitled = series.gather(root, [], memo)
    assert made == [entry.folder] and "A Title Changed While Served" in retitled[vol.page]
    made.clear()
    (root / "volume.toml").write_text((root / "volume.toml").read_text() + "\n# an edit\n")
    series.gather(root, [], memo)
    assert sorted(made) == sorted(e.folder for _, e in shelf.written())


def test_one_plate_built_into_its_series_site_never_writes_over_another_plate_s_file(tmp_path):
    """A plate built into its series' site whose CSV takes the name of another plate's CSV there is a mistake at its
    [[plates]] line, and the site is left as it was; built again with its own name, every other file stays."""
    import shutil
    from generator.source import content, volume
    from generator.site import assembly, build
    from generator.source.schema import ContentError
    from conftest import ROOT
    root = tmp_path / "plates"
    shutil.copytree(ROOT / "plates", root, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "site"
    build.build(root, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    shelf = volume.load_series(root)
    (vol, entry), (other_vol, other) = shelf.written()[0], shelf.written()[-1]
    taken = content.load(other_vol.folder(other)).plate.data_file
    plate_md = vol.folder(entry) / "plate.md"
    text = plate_md.read_text(encoding="utf-8")
    plate_md.write_text(text.replace("\nplates_in_volume = ", f'\ndata_file = "{taken}"\nplates_in_volume = ', 1),
                        encoding="utf-8")
    with pytest.raises(ContentError) as raised:
        build.build(vol.folder(entry), out)
    assert raised.value.problems[0].startswith(f"plates/{vol.file}, line {entry.line}: plate {vol.plate_id(entry)} "
                                               f"writes \"{taken}\", which the site in")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    plate_md.write_text(text, encoding="utf-8")
    build.build(vol.folder(entry), out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the same plate, the same bytes: all kept


@pytest.mark.browser
def test_a_link_to_a_plate_carries_the_choices_its_url_reads(series_site, browser):
    """A plate module's LINK_KEYS: every link to that plate (the prose's, the readout's, a control's) carries the
    selection's choices for those keys, follows a change of control, and opens the other plate on them."""
    from conftest import wait_until
    pages = {}
    for path in sorted(series_site.glob("*.html")):
        found = re.search(r'<script[^>]*id="plate-data"[^>]*>(.*?)</script>', path.read_text(encoding="utf-8"), re.S)
        if found:
            pages[path.name] = __import__("json").loads(html.unescape(found.group(1)))
    carrying = {name: d for name, d in pages.items() if d.get("carry")}
    assert carrying, "no plate of the series carries choices to another (XI.2 carries XIV.4's)"
    context = browser.new_context(offline=True)
    try:
        for name, data in carrying.items():
            target, keys = next(iter(data["carry"].items()))
            link = data["links"][target]
            # a choice other than the default for each carried key that has one, by URL
            chosen = {k: next((c for c in data["choices"][k] if c != data["default"][k]), data["default"][k])
                      for k in keys if k in data["choices"]}
            page = context.new_page()
            page.goto((series_site / name).resolve().as_uri() + "#" + "&".join(f"{k}={v}" for k, v in chosen.items()))
            wait_until(page, "document.documentElement.dataset.ready")
            hrefs = f"() => [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href'))" \
                    f".filter((h) => h.split('#')[0] === {__import__('json').dumps(link)})"
            expected = link + "#" + "&".join(f"{k}={({**data['default'], **chosen})[k]}" for k in keys)
            assert set(page.evaluate(hrefs)) == {expected}, name
            # a change of control moves every such link
            key = next(k for k in keys if k in data["choices"] and len(data["choices"][k]) > 1)
            other = next(c for c in data["choices"][key] if c != chosen[key])
            # a reader opens the disclosure a control sits in
            page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            page.select_option(f"#choose-{key}", other)
            wait_until(page, f"() => document.documentElement.dataset.drawn !== undefined && "
                             f"({hrefs})().some((h) => h.includes({__import__('json').dumps(f'{key}={other}')}))")
            moved = {**data["default"], **chosen, key: other}
            assert set(page.evaluate(hrefs)) == {link + "#" + "&".join(f"{k}={moved[k]}" for k in keys)}, name
            # and the other plate opens on those choices
            there = context.new_page()
            address, _, fragment = page.evaluate(hrefs)[0].partition("#")
            there.goto((series_site / address).resolve().as_uri() + "#" + fragment)
            wait_until(there, "document.documentElement.dataset.ready")
            selection = there.evaluate("() => window.plate.selection()")
            assert {k: selection[k] for k in keys} == {k: moved[k] for k in keys}, name
    finally:
        context.close()
