"""End-to-end builds of the real plate and of the small fixture: files, claims, size, self-containment."""
import csv
import gzip
import html
import re
import shutil

import pytest

import content_edit
from generator.source import content
from generator.site import assembly, build
from generator.page.notation import num, seconds, sig
from spec_model import check_readout, expected

from conftest import CONTENT, FIXTURE, XIV4_MINI, spec_selection, copy_plate
from xiv4 import PLATE, xfigures

MAX_GZIP_BYTES = 230 * 1024


def text_of(page: str) -> str:
    """The page's visible prose as plain text, whitespace folded."""
    body = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", body)))


def test_build_writes_page_and_csv(site):
    plate = content.load(CONTENT).plate
    written = sorted(["index.html", plate.data_file, "robots.txt"])
    assert sorted(p.name for p in site.iterdir()) == sorted([build.MARKER, *written])
    assert [line.split("  ", 1)[1] for line in (site / build.MARKER).read_text().splitlines()[1:]] == written
    page = (site / "index.html").read_text()
    assert f'href="{plate.data_file}" download>{plate.labels["download"]}<' in page


@pytest.fixture(scope="module")
def spec_site(tmp_path_factory):
    """The content being built, opened on MODEL.md's own selection (its [default] and workshop GPU pointed at the
    spec's presets, which the shipped content already is): where the page states the spec's claims."""
    sel = spec_selection(content.load(CONTENT).presets)
    root = tmp_path_factory.mktemp("spec")
    edit = content_edit.Edit(root / "content")
    copy_plate(CONTENT, edit.root)
    content_edit.set_default(edit, model=sel.model, batch=sel.batch, network=sel.network)
    content_edit.set_workshop(edit, gpu=sel.gpu)
    build.build(edit.root, root / "site")
    return root / "site"


def readout_of(page: str) -> str:
    return re.search(r'<div class="readout" id="readout" role="status"[^>]*>(.*?)</div>', page, re.S).group(1)


def test_page_states_the_claims_of_model_md(spec_site):
    words = text_of((spec_site / "index.html").read_text())
    assert "The lines meet at n* = 1 + 3·T·B/(b·P·u) for a batch of T tokens and a GPU computing P·u FLOP/s: ≈ 708 " \
           "for Llama 3 8B with a 4M-token batch on 400 Gb/s." in words
    assert "the time climbs from 0.321 s on two replicas towards 2bN/B = 0.642 s" in words
    assert "about 5,930 at 50 GB/s and about 659 over NVLink" in words
    assert "A 1M-token batch brings it in to ≈ 178, first passed at 256." in words
    assert "For Llama 3 8B that is 128.5 GB, which does not fit in the 80 GB of an H100 SXM" in words
    assert "reduce in FP32 (n* ≈ 354)" in words and "with both corrected, n* ≈ 756." in words
    assert "(+13.4% for Llama 3 8B)" in words and "which multiplies nothing, by 6.54%" in words  # about 13% and 6.5%
    assert "NCCL’s cost model charges a ring call 13,520 µs and a tree call 260 µs" in words
    readout = text_of(readout_of((spec_site / "index.html").read_text()))
    assert readout.lstrip().startswith("512 replicas are the most that still give each a whole sequence")
    assert "(half a sequence)" in readout and "0.500" not in readout
    assert "read as 80 GiB, it is 85.9 GB, and the verdict stands" in words
    assert "each replica spanned 128 GPUs (tensor parallel 8 × pipeline parallel 16): in its runs on 8,192-token sequences 8,192 GPUs held 64 " \
           "replicas and 16,384 held 128" in words
    referred = content.load(CONTENT).plate.plates  # the prose names the plates of plate.md's [plates]
    assert referred and all(f"plate {ref}" in words for ref in referred.values())


def test_the_readout_states_the_claims_of_model_md(spec_site):
    readout = readout_of((spec_site / "index.html").read_text())
    assert "n* ≈ 708 replicas; 1,024 is the first power of two past it" in readout
    assert "0.642 s" in readout and "4,096 tokens" in readout
    assert "128.5 GB" in readout and "do not fit on one H100 SXM GPU (80 GB" in readout


def test_page_states_the_defaults_numbers(site):
    """The prose's numbers for the content's default selection, from MODEL.md's formulas (spec_model.py)."""
    c = content.load(CONTENT)
    e = expected(c.presets, c.plate.default)
    m = c.presets.models[c.plate.default.model]
    link = c.presets.networks[c.plate.default.network].link_bytes_per_s(c.presets.gpu)
    words = text_of((site / "index.html").read_text())
    assert f"P·u FLOP/s: ≈ {num(e.meeting)} for {m.name} with a" in words
    assert (f", beyond the {num(e.replicas[-1])} replicas drawn." in words) == (not e.crossing)
    limit = 2 * c.presets.workshop.bytes_per_grad * m.params / link
    assert f"the time climbs from {seconds(e.allreduce_s[2])} on two replicas towards 2bN/B = {seconds(limit)}" in words
    assert f"For {m.name} that is {sig(e.model_states_gb, 4)} GB, which" in words
    fits = "fits in" if e.model_states_gb <= e.gpu_memory_gb else "does not fit in"
    assert f"{fits} the {num(e.gpu_memory_gb)} GB of an" in words


def test_page_has_plate_header_terms_takeaway_and_sources(site):
    page = (site / "index.html").read_text()
    words = text_of(page)
    c = content.load(CONTENT)
    p = c.plate
    assert f"Vol. {p.volume} · {p.volume_title}" in words and f"Plate {p.plate} of {p.plates_in_volume}" in words
    assert f"<h1>{html.escape(p.title, quote=False)}</h1>" in page
    assert words.count(f"Plate {p.plate} of {p.plates_in_volume}") == 2  # in the header and at the foot
    for term in c.terms.values():
        assert f"<dt>{html.escape(term.name, quote=False)}</dt>" in page
    for source in c.sources.values():
        assert f'href="{html.escape(source.url)}"' in page
    assert p.takeaway in words
    prose = p.before_figures.text + p.after_figures.text
    headings = re.findall(r"(?m)^## (.+)$", prose)
    assert headings and all(h in words for h in headings)


def test_default_readout_is_in_the_page(site):
    """The readout of the default selection, one paragraph per question, its numbers from MODEL.md's formulas."""
    c = content.load(CONTENT)
    readout = readout_of((site / "index.html").read_text())
    assert readout.count("<p data-readout=") == 3  # one paragraph per question: hiding, cost, memory
    check_readout(text_of(readout), expected(c.presets, c.plate.default), c.presets)


def test_page_is_self_contained(site):
    page = (site / "index.html").read_text()
    assert not re.search(r'<(script|link|img|iframe)\b[^>]*\b(src|href)=', page)
    assert "@import" not in page and "url(http" not in page
    assert "cdn.jsdelivr" not in page


def test_page_fits_the_size_budget(site):
    size = len(gzip.compress((site / "index.html").read_bytes(), 9))
    assert size <= MAX_GZIP_BYTES, f"index.html is {size / 1024:.1f} KB gzip, budget 230 KB"


def test_csv_has_the_agreed_columns(site):
    with open(site / content.load(CONTENT).plate.data_file, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["model", "batch", "network", "replicas", "gpus_per_replica", "params", "global_batch_tokens",
                             "link_gbytes_per_s", "compute_s", "allreduce_s", "step_s", "efficiency",
                             "tokens_per_replica", "sequences_per_replica", "model_states_gb", "fits_in_memory"]
    # models × batches × networks × replicas under the workshop: no file grows with the product of the options
    c = content.load(CONTENT)
    # 1, 2, 4, … while a model's replicas, on its published layout (one GPU without one), stay within max_replicas GPUs
    gpus = {i: c.presets.layouts[m.layout].gpus if m.layout else 1 for i, m in c.presets.models.items()}
    replicas = {i: (c.presets.workshop.max_replicas // g).bit_length() for i, g in gpus.items()}
    assert len(rows) == sum(replicas.values()) * len(c.presets.batches) * len(c.presets.networks)
    for m, g in gpus.items():
        assert {float(r["gpus_per_replica"]) for r in rows if r["model"] == m} == {g}
    assert {r["model"] for r in rows} == set(c.presets.models) and {r["batch"] for r in rows} == set(c.presets.batches)


def test_fixture_content_builds(mini_site):
    page = (mini_site / "index.html").read_text()
    words = text_of(page)
    c = content.load(FIXTURE)
    model = c.module.model_of(c)
    slow, fast = model.facts("slow"), model.facts("fast")  # the engine's plate: its prose's numbers are these
    assert c.plate.title in page and "Vol. IX · Fixtures" in words
    assert f"fastest on {num(slow['best_workers'])} workers over the slow link" in words
    assert f"On the fast link it is fastest on {num(fast['best_workers'])} workers" in words
    rows = list(csv.DictReader(open(mini_site / c.plate.data_file)))
    assert len(rows) == len(c.presets["links"]) * len(slow["workers"])  # links × worker counts


def test_build_replaces_the_previous_site_it_wrote(tmp_path):
    out = tmp_path / "site"
    build.write({"index.html": "old", "gone.txt": "a file the previous build wrote"}, out)
    build.build(FIXTURE, out)
    assert not (out / "gone.txt").exists() and content.load(FIXTURE).plate.title in (out / "index.html").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_kept_memo_redraws_figures_and_csv_only_when_presets_or_default_change(tmp_path, monkeypatch):
    """`plate serve` keeps a memo between rebuilds: a prose edit reuses the figures and the CSV, a preset edit
    makes them again; either way the site equals a build without a memo."""
    import shutil
    from generator.plate import charts
    content_dir = tmp_path / "content"
    shutil.copytree(XIV4_MINI, content_dir)
    drawn = []
    made = PLATE.figures
    monkeypatch.setattr(PLATE, "figures", lambda *a, **k: drawn.append(1) or made(*a, **k))
    memo: dict = {}
    assembly.gather(content_dir, memo=memo)  # the first build fills the memo
    plate_md = content_dir / "plate.md"
    plate_md.write_text(plate_md.read_text() + "\nOne more sentence of prose.\n")
    second = assembly.gather(content_dir, memo=memo)
    assert len(drawn) == 1 and "One more sentence of prose." in second["index.html"]
    assert second == assembly.gather(content_dir)  # the same site as a build that keeps nothing
    presets = content_dir / "presets.toml"
    presets.write_text(presets.read_text().replace("max_replicas = 64", "max_replicas = 128"))
    third = assembly.gather(content_dir, memo=memo)
    assert len(drawn) == 3 and third == assembly.gather(content_dir) and third != second


# --- what a build says: the steps it made anew, a long one still running, a warning once --------------------------

def test_a_first_build_lists_the_steps_it_made_anew_and_a_later_one_none(tmp_path, monkeypatch, capsys):
    from generator.commands import cli
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(assembly, "STEP_SAID_S", 0)  # every step that made something, however fast this machine is
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "site")]) == 0
    first = capsys.readouterr().out.splitlines()
    assert first[0].startswith(f"plate: built {tmp_path / 'site'}/")
    steps = [line for line in first[1:] if line.endswith("(made anew, now cached)")]
    name = FIXTURE.name
    for what in ("the figures drawn", "the page's Vega runtime made", "the page made"):
        assert any(re.fullmatch(rf"plate: {name}: {what} in \d+\.\d s \(made anew, now cached\)", s) for s in steps), \
            (what, first)
    assert cli.main(["build", "--content", str(FIXTURE), "--out", str(tmp_path / "site")]) == 0
    again = capsys.readouterr().out.splitlines()
    assert len(again) == 1 and again[0].startswith("plate: built"), again  # everything cached: no step made


def test_a_step_still_making_something_says_so(monkeypatch):
    from generator.site import cache
    said = []
    monkeypatch.setattr(assembly, "say", said.append)
    monkeypatch.setattr(assembly, "STILL_EVERY_S", 0.05)
    import time
    with assembly.step("a slow step"):
        time.sleep(0.3)  # nothing made: nothing said
    assert said == []
    with assembly.step("a slow step"):
        cache.Cache(None).kept("txt", (), lambda: time.sleep(0.3) or "made")
    assert said and all(re.fullmatch(r"plate: a slow step: still at it \(\d+ s\)", line) for line in said), said


def test_a_series_asks_for_node_s_packages_once_and_warns_once(tmp_path, monkeypatch, capsys):
    from conftest import SERIES
    from generator.page import runtime
    from generator.commands import cli
    monkeypatch.setenv("PLATE_CACHE", str(tmp_path / "cache"))
    asked = []

    def toolchain(cache, say=None):
        asked.append(cache)
        raise runtime.Unavailable("npm could not install Vega's packages (offline, in this test)")
    monkeypatch.setattr(runtime, "toolchain", toolchain)
    assert cli.main(["build", "--content", str(SERIES), "--out", str(tmp_path / "site")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "vl-convert's larger Vega runtime" in line]
    assert len(asked) == 1 and len(warnings) == 1, (asked, warnings)
