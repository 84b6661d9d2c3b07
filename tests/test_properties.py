"""Property-based tests: the model's invariants, and the content pipeline under arbitrary author input."""
from __future__ import annotations

import functools
import math
import os
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from generator.source import checks, content, prose
from generator.site import assembly
from generator.source.schema import ContentError

from conftest import XIV4_MINI
from xiv4 import facts, model, xpresets, slots

# Fast enough for every run (the whole file takes seconds); derandomised in CI so a failure there repeats.
FAST = settings(max_examples=int(os.environ.get("PLATE_FUZZ_EXAMPLES", 60)), deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=6, deadline=None, derandomize=bool(os.environ.get("CI")),
               suppress_health_check=[HealthCheck.too_slow])

# --- the model -------------------------------------------------------------------------------------

params = st.integers(min_value=10**6, max_value=10**13)
batch_tokens = st.integers(min_value=2**8, max_value=2**28)
link_gbytes = st.floats(min_value=0.1, max_value=5000, allow_nan=False, allow_infinity=False)
workshops = st.builds(
    model.Workshop,
    gpu_peak_flops=st.floats(min_value=1e12, max_value=1e16),
    gpu_memory_bytes=st.floats(min_value=1e9, max_value=1e12),
    mfu=st.floats(min_value=0.01, max_value=1.0),
    bytes_per_grad=st.sampled_from([1, 2, 4]),
    seq_len=st.sampled_from([512, 2048, 8192, 131072]),
)
max_replicas = st.integers(min_value=1, max_value=16).map(lambda k: 2**k)


def grid_of(ns, ts, bs, w, top):
    return model.grid(ns, ts, [b * model.GB for b in bs], model.replica_counts(top), w)


@FAST
@given(st.lists(params, min_size=1, max_size=3), st.lists(batch_tokens, min_size=1, max_size=2),
       st.lists(link_gbytes, min_size=1, max_size=2), workshops, max_replicas)
def test_efficiency_is_in_0_1_and_step_is_the_larger_time(ns, ts, bs, w, top):
    g = grid_of(ns, ts, bs, w, top)
    assert np.all(g.efficiency > 0) and np.all(g.efficiency <= 1)
    np.testing.assert_array_equal(g.step_s, np.maximum(g.compute_s, g.allreduce_s))
    np.testing.assert_allclose(g.efficiency, g.compute_s / g.step_s)
    assert np.all(g.efficiency[..., 0] == 1)  # one replica has nothing to reduce


@FAST
@given(st.lists(params, min_size=1, max_size=3), st.lists(batch_tokens, min_size=1, max_size=2),
       st.lists(link_gbytes, min_size=1, max_size=2), workshops, max_replicas)
def test_compute_falls_and_allreduce_rises_with_replicas(ns, ts, bs, w, top):
    g = grid_of(ns, ts, bs, w, top)
    assert np.all(np.diff(g.compute_s, axis=-1) < 0)
    assert np.all(np.diff(g.allreduce_s, axis=-1) > 0)
    assert np.all(g.allreduce_s[..., 0] == 0)


@FAST
@given(params, batch_tokens, link_gbytes, workshops, max_replicas)
def test_allreduce_never_exceeds_its_limit(n_params, t, b, w, top):
    g = grid_of([n_params], [t], [b], w, top)
    limit = model.RING_FACTOR * w.bytes_per_grad * n_params / (b * model.GB)  # 2·2N/B for BF16 gradients
    assert np.all(g.allreduce_s <= limit * (1 + 1e-12))
    if w.bytes_per_grad == 2:
        assert np.all(g.allreduce_s <= 2 * 2 * n_params / (b * model.GB) * (1 + 1e-12))


@FAST
@given(st.lists(params, min_size=2, max_size=4, unique=True), batch_tokens, link_gbytes, workshops, max_replicas)
def test_crossing_does_not_depend_on_the_model_size(ns, t, b, w, top):
    replicas = model.replica_counts(top).astype(float)
    # allreduce/compute = 2(n−1)·b·P·u / (6·T·B) holds no N; skip exact ties, where rounding may go either way.
    ratio = 2 * (replicas - 1) * w.bytes_per_grad * w.gpu_peak_flops * w.mfu / (6 * t * b * model.GB)
    assume(np.all(np.abs(ratio - 1) > 1e-9))
    g = grid_of(ns, [t], [b], w, top)
    assert len(set(g.crossing_index[:, 0, 0].tolist())) == 1
    assert len(set(g.continuous_crossing[:, 0, 0].tolist())) == 1
    # and the per-replica batch where it happens, T/n*, depends on neither N nor T
    per_replica = (w.gpu_peak_flops * w.mfu * model.RING_FACTOR * w.bytes_per_grad
                   / (model.FLOPS_PER_PARAM_TOKEN * b * model.GB))  # n* = 1 + T / (P·u·2b / (6·B)) exactly
    assert math.isclose(g.continuous_crossing[0, 0, 0], 1 + t / per_replica, rel_tol=1e-12)


@FAST
@given(params, batch_tokens, link_gbytes, workshops, max_replicas,
       st.floats(min_value=0.125, max_value=8))
def test_units_are_consistent(n_params, t, b, w, top, k):
    g = grid_of([n_params], [t], [b], w, top)
    n = model.replica_counts(top).astype(float)
    # seconds = FLOPs / (FLOP/s), and bytes / (bytes/s): the formulas in SI units
    np.testing.assert_allclose(g.compute_s[0, 0, 0], 6 * n_params * t / (n * w.gpu_peak_flops * w.mfu), rtol=1e-12)
    np.testing.assert_allclose(g.allreduce_s[0, 0, 0], 2 * (n - 1) / n * w.bytes_per_grad * n_params / (b * 1e9),
                               rtol=1e-12)
    np.testing.assert_allclose(g.tokens_per_replica[0, 0, 0] * n, t, rtol=1e-12)
    np.testing.assert_allclose(g.sequences_per_replica * w.seq_len, g.tokens_per_replica, rtol=1e-12)
    # scaling an input scales each time as its units say
    faster = grid_of([n_params], [t], [b * k], w, top)
    np.testing.assert_allclose(faster.allreduce_s * k, g.allreduce_s, rtol=1e-12)
    np.testing.assert_allclose(faster.compute_s, g.compute_s, rtol=1e-12)
    bigger = grid_of([n_params], [t * k], [b], w, top)
    np.testing.assert_allclose(bigger.compute_s, g.compute_s * k, rtol=1e-12)
    np.testing.assert_allclose(bigger.continuous_crossing, 1 + (g.continuous_crossing - 1) * k, rtol=1e-12)


@FAST
@given(st.floats(min_value=0.01, max_value=5000), st.floats(min_value=1, max_value=5000),
       st.floats(min_value=1, max_value=1000), st.sampled_from([1, 2, 4]))
def test_presets_in_gb_and_tflops_become_si_units(link, tflops, memory_gb, grad_bytes):
    base = content.load(XIV4_MINI).presets
    from dataclasses import replace
    presets = replace(base, gpu=replace(base.gpu, peak_tflops=tflops, memory_gb=memory_gb),
                      workshop=replace(base.workshop, bytes_per_grad=grad_bytes),
                      networks={"x": xpresets.Network("x", "X", "x", link)})
    atlas = facts.Atlas(presets)
    f = atlas.facts(xpresets.Selection("tiny", "small", "x"))
    m = presets.models["tiny"]
    assert math.isclose(f.allreduce_limit_s, 2 * presets.workshop.bytes_per_grad * m.params / (link * 1e9),
                        rel_tol=1e-12)
    assert math.isclose(f.at(1).compute_s, 6 * m.params * f.batch.tokens / (tflops * 1e12 * presets.workshop.mfu),
                        rel_tol=1e-12)
    states = 2 + grad_bytes + 12  # BF16 weights, the gradients, FP32 master weights and Adam's two moments
    assert math.isclose(f.model_states_gb, states * m.params / 1e9, rel_tol=1e-12)
    assert f.fits_in_memory == (states * m.params <= memory_gb * 1e9)


# --- the presets' bounds, checked by their extremes -----------------------------------------------

ids = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
rates = st.floats(min_value=0.001, max_value=1_000_000)  # the schema's TFLOP/s, GB and GB/s
counts = st.integers(min_value=1, max_value=2**53)


@st.composite
def presets_within_bounds(draw):
    """Presets as the schema lets them through: any counts and rates within its bounds, NVLink networks too."""
    def table(make, low=1, high=4):
        keys = draw(st.lists(ids, min_size=low, max_size=high, unique=True))
        return {k: make(k) for k in keys}
    gpus = table(lambda k: xpresets.Gpu(k, k, draw(rates), draw(rates), draw(rates)), high=3)
    models = table(lambda k: xpresets.Model(k, k, draw(counts), 0, 0, 0, 0))
    batches = table(lambda k: xpresets.Batch(k, k, draw(counts)))
    networks = table(lambda k: xpresets.Network(k, k, k, draw(rates), nvlink=draw(st.booleans())), high=3)
    gpu = next(iter(gpus))
    workshop = xpresets.WorkshopSettings(gpu, draw(st.floats(min_value=0.001, max_value=1)),
                                        draw(st.sampled_from([1, 2, 4])),
                                        draw(counts), 2 ** draw(st.integers(min_value=0, max_value=12)))
    return xpresets.Presets(workshop, gpus[gpu], models, batches, networks, gpus)


@FAST
@given(presets_within_bounds())
def test_the_extremes_bound_every_selection(p):
    """What slots.check_model reads off facts.extremes (finite or not, smallest and largest values, the longest step
    and the model, batch and network that take it) is what the product of every preset and option gives."""
    full, ends = facts.evaluate(p), facts.extremes(p)
    few = facts.evaluate(p, ends)
    for name in ("compute_s", "allreduce_s", "comm_s", "step_s", "efficiency", "tokens_per_replica",
                 "states_bytes", "continuous_crossing"):
        a, b = getattr(full, name), getattr(few, name)
        assert np.isfinite(a).all() == np.isfinite(b).all(), name
        if np.isfinite(a).all():
            np.testing.assert_allclose([b.min(), b.max()], [a.min(), a.max()], rtol=1e-12, err_msg=name)
    if np.isfinite(full.step_s).all():
        worst = np.unravel_index(np.argmax(few.step_s), few.step_s.shape)
        named = [list(getattr(p, t)).index(ends[k][i])
                 for t, k, i in zip(("models", "batches", "networks"), ("model", "batch", "network"), worst)]
        np.testing.assert_allclose(full.step_s[tuple(named)].max(), full.step_s.max(), rtol=1e-12)


# --- the content pipeline ----------------------------------------------------------------------------

def toml_string(text: str) -> str:
    """text as a TOML basic string."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value) -> str:
    """Any of the values below as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


texts = st.text(max_size=80)
values = st.one_of(texts, st.integers(), st.integers(min_value=2**60, max_value=10**400), st.floats(), st.booleans(),
                   st.lists(st.one_of(texts, st.integers(), st.booleans()), max_size=3))
# Prose drawn to be rich in what Markdown, Jinja and HTML treat specially.
prose_alphabet = st.sampled_from(list("{}%#<>/\"'=-*_[]()!`&;:\n \t|") + ["{{", "}}", "{%", "%}", "<script>",
                                                                        "</script>", "onerror=", "[[figures]]",
                                                                        "default.", "cite(", "\u2028", "\x00"])
prose_texts = st.one_of(texts, st.lists(st.one_of(prose_alphabet, st.text(max_size=5)), max_size=30).map("".join))


def check(root: Path) -> None:
    """Load and render the prose in-process: either it works, or a ContentError names content files."""
    try:
        c = content.load(root, check_prose=checks.check_prose)
        atlas = facts.Atlas(c.presets)
        slots.check_model(atlas, c.root)
        parts = prose.prose_html(c, atlas)
    except ContentError as error:
        assert error.problems
        for problem in error.problems:
            assert problem.startswith("content/"), problem
        return
    for part in parts:
        assert_safe_html(part)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


def assert_safe_html(fragment: str) -> None:
    """Only the prose allow-list's tags, no handlers, no script addresses."""
    parser = _Tags()
    parser.feed(fragment)
    for tag, attrs in parser.tags:
        assert tag in prose.PROSE_TAGS, tag
        for name, value in attrs:
            assert name in {"href", "title", "rel", "class", "id", "aria-describedby", "aria-label"}, name
            if name == "href":
                assert (value or "").strip().lower().startswith(("http:", "https:", "mailto:", "#")) or \
                    ":" not in (value or "").split("/")[0], value


def with_fixture(edit) -> None:
    """Copy the fixture, let edit change it, and check it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "content"
        shutil.copytree(XIV4_MINI, root)
        edit(root)
        check(root)


@FAST
@given(prose_texts)
def test_arbitrary_prose_builds_or_is_a_content_error(text):
    def edit(root):
        path = root / "plate.md"
        path.write_text(path.read_text().replace("Replicas split the batch.", text), encoding="utf-8")
    with_fixture(edit)


@FAST
@given(st.dictionaries(st.sampled_from(["name", "definition", "matches", "other"]), values, max_size=4), texts)
def test_arbitrary_terms_build_or_are_a_content_error(fields, ident):
    def edit(root):
        body = "".join(f"{k} = {toml_value(v)}\n" for k, v in fields.items())
        (root / "terms.toml").write_text(f"[terms.{toml_string(ident)}]\n{body}", encoding="utf-8")
    with_fixture(edit)


@FAST
@given(st.dictionaries(st.sampled_from(["authors", "title", "venue", "url", "label", "note", "doi"]), values,
                       max_size=7), texts)
def test_arbitrary_sources_build_or_are_a_content_error(fields, ident):
    def edit(root):
        body = "".join(f"{k} = {toml_value(v)}\n" for k, v in fields.items())
        (root / "sources.toml").write_text(f"[sources.{toml_string(ident)}]\n{body}", encoding="utf-8")
        plate = root / "plate.md"
        plate.write_text(plate.read_text().replace('cite("only")', f"cite({toml_string(ident)})"), encoding="utf-8")
    with_fixture(edit)


@FAST
@given(st.sampled_from(["mfu", "bytes_per_grad", "seq_len", "max_replicas",
                        "peak_tflops", "memory_gb", "params", "layers", "tokens", "link_gbytes_per_s", "name",
                        "gpu"]), values)
def test_arbitrary_preset_values_build_or_are_a_content_error(key, value):
    def edit(root):
        path = root / "presets.toml"
        lines = path.read_text().splitlines()
        at = next(i for i, line in enumerate(lines) if line.split("=")[0].strip() == key)
        lines[at] = f"{key} = {toml_value(value)}"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with_fixture(edit)


@FAST
@given(st.sampled_from(["plate.md", "presets.toml", "terms.toml", "sources.toml"]), st.one_of(texts, prose_texts),
       st.booleans())
def test_arbitrary_file_text_builds_or_is_a_content_error(name, text, append):
    def edit(root):
        path = root / name
        path.write_text((path.read_text() if append else "") + text, encoding="utf-8")
    with_fixture(edit)


@FEW
@given(prose_texts, texts)
def test_full_builds_of_arbitrary_prose_and_terms(text, definition):
    """A few builds all the way through charts and the page, for what only the full path exercises."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "content"
        shutil.copytree(XIV4_MINI, root)
        plate = root / "plate.md"
        plate.write_text(plate.read_text().replace("Replicas split the batch.", text), encoding="utf-8")
        terms = root / "terms.toml"
        terms.write_text(terms.read_text().replace('"One copy of the model."', toml_string(definition)),
                         encoding="utf-8")
        try:
            files = assembly.gather(root)
        except ContentError as error:
            assert all(p.startswith("content/") for p in error.problems)
            return
        assert files["index.html"].count("<script") == clean_page().count("<script")


@functools.cache
def clean_page() -> str:
    return assembly.gather(XIV4_MINI)["index.html"]
