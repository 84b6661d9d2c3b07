"""Plate XIV.5's facts and content: the default from plate.md, every selection of XIV.4's presets, and every prose
slot one the facts provide."""
from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import replace

import jinja2
import numpy as np
import pytest

from generator.source.content import load_sources, load_terms
from generator.source.prose import FILTERS
from generator.source.schema import Problems
from xiv5_support import SPEC_GPU, SPEC_MODEL, FOLDER, default, fits_from, has_spec, pairs, presets  # noqa: F401
from xiv5_support import plate_facts
from xiv5_support import model



def front() -> dict:
    text = (FOLDER / "plate.md").read_text(encoding="utf-8")
    return tomllib.loads(text.split("\n---\n", 1)[0].removeprefix("---\n"))


def body() -> str:
    return (FOLDER / "plate.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]


def test_default_is_plate_md_s(default):
    assert {k: getattr(default, k) for k in plate_facts.CONTROLS} == front()["default"]


def test_presets_are_the_series_catalogue_not_a_copy():
    assert not (FOLDER / "presets.toml").exists()
    assert plate_facts.presets_path(FOLDER) == FOLDER.parent / "series.toml"
    assert plate_facts.load() == plate_facts.load(FOLDER)


def every_selection(presets):
    gpus = plate_facts.gpus_of(presets)
    for ids in itertools.product(presets.models, gpus, plate_facts.STAGES, plate_facts.PRECISIONS, presets.networks):
        yield plate_facts.Selection(*ids)


def test_every_selection_has_its_facts(presets):
    count = 0
    for sel in every_selection(presets):
        f = plate_facts.facts(presets, sel)
        gpu = plate_facts.gpus_of(presets)[sel.gpu]
        assert f.stage_index == list(plate_facts.STAGES).index(sel.stage)
        assert f.grad_bytes == plate_facts.GRAD_BYTES[sel.precision]
        assert f.link_bytes_per_s == presets.networks[sel.network].link_bytes_per_s(gpu)
        for s in f.stages:
            np.testing.assert_array_equal(s.states_bytes, model.state_bytes(f.params, s.stage, f.replicas,
                                                                             f.grad_bytes))
            np.testing.assert_array_equal(s.traffic_bytes, model.traffic_bytes(f.params, s.stage, f.grad_bytes,
                                                                               f.replicas))
            fits = s.states_bytes <= gpu.memory_gb * 1e9
            assert s.smallest_fitting_on_grid == (int(f.replicas[np.argmax(fits)]) if fits.any() else None)
            if s.smallest_fitting_on_grid is not None:  # the first power of two at or above the whole count
                assert s.smallest_fitting <= s.smallest_fitting_on_grid < 2 * s.smallest_fitting
        count += 1
    assert count == len(presets.models) * len(plate_facts.gpus_of(presets)) * 4 * 2 * len(presets.networks)


def test_the_nvlink_network_is_the_gpu_s_own(presets):
    nvlink = [i for i, n in presets.networks.items() if n.nvlink]
    if not nvlink:
        pytest.fail("XIV.4's presets no longer offer an NVLink network")
    for gpu_id, gpu in plate_facts.gpus_of(presets).items():
        sel = plate_facts.Selection(next(iter(presets.models)), gpu_id, "zero3", "bf16", nvlink[0])
        assert plate_facts.facts(presets, sel).link_bytes_per_s == gpu.nvlink_gbytes_per_s * 1e9


@pytest.mark.parametrize("key", plate_facts.CONTROLS)
def test_an_unknown_id_is_refused_by_name(presets, default, key):
    with pytest.raises(LookupError, match=key):
        plate_facts.facts(presets, replace(default, **{key: "no-such-id"}))


def render(presets, default) -> tuple[str, list[str]]:
    """plate.md's prose with the names prose_context gives and the engine's number filters; cite() a stub."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters.update(FILTERS)
    cited = []
    context = plate_facts.prose_context(presets, default, front().get("plates"))
    assert set(context) == set(plate_facts.PROSE_NAMES)
    text = env.from_string(body()).render(**context, cite=lambda s: cited.append(s) or f"[{s}]")
    return text, cited


def test_every_slot_is_one_the_facts_provide(presets, default):
    text, cited = render(presets, default)
    assert "{{" not in text and "{%" not in text
    assert cited, "the prose cites its sources"
    sources = load_sources(Problems(FOLDER), FOLDER / "sources.toml")
    assert set(cited) <= set(sources)


def test_prose_numbers_are_the_facts(presets, default):
    """The numbers the prose shows for the default, read back from the facts through the one formatter."""
    text, _ = render(presets, default)
    f = plate_facts.facts(presets, default)
    flat = re.sub(r"\s+", " ", text)
    assert f"needs {FILTERS['sig'](f.unsharded_bytes / 1e9, 4)} GB of model states" in flat
    assert (f"fits from {FILTERS['num'](f.stage(1).smallest_fitting)} replicas under stage 1, from "
            f"{FILTERS['num'](f.stage(2).smallest_fitting)} under stage 2 and from "
            f"{FILTERS['num'](f.stage(3).smallest_fitting)} under stage 3") in flat
    assert f"stage 1 from {FILTERS['num'](f.stage(1).smallest_fitting_gib)}" in flat
    assert f"stage 3 sends {FILTERS['sig'](f.traffic_ratio(3, 2))} times it" in flat


def test_the_prose_fits_are_the_formulas_and_the_facts_file_s_for_its_presets(presets, default):
    """The prose rendered for each model and GPU of the content says the fits the formulas give (bisection in the
    test, not the model), and stage 3's BF16 ratio (2·2 + 2)/(2·2); rendered for Llama 3 8B on an H100 SXM, when the
    content holds them, the facts file's own numbers."""
    gpus = plate_facts.gpus_of(presets)
    rendered = 0
    for m, g in pairs(presets):
        params, memory = presets.models[m].params, gpus[g].memory_gb * 1e9
        fits = [fits_from(params, k, memory) for k in (1, 2, 3)]
        if any(np.isnan(fits)):  # the sentence is written for a model that fits under every stage
            continue
        flat = re.sub(r"\s+", " ", render(presets, replace(default, model=m, gpu=g))[0])
        n1, n2, n3 = (FILTERS["num"](n) for n in fits)
        assert f"fits from {n1} replicas under stage 1, from {n2} under stage 2 and from {n3} under stage 3" in flat
        gib = FILTERS["num"](fits_from(params, 1, gpus[g].memory_gb * 2**30))
        assert f"stage 1 from {gib}." in flat
        assert f"stage 3 sends {FILTERS['sig']((2 * 2 + 2) / (2 * 2))} times it" in flat
        rendered += 1
    assert rendered, "no model of the content fits under every stage on any GPU"
    if has_spec(presets):
        flat = re.sub(r"\s+", " ", render(presets, replace(default, model=SPEC_MODEL, gpu=SPEC_GPU))[0])
        assert "fits from 3 replicas under stage 1, from 2 under stage 2 and from 2 under stage 3" in flat
        assert "stage 1 from 2." in flat
        assert "stage 3 sends 1.50 times it" in flat


def test_terms_and_sources_load_without_problems():
    problems = Problems(FOLDER)
    terms = load_terms(problems, FOLDER / "terms.toml")
    sources = load_sources(problems, FOLDER / "sources.toml")
    assert problems.items == []
    assert {"sharding", "zero", "fsdp"} <= set(terms)
    assert {"rajbhandari2020", "zhao2023", "llama3"} <= set(sources)


def test_fp32_gradients_fsdp_and_stage_1_in_pytorch_are_said_as_they_are(presets, default):
    """Issue 31: FP32 gradients make the states 2 + 4 + 12 bytes a parameter and stage 1's fit follows (a count by
    steps on the formula, not the facts' closed form); PyTorch's stage 1 is ZeroRedundancyOptimizer; Llama 3 sharded
    its weights too, so FSDP communicates in every pass."""
    flat = re.sub(r"\s+", " ", render(presets, default)[0])
    f = plate_facts.facts(presets, default)
    params, memory = f.params, f.gpu.memory_gb * 1e9
    n = 1
    while (2 + 4) * params + 12 * params / n > memory and n < 2**20:
        n += 1
    assert f"make the states {2 + 4 + 12} bytes per parameter: stage 1 then fits from {FILTERS['num'](n)} replicas." \
        in flat
    assert n >= f.stage(1).smallest_fitting  # FP32 gradients never fit from fewer replicas
    assert "PyTorch ships stage 1 apart, as `ZeroRedundancyOptimizer`" in flat
    assert "sharding the weights as well as the optimiser states and gradients" in flat
    assert "not once per optimiser step" in flat
    if has_spec(presets) and (default.model, default.gpu) == (SPEC_MODEL, SPEC_GPU):
        assert n == 4 and f.stage(1).smallest_fitting == 3  # MODEL.md: 4 replicas, not 3
