"""The plate's words, written once (templates/page/words.js) and run by the build under node (generator/plate/texts.py):
their numbers are notation.py's formatting of facts.py's values; no sentence of them is written in Python or in
another page module too; the GPU's interconnect and the plates referred to come from the content."""
import re
import shutil
from pathlib import Path

import pytest

from generator.source import content
from generator.plate import charts, texts
from generator.page import render
from xiv4 import Selection
from generator.source.schema import ContentError
from generator.page.notation import gigabytes, num, percent, seconds

from conftest import CONTENT, ROOT, copy_plate
import content_edit
from xiv4 import PAGE, PLATE, custom, facts, model, rows_of, xpage, xwords

WORDS = PAGE.parent / "plate" / "page_words.py"  # the plate's words, which the page runs compiled


@pytest.fixture(scope="module")
def shipped():
    c = content.load(CONTENT)
    return c, facts.Atlas(c.presets)


def expected_numbers(f: facts.Facts, rows: dict | None = None) -> dict[str, list[str]]:
    """What each text must say of one selection's facts, each number formatted by notation.py (rows: rows_of(f),
    when the caller has them)."""
    rows = rows_of(f) if rows is None else rows
    first, last = f.points[0], f.points[-1]
    hiding, cost = [f"n* ≈ {num(f.continuous_crossing)}"], []
    if f.crossing_replicas is None:
        hiding.append(f"all the way to {num(f.max_replicas)} replicas")
        cost.append(f"{seconds(last.step_s)} on {num(last.replicas)} replicas, where communication takes "
                    f"{seconds(last.comm_s)}; efficiency still {percent(last.efficiency)}.")
    else:
        at = f.at(f.crossing_replicas)
        past = f"{num(f.crossing_replicas)} is the first power of two past it, where "
        if f.sharding_stage > 0 and f.backward_only:  # pass by pass: each share against its own pass
            forward = f.forward_comm_s
            gather = "the forward all-gather" if f.sharding_stage == 3 else "the all-gather of the updated weights"
            hiding.append(f"{past}its backward-pass share takes {seconds(at.comm_s - forward)} against "
                          f"{seconds(at.compute_s * 2 / 3)} of backward pass, and {gather} "
                          f"{seconds(forward)} against {seconds(at.compute_s / 3)} of forward pass.")
        else:
            window = at.compute_s * 2 / 3 if f.backward_only else at.compute_s
            hiding.append(f"{past}it takes {seconds(at.comm_s)} against {seconds(window)}")
        cost += [f"waits {seconds(at.exposed_s)} for communication", f"efficiency {percent(at.efficiency)},",
                 f"processes {num(at.tokens_per_replica)} tokens per step",
                 f"on {num(last.replicas)} replicas a step takes {seconds(last.step_s)}, efficiency "
                 f"{percent(last.efficiency)}."]
        if f.backward_only:  # the readout's wait names its bound, and the buckets' longer one (Figure 3)
            cost.append(f"with perfect overlap within each pass ({seconds(f.timeline_tail_s)} with DDP's buckets, "
                        f"Figure 3)")
    if f.hypothetical_from is not None:
        hiding.append(f"{f.gpu.interconnect} joins at most {num(f.gpu.nvlink_domain)} {f.gpu.name} GPUs")
    memory = [f"one {f.gpu.name} GPU ({num(f.gpu_memory_gb)} GB)"]
    memory.append(f"Model states: {gigabytes(first.states_gb, 4)} per GPU" if f.sharding_stage == 0 else
                  f"from {gigabytes(first.states_gb, 4)} on one replica to {gigabytes(last.states_gb, 4)} on "
                  f"{num(last.replicas)}")
    line = [r["comm_s"] for r in rows["grid"]]  # Figure 1's communication line, as drawn
    drawn = [f"takes {seconds(line[1])} on 2 replicas and {seconds(line[-1])} on {num(last.replicas)}"] \
        if len(line) > 1 else []
    return {"hiding": hiding, "cost": cost, "memory": memory,
            "fig-time": [f"from {seconds(first.compute_s)} on one replica to {seconds(last.compute_s)} on "
                         f"{num(last.replicas)}"] + drawn,
            "fig-memory": [f"one {f.gpu.name}'s memory, {num(f.gpu_memory_gb)} GB."]}


def expected_tables(f: facts.Facts, rows: dict | None = None) -> dict[str, list[list[str]]]:
    """The number tables of one selection, each cell notation.py's formatting of facts.py's value (rows: rows_of(f),
    when the caller has them)."""
    rows = rows_of(f) if rows is None else rows
    crossed = [num(p.replicas) + (" (crossed)" if p.replicas == f.crossing_replicas else "") for p in f.points]
    c = f.cluster
    line = [r["comm_s"] for r in rows["grid"]]  # the table shows the numbers of Figure 1's line
    # beyond the NVLink domain (Network = NVLink) the real cluster is not priced
    priced = lambda value, write: "not priced" if value is None else write(value)  # noqa: E731
    return {
        "fig-time": [[n, seconds(p.compute_s), seconds(line[r]), priced(c["comm_s"][r], seconds)]
                     for r, (n, p) in enumerate(zip(crossed, f.points))],
        "fig-efficiency": [[n, num(p.tokens_per_replica), percent(p.efficiency), priced(c["efficiency"][r], percent)]
                           for r, (n, p) in enumerate(zip(crossed, f.points))],
        "fig-memory": [[num(p.replicas), gigabytes(p.states_gb), "yes" if p.fits else "no"] for p in f.points],
    }


def expected_titles(f: facts.Facts) -> dict[str, str]:
    """What each figure's title must say of one selection's facts: its point, each number formatted by notation.py."""
    last = f.points[-1]
    if f.crossing_replicas is None:
        time = f"stays hidden behind {'the backward pass' if f.backward_only else 'compute'} up to " \
               f"{num(last.replicas)} replicas"
    else:
        time = f"stops hiding behind {'the backward pass' if f.backward_only else 'compute'} at n* ≈ " \
               f"{num(f.continuous_crossing)} replicas"
    if f.crossing_replicas is None or last.efficiency >= f.points[0].efficiency:
        efficiency = f"Scaling efficiency stays at {percent(last.efficiency)} up to {num(last.replicas)} replicas"
    else:
        efficiency = f"Scaling efficiency falls to {percent(f.at(f.crossing_replicas).efficiency)} at " \
                     f"{num(f.crossing_replicas)} replicas and {percent(last.efficiency)} at {num(last.replicas)}"
    n = f.timeline_replicas
    on = "On one replica" if n == 1 else f"On {num(n)} replicas"
    if f.at(n).comm_s == 0:
        timeline = f"{on} there is nothing to reduce"
    elif f.timeline_tail_s <= 0:
        timeline = f"{on}, communication ends within compute"
    else:
        timeline = f"{on}, communication outlasts compute by {seconds(f.timeline_tail_s)}"
    gpu = f"one {f.gpu.name}'s {num(f.gpu_memory_gb)} GB"
    fit = f.smallest_fitting_on_grid
    memory = (f"stay above {gpu} up to {num(last.replicas)} replicas" if fit is None else
              f"fit in {gpu} from {'one replica' if fit == 1 else num(fit) + ' replicas'} on")
    return {"fig-time": time, "fig-efficiency": efficiency, "fig-timeline": timeline, "fig-memory": memory}


def check_words(words: dict, f: facts.Facts, label, rows: dict | None = None) -> None:
    """One selection's words against its facts: every number named, every table cell, each figure's point (rows:
    rows_of(f), when the caller has them)."""
    rows = rows_of(f) if rows is None else rows
    for fid, text in expected_titles(f).items():
        assert text in words["title"][fid], (label, fid, text, words["title"][fid])
    want = expected_numbers(f, rows)
    for i, part in enumerate(("hiding", "cost", "memory")):
        for text in want[part]:
            assert text in words["readout"][i], (label, part, text, words["readout"][i])
    for fid in ("fig-time", "fig-memory"):
        for text in want[fid]:
            assert text in words["describe"][fid], (label, fid, text)
    for fid, table in expected_tables(f, rows).items():
        assert words["tables"][fid] == table, (label, fid)
    zero = f.sharding_stage > 0 and f.backward_only
    assert (f"ZeRO-{f.sharding_stage}'s traffic at the backward pass's scale" in words["describe"]["fig-time"]) == \
        (zero and len(f.points) > 1), label
    for fid in ("fig-time", "fig-efficiency"):  # the real cluster does not follow the Sharding control: said so
        drawn = f.cluster_reach >= 2  # the line is drawn: two replicas inside a domain of the GPU's own link, or NICs
        assert ("The real cluster is plain DDP" in words["describe"][fid]) == \
            (f.sharding_stage > 0 and drawn and (fid != "fig-time" or len(f.points) > 1)), (label, fid)
    if f.backward_only and f.timeline_replicas > 1:  # Figure 3's buckets, likewise
        assert ("drawn in plain DDP's buckets" in words["describe"]["fig-timeline"]) == (f.sharding_stage > 0), \
            label
    p = f.at(f.timeline_replicas)
    assert words["tables"]["fig-timeline"][0] == ["Forward pass", seconds(0), seconds(p.compute_s / 3)], label
    timeline = words["describe"]["fig-timeline"]
    if p.comm_s > 0:  # ZeRO has no all-reduce; the timeline draws one micro-batch and says so when there are more
        assert ("all-reduce" in timeline.split("Below, ")[1].split(";")[0]) == (f.sharding_stage == 0), label
        assert ("draws the step as one micro-batch" in timeline) == (f.micro_batches > 1), label


def own_run(atlas, crosses: bool):
    """A reader's own run (model, batch and network their own) whose communication overtakes compute on the grid
    (crosses) or never does: the first of a sweep from the slowest link and smallest batch, or from the fastest link
    and largest batch, that the model takes; None if no run of the sweep is of that kind."""
    import itertools
    links, batches = (0.1, 1, 10, 100, 1000), (2 ** 14, 2 ** 17, 2 ** 20, 2 ** 23, 2 ** 26)
    if not crosses:
        links, batches = links[::-1], batches[::-1]
    for gbps, tokens, params in itertools.product(links, batches, (7e9, 7e10, 1e9)):
        values = {"params": int(params), "tokens": tokens, "gbps": gbps, "mfu": 0.7 if crosses else 0.2}
        own = custom.own_facts(atlas, Selection("custom", "custom", "custom"), values)
        if custom.model_problem(own) is None and (own.crossing_replicas is not None) == crosses:
            return own
    return None


def test_every_selections_words_say_the_facts_numbers(shipped):
    """A covering set of preset selections (conftest.covered: every two choices of any two controls, and 300 more at
    random), and random own runs: the readout, descriptions and tables the words write quote facts.py's values as
    notation.py formats them. Both kinds of hiding and cost paragraph are checked: when the content's selections
    and the random runs are all of one kind (every one crosses under another default, say), a reader's own run of
    the other kind is made."""
    import random
    from conftest import covered
    c, atlas = shipped
    fs = [atlas.facts(s) for s in covered(atlas, 300)]
    rng = random.Random(7)
    for _ in range(40):
        values = {"params": int(10 ** rng.uniform(8, 12.5)), "tokens": int(2 ** rng.uniform(14, 26)),
                  "gbps": round(10 ** rng.uniform(0, 3), 2), "mfu": rng.randrange(20, 71) / 100}
        own = custom.own_facts(atlas, Selection("custom", "custom", "custom"), values)
        if custom.model_problem(own) is None:
            fs.append(own)
    for crosses in (True, False):
        if not any((f.crossing_replicas is not None) == crosses for f in fs):
            fs += [f for f in [own_run(atlas, crosses)] if f is not None]
    crossed = sum(f.crossing_replicas is not None for f in fs)
    assert 0 < crossed < len(fs)  # both kinds of hiding and cost paragraph are checked
    p = atlas.presets  # NVLink past its domain wherever the content has a domain that ends on the grid
    past = any(n.nvlink for n in p.networks.values()) and \
        any(g.nvlink_domain is not None and g.nvlink_domain < p.workshop.max_replicas for g in p.gpus.values())
    assert any(f.hypothetical_from for f in fs) == past and any(f.sharding_stage for f in fs)
    datas = [xwords.facts_data(f) for f in fs]  # each selection's page facts made once, for its words and its rows
    for f, data, words in zip(fs, datas, xpage.words_of(datas, c.plate.plates)):
        check_words(words, f, xpage.selection_key(f.selection), PLATE.page_rows.datasets(texts.plain(data)))


def test_a_wrong_number_in_a_sentence_fails_the_check(shipped):
    """The check above can fail: the default's words with one time changed."""
    c, atlas = shipped
    f = atlas.facts(c.plate.default)
    words = xwords.of(f, c.plate.plates)
    check_words(words, f, "as written")
    at = f.at(f.crossing_replicas or f.max_replicas)
    wrong = {**words, "readout": [t.replace(seconds(at.comm_s), seconds(at.comm_s * 1.1)) for t in words["readout"]]}
    assert wrong != words
    with pytest.raises(AssertionError):
        check_words(wrong, f, "planted")


def test_a_wrong_number_in_a_title_fails_the_check(shipped):
    """A figure's title is held to the selection's numbers: the default's, with n* one off, fails."""
    c, atlas = shipped
    f = atlas.facts(c.plate.default)
    words = xwords.of(f, c.plate.plates)
    star = num(f.continuous_crossing)
    assert star in words["title"]["fig-time"]
    wrong = {**words, "title": {**words["title"],
                                "fig-time": words["title"]["fig-time"].replace(star, num(f.continuous_crossing + 1))}}
    with pytest.raises(AssertionError):
        check_words(wrong, f, "planted")


def js_code(js: str) -> str:
    """A JavaScript file without its comments, which quote the words they explain."""
    js = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    return re.sub(r"^\s*//.*$|\s//.*$", "", js, flags=re.M)


def js_pieces(js: str) -> list[str]:
    """The text pieces of a JavaScript file's code: its string literals, template literals cut at each ${…}."""
    js = js_code(js)
    found = re.findall(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`', js)
    return [piece for plain, template in found
            for piece in re.split(r"\$\{(?:[^{}]|\{[^{}]*\})*\}", plain or template)]


def python_pieces(code: str) -> list[str]:
    """The text pieces of a Python file's code: its string constants and f-strings' text, docstrings left out."""
    import ast
    tree = ast.parse(code)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def literal_chunks(pieces: list[str]) -> set[str]:
    """The sentence pieces of the words: pieces of four words or more (shorter ones, "the backward pass" or " GB",
    are phrases, not sentences)."""
    return {p.strip(" .,;:()") for p in pieces if len(p.strip(" .,;:()").split()) >= 4}


def written_twice(words: str, others: dict[str, str], python: bool = True) -> list[tuple[str, str]]:
    """(file, piece) for each sentence piece of the words (a plate's Python words module, or a page/words.js when not
    python) that the code (not the comments) of another file holds: a Python file's string constants, a JavaScript
    file's code as written (its regular expressions may hold quotes)."""
    pieces = {name: "\n".join(python_pieces(text)) if name.endswith(".py") else js_code(text)
              for name, text in others.items()}
    own = python_pieces(words) if python else js_pieces(words)
    return sorted((name, chunk) for chunk in literal_chunks(own) for name, text in pieces.items() if chunk in text)


def test_no_sentence_of_the_words_is_written_in_python_or_another_page_module():
    """Every sentence piece of the words (page_words.py) appears nowhere else: not in generator/'s Python, not in the
    plate's other modules, not in a page module (before issue 19, render.py and plate.js each held a copy)."""
    words_py = WORDS.read_text(encoding="utf-8")
    assert len(literal_chunks(python_pieces(words_py))) > 50  # the readout, four descriptions and the timeline's table
    others = {p.name: p.read_text(encoding="utf-8") for p in [*sorted(ROOT.glob("generator/*.py")),
                                                              *sorted(ROOT.glob("generator/*/*.py")),
                                                              *sorted(WORDS.parent.glob("*.py")),
                                                              *sorted((ROOT / "templates" / "page").glob("*.js")),
                                                              *sorted(PAGE.glob("*.js"))]
              if p != WORDS}
    assert {"render.py", "texts.py", "__init__.py", "facts.py", "texts.js", "own.js"} <= set(others)  # the plate's hooks: __init__.py
    assert written_twice(words_py, others) == []


def test_a_sentence_copied_into_python_is_found():
    """The check above can fail: a sentence of the words copied into render.py is reported."""
    words_py = WORDS.read_text(encoding="utf-8")
    render_py = (ROOT / "generator" / "page" / "render.py").read_text(encoding="utf-8")
    planted = render_py + '\nX = f"{noun} stays hidden behind {against} all the way to {n} replicas"\n'
    assert written_twice(words_py, {"render.py": render_py}) == []
    assert ("render.py", "all the way to") in written_twice(words_py, {"render.py": planted})


def _memory_paragraph(c, plates):
    """The memory paragraph of the first preset selection whose states fit one GPU only when sharded (so it names
    sharding's plate)."""
    atlas = facts.Atlas(c.presets)
    for sel in atlas.selections:
        f = atlas.facts(sel)
        x = f.inputs
        if f.sharding_stage == 0 and not f.points[0].fits and any(
                model.smallest_fitting_replicas(x.params, k, x.memory_bytes, x.bytes_per_grad) > 0 for k in (1, 2, 3)):
            text = xwords.of(f, plates)["readout"][2]
            assert "Sharded with" in text
            return text
    pytest.skip("no preset selection of the content needs sharding to fit")


def test_the_readout_names_the_plate_the_content_refers_to(tmp_path):
    """plate.md's [plates] names the plate on sharding: the readout says it, and says none when none is named."""
    root = tmp_path / "content"
    copy_plate(CONTENT, root)
    path = root / "plate.md"
    text = path.read_text(encoding="utf-8")
    assert "[plates]" in text
    path.write_text(re.sub(r'(?m)^sharding = "[^"]*"$', 'sharding = "XIV.9"', text, count=1), encoding="utf-8")
    edited = content.load(root)
    assert edited.plate.plates["sharding"] == "XIV.9"
    assert _memory_paragraph(edited, edited.plate.plates).endswith(" replicas (plate XIV.9).")
    # No [plates] at all (and the prose no longer naming them): the readout names no plate.
    front = re.sub(r"(?ms)^\[plates\]\n.*?(?=^---$)", "", path.read_text(encoding="utf-8"), count=1)
    front = re.sub(r"\(plate \{\{ plates\.\w+ \}\}\)", "(a later plate)", front)
    path.write_text(front, encoding="utf-8")
    bare = content.load(root)
    assert bare.plate.plates == {}
    paragraph = _memory_paragraph(bare, bare.plate.plates)
    assert "(plate" not in paragraph and paragraph.endswith(" replicas.")


def test_a_plate_name_that_is_not_text_is_refused_with_its_line(tmp_path):
    root = tmp_path / "content"
    copy_plate(CONTENT, root)
    path = root / "plate.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r'(?m)^sharding = "[^"]*"$', "sharding = 5", text, count=1), encoding="utf-8")
    line = next(i for i, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ln == "sharding = 5")
    with pytest.raises(ContentError) as error:
        content.load(root)
    assert f"content/plate.md, line {line}: [plates]: sharding must be non-empty text, got 5" in str(error.value)


def with_plates(root, **named) -> dict[str, int]:
    """A copy of the content whose [plates] also names these ({subject: plate id}); {subject: its line}."""
    path = root / "plate.md"
    text = path.read_text(encoding="utf-8")
    rows = "".join(f'\n{subject} = "{ident}"' for subject, ident in named.items())
    if re.search(r"(?m)^\[plates\]$", text):
        text = re.sub(r"(?m)^\[plates\]$", "[plates]" + rows, text, count=1)
    else:  # before the front matter's closing fence (the first "---" line after line 1)
        text = text.replace("\n---\n", f"\n[plates]{rows}\n---\n", 1)
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    return {subject: lines.index(f'{subject} = "{ident}"') + 1 for subject, ident in named.items()}


@pytest.mark.parametrize("beyond", [lambda n: n + 1, lambda n: 99, lambda n: 0], ids=["one past", "99", "0"])
def test_a_plate_of_this_volume_beyond_its_count_is_a_mistake_at_its_line(tmp_path, beyond):
    """[plates] naming a plate of the plate's own volume that the volume does not have (XIV.99 of 11 plates) is a
    mistake at its line; another volume's plates are not listed here, so any number of theirs stands."""
    root = tmp_path / "content"
    copy_plate(CONTENT, root)
    plate = content.load(root).plate
    wrong = f"{plate.volume}.{beyond(plate.plates_in_volume)}"
    lines = with_plates(root, future=wrong, elsewhere="I.99" if plate.volume != "I" else "II.99")
    with pytest.raises(ContentError) as error:
        content.load(root)
    assert error.value.problems == [
        f'content/plate.md, line {lines["future"]}: [plates]: future "{wrong}" is not a plate of this volume: Vol. '
        f"{plate.volume} has plates {plate.volume}.1 to {plate.volume}.{plate.plates_in_volume} (plates_in_volume "
        f"{plate.plates_in_volume})"]


def test_a_plate_named_otherwise_than_by_its_id_is_a_mistake_at_its_line(tmp_path):
    root = tmp_path / "content"
    copy_plate(CONTENT, root)
    plate = content.load(root).plate
    lines = with_plates(root, later="the next one", last=f"{plate.volume}.{plate.plates_in_volume}")
    with pytest.raises(ContentError) as error:
        content.load(root)
    assert error.value.problems == [f'content/plate.md, line {lines["later"]}: [plates]: later must name a plate by '
                                    f'its volume\'s id and its number, as in {plate.volume}.1, got "the next one"']


def test_another_gpus_interconnect_names_its_own_link(tmp_path):
    """A GPU of another vendor (MI300X over Infinity Fabric, eight to a platform) gets its own link's name in the
    readout and the descriptions, and no word of NVIDIA's; the shipped GPUs keep NVLink."""
    edit = content_edit.Edit(tmp_path / "content")
    copy_plate(CONTENT, edit.root)
    gpu = content_edit.add(edit, "gpus", "mi300x", {**content_edit.MI300X, "nvlink_domain": 8,
                                                    "nvlink_domain_name": "an MI300X platform"})
    c = content.load(edit.root)
    assert c.presets.gpus[gpu].interconnect == "Infinity Fabric"
    # A GPU written without an interconnect gets NVLink; one the content already gave another (its own MI300X) keeps it.
    written = content_edit._tables(edit.root)["gpus"]
    assert {i: g.interconnect for i, g in c.presets.gpus.items() if i != gpu} == \
        {i: written[i].get("interconnect", "NVLink") for i in c.presets.gpus if i != gpu}
    name = c.presets.gpus[gpu].name  # "MI300X", or a free name where the content already has one
    atlas = facts.Atlas(c.presets)
    network = next(i for i, n in c.presets.networks.items() if n.nvlink)
    d = c.plate.default
    f = atlas.facts(Selection(d.model, d.batch, network, gpu=gpu))
    assert f.hypothetical_from == 8
    words = xwords.of(f, c.plate.plates)
    said = " ".join([*words["readout"], *words["describe"].values()])
    assert f"Infinity Fabric joins at most 8 {name} GPUs (an MI300X platform): beyond that the figures shade the " \
           f"Infinity Fabric ring as hypothetical." in said
    assert f"the most one {name} Infinity Fabric domain holds: there the Infinity Fabric ring is hypothetical" in said
    assert "NVLink" not in said and "NVIDIA" not in said
    shipped = atlas.facts(Selection(d.model, d.batch, network, gpu=c.presets.workshop.gpu))
    if shipped.hypothetical_from is not None:
        assert "NVLink joins at most" in xwords.of(shipped, c.plate.plates)["readout"][0]


def test_an_empty_interconnect_is_refused_with_its_line(tmp_path):
    edit = content_edit.Edit(tmp_path / "content")
    copy_plate(CONTENT, edit.root)
    gpu = content_edit.add(edit, "gpus", "mi300x", {**content_edit.MI300X, "interconnect": " "})
    written = content_edit._file_of(edit.root, "gpus")  # the series catalogue beside the copy, where the GPUs are
    text = written.read_text(encoding="utf-8")
    line = len(text.splitlines()) - text.splitlines()[::-1].index('interconnect = " "')
    with pytest.raises(ContentError) as error:
        content.load(edit.root)
    assert f'{written.name}, line {line}: gpu "{gpu}": interconnect must be non-empty text, got " "' \
        in str(error.value)


def test_a_warm_build_takes_the_words_from_the_cache(tmp_path, monkeypatch):
    """A plate whose words.js runs under node: its words are kept in the build cache by the scripts and facts they
    are made of; a second build does not run node for them, and an edit of words.js makes them anew."""
    from types import SimpleNamespace
    from generator.site import cache
    runs = []

    def run(job, sources):
        runs.append(1)
        return [{"said": f["n"], "by": sources["words.js"]} for f in job["facts"]]
    module = SimpleNamespace(facts_data=lambda f: {"n": f}, words_context=lambda facts, plates: {}, FIGURES=())
    sources = {"words.js": "export function words() {}"}
    monkeypatch.setattr(texts, "run", run)
    monkeypatch.setattr(texts, "sources", lambda module: sources)
    store = cache.Cache(tmp_path / "cache")
    monkeypatch.setattr(texts, "_MEMO", {})
    first = texts.words(module, [1], None, store)
    monkeypatch.setattr(texts, "_MEMO", {})
    again = texts.words(module, [1], None, store)
    assert first == again == [{"said": 1, "by": sources["words.js"]}] and len(runs) == 1
    sources = {"words.js": "export function words() { return 1; }"}
    monkeypatch.setattr(texts, "_MEMO", {})
    changed = texts.words(module, [1], None, store)
    assert len(runs) == 2 and changed != first


def test_node_failing_names_the_module(monkeypatch):
    broken = {**texts.sources(PLATE)}
    broken["words.js"] = broken["words.js"] + "\nthrow new Error('planted');\n"
    with pytest.raises(texts.TextsError, match=r"(?s)the plate\'s page/words\.js failed under node: .*planted"):
        texts.run({"facts": [], "context": xwords.context(8192), "figures": []}, broken)


def test_the_page_checker_reads_the_schemas_rules():
    """The free inputs' rules and messages the page carries are the schema's own (plus the slider's range)."""
    data = custom.page_data(*_atlas_and_default())
    from generator.source import schema
    for field, (_, _, kind) in custom.FIELDS.items():
        carried = data["fields"][field]["rules"]
        assert carried[:len(schema.rules(kind))] == [[list(t), say] for t, say in schema.rules(kind)], field
    assert data["fields"]["mfu"]["rules"][-1][1].endswith("the slider's range")
    assert data["got"] == custom.GOT and data["shape_rules"] == custom.SHAPE_RULES


def _atlas_and_default():
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    return atlas, atlas.complete(c.plate.default)


def test_the_words_module_is_page_python():
    """The words are Python the page runs compiled (the compiler's checker passes them), made of the facts alone:
    they import only the formatter and the model's formulas, and read no page state."""
    import ast
    from generator.page import compiler
    compiler._module_plan("plate.page_words", WORDS)  # CompileError at file:line otherwise
    tree = ast.parse(WORDS.read_text(encoding="utf-8"))
    imported = sorted(("." * node.level + (node.module or "")) if isinstance(node, ast.ImportFrom)
                      else node.names[0].name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))
    assert imported == ["generator.api", "math", "platelib.compute", "platelib.zero"]
    assert not {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & {"document", "window", "data"}


def test_the_words_memo_never_loses_what_it_is_asked_for(monkeypatch):
    """Past its bound (MEMO_MOST, lowered here to 3) the memo forgets its least recently used words, never those a
    call asks for: a call for more selections than it holds, mixing remembered and new ones, gets each its own."""
    from types import SimpleNamespace
    runs = []

    def run(job, sources):
        runs.append([f["n"] for f in job["facts"]])
        return [{"said": f["n"]} for f in job["facts"]]
    module = SimpleNamespace(facts_data=lambda f: {"n": f}, words_context=lambda facts, plates: {}, FIGURES=())
    monkeypatch.setattr(texts, "run", run)
    monkeypatch.setattr(texts, "sources", lambda module: {})
    monkeypatch.setattr(texts, "_MEMO", {})
    monkeypatch.setattr(texts, "MEMO_MOST", 3)
    assert texts.words(module, [1, 2]) == [{"said": 1}, {"said": 2}]
    asked = [2, 3, 4, 5, 6, 1, 2]  # 2 remembered, more than the memo holds, one asked twice
    assert texts.words(module, asked) == [{"said": n} for n in asked]
    assert runs == [[1, 2], [3, 4, 5, 6]] and len(texts._MEMO) == 3
    assert [texts.of(module, n) for n in (5, 6, 1)] == [{"said": n} for n in (5, 6, 1)]  # the last used are kept
    assert len(runs) == 2
    assert texts.of(module, 3) == {"said": 3} and runs[-1] == [3]  # an older one is made again
