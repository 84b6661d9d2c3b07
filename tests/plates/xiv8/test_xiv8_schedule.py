"""Plate XIV.8's schedule simulator against the closed forms, each written here from its paper and not from the
plate's code: GPipe and 1F1B idle (p − 1)/(m + p − 1) of the step (arXiv:1811.06965 §2.3; arXiv:2104.04473
§2.2.1), interleaving (p − 1)/(v·m) of the busy time (arXiv:2104.04473 §2.2.2), ZB-H1 (p − 1)(T_F + T_B − T_W) of
idle time (arXiv:2401.10241 Table 2), over p 2–64, m 1–256 and v 1–8 where each schedule runs."""
from __future__ import annotations

from fractions import Fraction

import pytest

from xiv8_support import submodule

schedule = submodule("schedule")
TOL = 1e-12

# the grid: every p from 2 to 8, then powers of two and odd counts to 64; m likewise to 256
STAGES = [2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 31, 32, 64]
MICRO = [1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 48, 64, 100, 128, 135, 256]
CHUNKS = [1, 2, 3, 4, 5, 8]
TIMES = [(1.0, 2.0, 1.0), (1.0, 2.0, 0.5), (0.7, 1.9, 0.6), (1.3, 1.3, 0.2)]  # f, b, w with w ≤ b − w


def idle_share(run) -> float:
    return (run["end"] - run["busy"]) / run["end"]


def gpipe_share(p, m):
    """GPipe's bubble as a share of the step, (p − 1)/(m + p − 1)."""
    return (p - 1) / (m + p - 1)


def interleaved_step(p, m, v, f, b):
    """Interleaving: m(f + b) of work and (p − 1)(f + b)/v of idle time per stage."""
    return m * (f + b) + (p - 1) * (f + b) / v


def zb_h1_step(p, m, f, b, w):
    """ZB-H1: m(T_F + T_B + T_W) of work and (p − 1)(T_F + T_B − T_W) idle, T_B the input gradient b − w."""
    return m * (f + b) + (p - 1) * (f + (b - w) - w)


def small(p, m, v=1):
    """Grid points kept cheap: the largest runs (p·m·v past 2¹³) only at a few corners of the grid."""
    return p * m * v <= 8192 or (p, m, v) in ((64, 256, 1), (16, 256, 1), (64, 64, 1), (16, 256, 8), (64, 64, 8))


@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p", STAGES)
def test_gpipe_and_1f1b_idle_p_minus_1_over_m_plus_p_minus_1_of_the_step(name, p):
    for m in MICRO:
        for f, b, w in TIMES[:2]:
            run = schedule.simulate(name, p, m, 1, f, b, w, False)
            assert run["complete"]
            assert abs(idle_share(run) - gpipe_share(p, m)) <= TOL, (name, p, m, f, b)
            assert abs(run["end"] - (m + p - 1) * (f + b)) <= TOL * run["end"]


@pytest.mark.parametrize("p", STAGES)
def test_interleaving_divides_the_idle_time_by_v_when_m_is_a_multiple_of_p(p):
    for v in CHUNKS:
        for m in [k * p for k in (1, 2, 3, 5, 8, 16) if k * p <= 256]:
            if not small(p, m, v):
                continue
            f, b = 1.0, 2.0
            run = schedule.simulate("interleaved", p, m, v, f, b, 1.0, False)
            assert run["complete"]
            assert abs(run["end"] - interleaved_step(p, m, v, f, b)) <= TOL * run["end"], (p, m, v)
            # (p − 1)/(v·m) of the busy time
            assert abs((run["end"] - run["busy"]) / run["busy"] - (p - 1) / (v * m)) <= TOL, (p, m, v)


@pytest.mark.parametrize("p", STAGES)
def test_zb_h1_idles_p_minus_1_times_f_plus_b_minus_w_from_m_equal_p(p):
    """ZB-H1's closed form holds once m ≥ p and the weight gradient takes no longer than the input gradient."""
    for m in MICRO:
        if m < p or not small(p, m):
            continue
        for f, b, w in TIMES:
            run = schedule.simulate("zb-h1", p, m, 1, f, b, w, False)
            assert run["complete"]
            assert abs(run["end"] - zb_h1_step(p, m, f, b, w)) <= TOL * run["end"], (p, m, f, b, w)


def test_zb_h1_idles_longer_than_its_formula_when_the_weight_gradient_outlasts_the_input_gradient():
    """Where T_W > T_B the deferred weight gradients no longer fit the drain: the simulation says more."""
    run = schedule.simulate("zb-h1", 8, 16, 1, 1.0, 2.0, 1.5, False)
    assert run["end"] > zb_h1_step(8, 16, 1.0, 2.0, 1.5) + 1e-9


@pytest.mark.parametrize("name", ["gpipe", "1f1b", "interleaved", "zb-h1"])
def test_every_pass_follows_what_it_needs_and_no_stage_runs_two_at_once(name):
    p, m, v = 4, 8, 2
    run = schedule.simulate(name, p, m, v, 1.0, 2.0, 1.0)
    chunks = v if name == "interleaved" else 1
    end = {}
    for s, kind, j, c, start, stop in run["ops"]:
        end[(kind, j, c * p + s)] = (start, stop)
    assert len(end) == len(run["ops"]) == p * m * chunks * (3 if name == "zb-h1" else 2)
    last = p * chunks - 1
    for (kind, j, k), (start, stop) in end.items():
        if kind == 0 and k > 0:
            assert start >= end[(0, j, k - 1)][1]
        if kind == 1:
            assert start >= end[(1, j, k + 1)][1] if k < last else start >= end[(0, j, k)][1]
        if kind == 2:
            assert start >= end[(1, j, k)][1]
    for s in range(p):
        spans = sorted((a, b) for st, _, _, _, a, b in run["ops"] if st == s)
        assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))


def test_1f1b_holds_p_minus_s_micro_batches_on_stage_s_and_gpipe_all_m():
    p, m = 8, 32
    assert schedule.simulate("1f1b", p, m, 1, 1.0, 2.0, 1.0, False)["held"] == [p - s for s in range(p)]
    assert schedule.simulate("gpipe", p, m, 1, 1.0, 2.0, 1.0, False)["held"] == [m] * p
    assert max(schedule.simulate("zb-h1", p, m, 1, 1.0, 2.0, 1.0, False)["held"]) == p  # ZB-H1: pM_B at its peak


# --- the facts sheet's claims (spec/plate-xiv-8-facts.md), on the simulator --------------------------------------

def test_p_m_16_idles_15_31_of_the_step():
    run = schedule.simulate("1f1b", 16, 16, 1, 1.0, 2.0, 1.0, False)
    assert Fraction(idle_share(run)).limit_denominator(1000) == Fraction(15, 31)
    assert (run["end"] - run["busy"]) / run["busy"] == pytest.approx(15 / 16, rel=TOL)


def test_v_4_gives_15_79_of_the_step_as_m_64_does_without_it():
    four = schedule.simulate("interleaved", 16, 16, 4, 1.0, 2.0, 1.0, False)
    assert Fraction(idle_share(four)).limit_denominator(1000) == Fraction(15, 79)
    m64 = schedule.simulate("1f1b", 16, 64, 1, 1.0, 2.0, 1.0, False)
    assert idle_share(m64) == pytest.approx(idle_share(four), rel=TOL)
    assert idle_share(four) > idle_share(schedule.simulate("1f1b", 16, 16, 1, 1.0, 2.0, 1.0, False)) / 4


@pytest.mark.parametrize("p", [2, 3, 4, 8, 16, 32, 64])
def test_m_4p_keeps_the_bubble_under_a_fifth(p):
    assert idle_share(schedule.simulate("1f1b", p, 4 * p, 1, 1.0, 2.0, 1.0, False)) < 0.2


def test_16_stages_need_135_micro_batches_for_10_percent():
    assert idle_share(schedule.simulate("1f1b", 16, 135, 1, 1.0, 2.0, 1.0, False)) <= 0.1 + TOL
    assert idle_share(schedule.simulate("1f1b", 16, 134, 1, 1.0, 2.0, 1.0, False)) > 0.1
    pf = submodule("page_facts")
    assert pf.fewest("1f1b", 16, 1, [1.0, 2.0, 1.0], 0.1, pf.settled_idle("1f1b", 16, 1, [1.0, 2.0, 1.0])) == 135
    assert pf.fewest("gpipe", 16, 1, [0.3, 0.6, 0.3], 0.1, pf.settled_idle("gpipe", 16, 1, [0.3, 0.6, 0.3])) == 135


def test_zb_h1_idles_15_63_at_p_m_16_with_equal_times():
    run = schedule.simulate("zb-h1", 16, 16, 1, 1.0, 2.0, 1.0, False)
    assert Fraction(idle_share(run)).limit_denominator(1000) == Fraction(15, 63)


@pytest.mark.parametrize("name", ["gpipe", "1f1b", "interleaved", "zb-h1"])
def test_from_p_micro_batches_on_the_idle_time_no_longer_changes_with_m(name):
    """What Figure 2 and the readout's search rely on: past the first allowed m ≥ p, one simulation's idle time
    serves every larger m (held here against the full simulation at each)."""
    for p in (2, 3, 4, 8, 16):
        for v in ((1, 2, 4, 8) if name == "interleaved" else (1,)):
            unit = p if name == "interleaved" else 1
            first = schedule.simulate(name, p, p, v, 1.0, 2.0, 1.0, False)
            idle = first["end"] - first["busy"]
            for m in range(p, 4 * p + 1, unit):
                run = schedule.simulate(name, p, m, v, 1.0, 2.0, 1.0, False)
                assert abs(run["end"] - run["busy"] - idle) <= TOL * run["end"], (p, m, v)


def test_figure_2s_points_are_the_full_simulations():
    from xiv8_support import facts
    for layout in ("pp4", "tp8-pp16"):
        for chunks in ("v2", "v8"):
            f = facts(layout=layout, chunks=chunks)
            for point in f["curves"]:
                v = f["v"] if point["schedule"] == "interleaved" else 1
                run = schedule.simulate(point["schedule"], f["p"], point["m"], v, 1.0, 2.0, 1.0, False)
                assert abs(point["share"] - idle_share(run)) <= 1e-9, (layout, chunks, point)
