"""Facts read off the grid for the real presets: what the prose and the readout state."""
import csv
import io

import pytest
from numpy.testing import assert_allclose

from generator import content, facts, render
from generator.content import Selection

from conftest import CONTENT


@pytest.fixture(scope="module")
def atlas():
    return facts.Atlas(content.load(CONTENT).presets)


def test_default_selection_claims(atlas):
    f = atlas.facts(Selection("llama3-8b", "4M", "ib-400"))
    assert f.crossing_replicas == 1024
    assert_allclose(f.allreduce_limit_s, 0.642, rtol=1e-3)
    assert f.at_crossing.tokens_per_replica == 4096
    assert f.at_crossing.sequences_per_replica == 0.5
    assert_allclose(f.model_states_gb, 128.5, atol=0.05)
    assert f.gpu_memory_gb == 80 and not f.fits_in_memory
    assert_allclose(f.non_embedding_allreduce_s, 0.56, atol=0.005)


def test_scenarios(atlas):
    assert atlas.facts(Selection("llama3-8b", "4M", "nvlink")).at(1024).efficiency == 1.0
    assert atlas.facts(Selection("llama3-8b", "1M", "ib-400")).crossing_replicas == 256
    assert atlas.facts(Selection("llama3-70b", "4M", "ib-400")).crossing_replicas == 1024


def test_at_rejects_a_count_off_the_grid(atlas):
    with pytest.raises(ValueError, match="not a replica count"):
        atlas.facts(Selection("llama3-8b", "4M", "ib-400")).at(1000)


def test_rows_cover_every_selection_and_replica_count(atlas):
    rows = atlas.rows()
    assert len(rows) == len(atlas.selections) * len(atlas.grid.replicas)
    assert tuple(rows[0]) == facts.CSV_COLUMNS


def test_csv_rows_agree_with_model_md_formulas(atlas):
    """Every CSV row recomputed from MODEL.md's formulas, independently of model.py."""
    rows = list(csv.DictReader(io.StringIO(render.csv_text(atlas))))
    assert len(rows) == len(atlas.rows())
    assert list(rows[0]) == list(facts.CSV_COLUMNS)
    for r in rows:
        N, T, n = float(r["params"]), float(r["global_batch_tokens"]), float(r["replicas"])
        P, u, B = float(r["gpu_peak_tflops"]) * 1e12, float(r["mfu"]), float(r["link_gbytes_per_s"]) * 1e9
        compute = 6 * N * T / (n * P * u)
        allreduce = 2 * (n - 1) / n * 2 * N / B
        assert_allclose(float(r["compute_s"]), compute, rtol=1e-12)
        assert_allclose(float(r["allreduce_s"]), allreduce, rtol=1e-12, atol=0)
        assert_allclose(float(r["step_s"]), max(compute, allreduce), rtol=1e-12)
        assert_allclose(float(r["efficiency"]), compute / max(compute, allreduce), rtol=1e-12)
        assert_allclose(float(r["tokens_per_replica"]), T / n)
        assert_allclose(float(r["sequences_per_replica"]), T / n / 8192)
        assert_allclose(float(r["model_states_gb"]), 16 * N / 1e9)
        assert r["fits_in_memory"] == ("true" if 16 * N <= float(r["gpu_memory_gb"]) * 1e9 else "false")
        assert r["gpu"] == "h100-sxm" and float(r["gpu_peak_tflops"]) == 989 and float(r["mfu"]) == 0.45


def test_exact_statements_for_the_prose(atlas):
    """Issue 8's numbers, recomputed from MODEL.md's formulas rather than read back from facts.py."""
    P, u, T, N = 989e12, 0.45, 2**22, 8_030_261_248
    ib = atlas.facts(Selection("llama3-8b", "4M", "ib-400"))
    nv = atlas.facts(Selection("llama3-8b", "4M", "nvlink"))
    assert_allclose(ib.meeting_replicas, 1 + 1.5 * T * 50e9 / (P * u), rtol=1e-12)
    assert round(ib.meeting_replicas) == 708 and ib.crossing_replicas == 1024
    assert_allclose([ib.hiding_tokens_per_replica, nv.hiding_tokens_per_replica],
                    [P * u / (1.5 * 50e9), P * u / (1.5 * 450e9)], rtol=1e-12)
    assert round(ib.hiding_tokens_per_replica) == 5934 and round(nv.hiding_tokens_per_replica) == 659
    assert_allclose(ib.model_states_bytes, 16 * N) and ib.gpu_memory_bytes == 80e9
    assert_allclose(ib.gpu_memory_gib_bytes, 80 * 2**30) and not ib.fits_in_gib
    assert ib.embedding_params == 2 * 128256 * 4096 and ib.model.params - ib.embedding_params == 6_979_588_096


@pytest.mark.parametrize("sel", [Selection(m, b, n) for m in ("llama3-8b", "llama3-405b") for b in ("1M", "16M")
                                 for n in ("ib-400", "nvlink")])
def test_the_lines_meet_at_n_star(atlas, sel):
    """Compute equals the all-reduce at n*, and the grid's crossing is the first power of two past it."""
    f = atlas.facts(sel)
    n = f.meeting_replicas
    compute = 6 * f.model.params * f.batch.tokens / (n * 989e12 * 0.45)
    allreduce = 2 * (n - 1) / n * 2 * f.model.params / (f.network.link_gbytes_per_s * 1e9)
    assert_allclose(compute, allreduce, rtol=1e-12)
    past = [int(r) for r in f.grid.replicas if r > n]
    assert f.crossing_replicas == (past[0] if past else None)
