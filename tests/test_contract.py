"""The contract of a plate module (docs/plates.md, "The contract"): the names it must declare, the defaults of the
others, and the checks the engine makes of a plate, each failing the build at the plate's file and line. Tested on
the engine's own plate (tests/fixtures/toy), broken in a copy in a temporary folder."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generator.source import checks, content
from generator.plate import plates, texts
from generator.site import build
from generator.source.schema import ContentError, Problems

from conftest import ROOT, TOY

DOCS = ROOT / "docs" / "plates.md"


def section(title: str) -> str:
    """The text of one section of docs/plates.md."""
    return DOCS.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def first_column(table_under: str) -> list[str]:
    """The names in the first column of the table under the ### heading table_under of "The contract"."""
    text = section("The contract").split(f"\n### {table_under}\n", 1)[1].split("\n### ", 1)[0]
    names = []
    for row in text.splitlines():
        if row.startswith("| `"):
            names += [re.match(r"\w+", name).group() for name in re.findall(r"`([^`]+)`", row.split("|")[1])]
    return names


def copy(tmp_path: Path) -> Path:
    """A copy of the engine's plate to break."""
    root = tmp_path / "toy"
    shutil.copytree(TOY, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def figure_vega(root: Path) -> dict:
    """The Vega spec of the plate's one figure, as the build compiles it."""
    c = content.load(root)
    from generator.site.cache import Cache
    return c.module.figures(c, c.module.model_of(c), Cache(None))[0].vega


def build_problems(root: Path, out: Path) -> list[str]:
    with pytest.raises(ContentError) as raised:
        build.build(root, out)
    return raised.value.problems


# --- the names ---------------------------------------------------------------------------------------------

def test_at_most_eight_names_are_required_and_the_docs_list_them():
    required = first_column("Required names")
    assert sorted(plates.REQUIRED) == sorted(n for n in required if n != "PAGE")
    assert len(required) <= 8 and "PAGE" in required


def test_every_optional_name_has_the_default_the_docs_state():
    assert sorted(first_column("Optional names and their defaults")) == sorted(plates.DEFAULTS)


def test_the_engine_s_plate_declares_only_required_names_and_page():
    module = plates.load(TOY / plates.PACKAGE)
    declared = {name for name in (*plates.REQUIRED, *plates.DEFAULTS, "PAGE") if name in vars(module)}
    assert declared == {*plates.REQUIRED, "PAGE"}
    assert not list((TOY / "page").glob("*.js")) and not (TOY / "plate").is_symlink()


def test_a_plate_that_declares_only_the_required_names_gets_each_default():
    c = content.load(TOY)
    module = c.module
    assert module.DEFAULT_SCHEMA == {"link": "text"} and module.DEFAULT_OPTIONAL == {}  # from Selection's fields
    assert module.check_content(Problems(TOY), TOY, "", c.plate, c.presets, {}, c.sources) is None
    assert module.check_model(module.model_of(c), TOY) is None
    assert module.PROSE_NAMES is None and module.SLOT_TABLES == module.SLOT_ROOTS == module.SLOT_CALLS == {}
    assert module.scenario_ids({"links": ["slow"]}) == {} and module.unused(c) == []
    assert module.select_choices(c) == {"link": list(c.presets["links"])}  # the page data's choices
    assert module.FIGURES == () and module.facts_data({"n": 1}) == {"n": 1} and module.words_context([], {}) == {}


def test_a_plate_without_a_dataclass_selection_must_declare_default_schema(tmp_path):
    root = copy(tmp_path)
    init = root / "plate" / "__init__.py"
    edit(init, "@dataclass(frozen=True)\nclass Selection:", "class Selection:")
    with pytest.raises(plates.ModuleError, match=rf"^toy/plate/__init__.py, line {line_of(init, 'class Selection')}: "
                                                 r"the plate module's Selection is not a dataclass.*DEFAULT_SCHEMA"):
        content.load(root)


@pytest.mark.parametrize("old, new, what", [
    ('"csv_rows": page_code.csv_rows}', '}', "no function for csv_rows"),
    ('"csv_rows": page_code.csv_rows}', '"csv_rows": page_code.csv_rows, "rows": page_code.datasets}',
     "roles it does not know: rows"),
    ('"csv_rows": page_code.csv_rows}', '"csv_rows": page_code.csv_rows, "own": None}', "no function for own"),
])
def test_a_page_lacking_a_role_or_with_one_it_does_not_know_is_one_line_at_page(tmp_path, old, new, what):
    root = copy(tmp_path)
    init = root / "plate" / "__init__.py"
    edit(init, old, new)
    with pytest.raises(plates.ModuleError) as raised:
        content.load(root)
    assert str(raised.value) == (f"toy/plate/__init__.py, line {line_of(init, 'PAGE = ')}: the plate module's PAGE "
                                 f"has {what} (its roles: {', '.join(plates.PAGE_ROLES)}; optional: "
                                 f"{', '.join(plates.PAGE_OPTIONAL)}; see docs/plates.md)")


@pytest.mark.parametrize("old, new, kind", [
    ('"csv_rows": page_code.csv_rows}', '"csv_rows": page_code.csv_rows},', "tuple"),
    ('PAGE = {', 'PAGE = None and {', "NoneType"),
])
def test_a_page_of_the_wrong_type_is_one_line_at_page(tmp_path, old, new, kind):
    """PAGE not a dict (a stray comma makes it a tuple) is the plate's mistake at PAGE, not an AttributeError."""
    root = copy(tmp_path)
    init = root / "plate" / "__init__.py"
    edit(init, old, new)
    with pytest.raises(plates.ModuleError) as raised:
        content.load(root)
    assert str(raised.value) == (f"toy/plate/__init__.py, line {line_of(init, 'PAGE = ')}: the plate module's hook "
                                 f"PAGE is {kind}, not a dict of functions by role (see docs/plates.md)")


def test_the_engine_s_plate_builds_its_page_from_its_python(tmp_path):
    c = content.load(TOY)
    build.build(TOY, tmp_path / "site")
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    f = texts.plain(c.module.PAGE["facts"]({"link": c.plate.default.link}, c.presets))
    assert c.module.PAGE["readout"](f, {})[0] in html
    assert (tmp_path / "site" / c.plate.data_file).read_text() == c.module.csv_text(c.module.model_of(c))


# --- the checks, each at file:line ---------------------------------------------------------------------------

def test_a_figure_whose_dataset_has_no_rows_at_the_default_fails_at_datasets(tmp_path):
    root = copy(tmp_path)
    code = root / "plate" / "page_code.py"
    edit(code, 'return {"curve": rows}', 'return {"curve": rows if f["link"]["overhead_s"] < 0.5 else []}')
    assert build_problems(root, tmp_path / "site") == [
        f"toy/plate/page_code.py, line {line_of(code, 'def datasets(')}: the figure 'fig-time' reads "
        f"{', '.join(d['name'] for d in figure_vega(root)['data'])}, and "
        f"datasets gives no rows for any of them at the default selection"]


@pytest.mark.parametrize("role, old, new", [
    ("describe", '        return ("The job', '        return "" if W is not None else ("The job'),
    ("table_rows", '    if figure_id == "fig-time":\n        for i', '    if figure_id == "fig-other":\n        for i'),
])
def test_a_figure_with_no_words_fails_at_the_function_that_gives_none(tmp_path, role, old, new):
    root = copy(tmp_path)
    code = root / "plate" / "page_code.py"
    edit(code, old, new)
    problems = build_problems(root, tmp_path / "site")
    assert len(problems) == 1
    assert problems[0].startswith(f"toy/plate/page_code.py, line {line_of(code, f'def {role}(')}: the figure "
                                  f"'fig-time' has no words: {role} gives ")


@pytest.mark.parametrize("new", ['    return ""', '    return "  "', '    return None'])
def test_a_figure_with_no_title_fails_at_title(tmp_path, new):
    """Every figure states its point above it: a title that gives no text for a figure is one line at `title`."""
    root = copy(tmp_path)
    code = root / "plate" / "page_code.py"
    edit(code, '    return "Least on " + num(f["best_workers"]) + " workers"', new)
    problems = build_problems(root, tmp_path / "site")
    got = {'    return ""': "''", '    return "  "': "'  '", '    return None': "None"}[new]
    assert problems == [f"toy/plate/page_code.py, line {line_of(code, 'def title(')}: the figure 'fig-time' has no "
                        f"title: title gives {got} for it at the default selection (the sentence above the figure "
                        f"that says what it shows)"]


def test_the_title_is_above_its_figure_in_the_page_as_built(tmp_path):
    """The page as built shows each figure's title, the toy's own words for its default, above its SVG."""
    c = content.load(TOY)
    build.build(TOY, tmp_path / "site")
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    f = texts.plain(c.module.PAGE["facts"]({"link": c.plate.default.link}, c.presets))
    title = c.module.PAGE["title"](f, "fig-time", {})
    assert f'data-title="fig-time">{title}</p>' in html
    assert html.index(title) < html.index('<div class="chart"')


def test_a_control_whose_choices_change_nothing_fails_where_it_is_declared(tmp_path):
    """The plate's facts never read the control (a plate's mistake): every choice gives the default's facts."""
    root = copy(tmp_path)
    edit(root / "plate" / "page_code.py", 'link = presets["links"][selection["link"]]', 'link = presets["links"]["slow"]')
    edit(root / "plate" / "page_code.py", '"selection": {"link": selection["link"]}', '"selection": {"link": "slow"}')
    others = [link for link in content.load(root).presets["links"] if link != "slow"]
    init = root / "plate" / "__init__.py"
    problems = build_problems(root, tmp_path / "site")
    assert problems == [f"toy/plate/__init__.py, line {line_of(init, 'CONTROLS = ')}: the control 'link': no choice "
                        f"of it ({', '.join(others)}) changes anything in the facts or the figures' rows from the "
                        f"default's ('slow'), so the reader's choice would change nothing"]


def test_choices_of_equal_numbers_that_differ_by_name_pass(tmp_path):
    """An author's two links of the same figures (two names for one speed) are content, not a plate's mistake."""
    root = copy(tmp_path)
    presets = root / "presets.toml"
    presets.write_text(re.sub(r"overhead_s = .*", "overhead_s = 0.5", presets.read_text()))  # links only by name
    build.build(root, tmp_path / "site")


def test_a_control_one_of_whose_choices_changes_a_number_passes(tmp_path):
    root = copy(tmp_path)
    presets = root / "presets.toml"
    text = re.sub(r"overhead_s = .*", "overhead_s = 0.5", presets.read_text())
    presets.write_text(text.replace('name = "Slower link"\noverhead_s = 0.5', 'name = "Slower link"\noverhead_s = 1'))
    build.build(root, tmp_path / "site")  # the other choices give the default's numbers, but one does not


def test_a_prose_slot_that_names_no_fact_fails_at_its_line(tmp_path):
    root = copy(tmp_path)
    edit(root / "plate.md", "{{ default.best_workers | num }}", "{{ default.best_worker | num }}")
    problems = build_problems(root, tmp_path / "site")
    line = line_of(root / "plate.md", "default.best_worker ")
    assert len(problems) == 1 and problems[0].startswith(f"toy/plate.md, line {line}: undefined fact or name in "
                                                         f"prose: "), problems
    c = content.load(TOY)
    names = [*c.module.prose_names(c, c.module.model_of(c)), "cite", "plates"]  # PROSE_NAMES's default
    assert "'best_worker'" in problems[0] and problems[0].endswith(f"(prose can use {', '.join(names)})"), problems
    with pytest.raises(ContentError) as checked:  # `plate check` finds it too, at the same line
        checks.checked(root)
    assert checked.value.problems == problems


def test_a_page_function_that_raises_is_one_line_at_its_line(tmp_path):
    module = content.load(TOY).module
    code = TOY / "plate" / "page_code.py"
    with pytest.raises(plates.ModuleError) as raised:
        texts.page_call(module, "table_rows", {"workers": [1]}, "fig-time")
    assert str(raised.value) == (f"toy/plate/page_code.py, line {line_of(code, 'rows.append([num(f[')}: the plate "
                                 f"module's hook PAGE['table_rows'] raised KeyError: 'seconds'")
