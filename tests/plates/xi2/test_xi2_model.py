"""Plate XI.2's model against independent formulas: McCandlish et al.'s trade-off (S/S_min − 1)(E/E_min − 1) = 1,
the facts file's claims (2·S_min at B_crit, the 44% and 6% cuts, B_crit doubling per 2^α_B fall of the loss), and
every selection of the content's presets."""
from __future__ import annotations

import itertools
import math

import numpy as np

import pytest

from xi2_support import facts, presets, submodule

pf = submodule("page_facts")

# spec/plate-xi-2-facts.md's constants for Kaplan et al.'s fit; its claims are pinned on these, not on the content.
SPEC_B_STAR, SPEC_ALPHA = 2e8, 0.21


def every_choice(table: str) -> list[str]:
    return list(presets()[table])


@pytest.mark.parametrize("critical", every_choice("critical"))
@pytest.mark.parametrize("size", every_choice("size"))
def test_at_the_critical_batch_a_run_takes_twice_its_fewest_steps_and_tokens(critical, size):
    f = facts(critical=critical, size=size)
    assert f["steps_at_critical"] == pytest.approx(2 * f["min_steps"], rel=1e-15)
    assert f["tokens_at_critical"] == pytest.approx(2 * f["min_tokens"], rel=1e-15)
    assert f["min_tokens"] == pytest.approx(f["min_steps"] * f["critical"], rel=1e-15)


@pytest.mark.parametrize("critical", every_choice("critical"))
def test_every_point_of_figure_1_lies_on_the_hyperbola(critical):
    """(S/S_min − 1)·(E/E_min − 1) = 1 at every batch, and the axis is symmetric about B_crit in doublings."""
    f = facts(critical=critical)
    for point in f["curve"]:
        assert (point["steps"] / f["min_steps"] - 1) * (point["tokens"] / f["min_tokens"] - 1) == pytest.approx(1)
    span = presets()["settings"]["span_doublings"]
    assert len(f["curve"]) == 2 * span + 1
    assert f["curve"][span]["batch"] == f["critical"]
    assert f["smallest_batch"] * f["largest_batch"] == pytest.approx(f["critical"] ** 2)


def test_the_facts_files_cuts_from_an_eighth_and_from_eight_times_b_crit():
    """Doubling from B_crit/8: S from 9·S_min to 5·S_min, about 44%; from 8·B_crit: 1.125 to 1.0625, about 6%."""
    crit = 3.0e6
    assert pf.steps(1, crit, crit / 8) == pytest.approx(9)
    assert pf.steps(1, crit, crit / 4) == pytest.approx(5)
    assert pf.steps(1, crit, crit * 8) == pytest.approx(1.125)
    assert pf.steps(1, crit, crit * 16) == pytest.approx(1.0625)
    assert pf.cut(crit, crit / 8) == pytest.approx(4 / 9)
    assert pf.cut(crit, crit * 8) == pytest.approx(1 / 18)
    assert round(100 * pf.cut(crit, crit / 8)) == 44 and round(100 * pf.cut(crit, crit * 8)) == 6


@pytest.mark.parametrize("critical", every_choice("critical"))
def test_the_pages_cuts_and_regions_are_the_closed_forms_for_the_contents_factors(critical):
    f = facts(critical=critical)
    k, r = f["claim_factor"], f["factor"]
    assert f["cut_below"] == pytest.approx(1 - (1 + k / 2) / (1 + k))
    assert f["cut_above"] == pytest.approx(1 - (1 + 1 / (2 * k)) / (1 + 1 / k))
    # below B_crit/r a doubling saves at least cut_low of the steps; above r·B_crit it adds at least growth_high
    assert f["cut_low"] == pytest.approx(1 - (1 + r / 2) / (1 + r))
    assert f["growth_high"] == pytest.approx((1 + 2 * r) / (1 + r) - 1)
    # and the other side of each edge: tokens added below B_crit/r, steps cut above r·B_crit
    assert f["growth_low"] == pytest.approx((1 + 2 / r) / (1 + 1 / r) - 1)
    assert f["cut_high"] == pytest.approx(1 - (1 + 1 / (2 * r)) / (1 + 1 / r))


def test_kaplans_fit_doubles_b_crit_per_fall_of_the_loss_by_2_to_the_alpha():
    for loss in (1.5, 2.0, 2.5, 3.0, 4.0):
        fallen = loss / 2 ** SPEC_ALPHA
        assert pf.kaplan_critical(fallen, SPEC_B_STAR, SPEC_ALPHA) / pf.kaplan_critical(loss, SPEC_B_STAR,
                                                                                         SPEC_ALPHA) == pytest.approx(2)
    assert round(2 ** SPEC_ALPHA, 2) == 1.16
    # the facts file's "about 1.1M at L = 3, about 7.4M at L = 2", by the fit written out again
    assert SPEC_B_STAR * 3.0 ** (-1 / SPEC_ALPHA) == pytest.approx(pf.kaplan_critical(3.0, SPEC_B_STAR, SPEC_ALPHA))
    assert round(pf.kaplan_critical(3.0, SPEC_B_STAR, SPEC_ALPHA) / 1e6, 1) == 1.1
    assert round(pf.kaplan_critical(2.0, SPEC_B_STAR, SPEC_ALPHA) / 1e6, 1) == 7.4


@pytest.mark.parametrize("critical", every_choice("critical"))
def test_a_critical_batch_is_given_or_from_the_contents_fit(critical):
    choice, settings = presets()["critical"][critical], presets()["settings"]
    f = facts(critical=critical)
    if choice["loss"] is None:
        assert f["critical"] == choice["tokens"] and not f["from_loss"]
    else:
        assert f["from_loss"]
        fit = settings["kaplan_b_star"] * choice["loss"] ** (-1 / settings["kaplan_alpha_b"])
        assert f["critical"] == pytest.approx(fit)
    assert f["halving_loss_factor"] == pytest.approx(2 ** settings["kaplan_alpha_b"])


def test_the_knee_is_where_every_later_doubling_saves_less_than_the_threshold():
    saving = 0.1
    times = [100.0, 50.0, 30.0, 28.0, 27.0, 26.9]
    at = pf.knee(times, [1, 2, 4, 8, 16, 32], saving)
    assert at == 2
    assert all(1 - times[i + 1] / times[i] < saving for i in range(at, len(times) - 1))
    assert 1 - times[at] / times[at - 1] >= saving
    assert pf.knee([8.0, 4.0, 2.0], [1, 2, 4], saving) == -1


def test_the_knee_can_be_at_the_first_replica_count():
    """A first doubling that already saves less than the threshold puts the knee at the first replica count."""
    saving = 0.1
    times = [100.0, 95.0, 93.0, 92.5]
    assert 1 - times[1] / times[0] < saving
    assert pf.knee(times, [1, 2, 4, 8], saving) == 0
    assert pf.knee([100.0, 89.0, 88.0], [8, 16, 32], saving) == 1  # the first doubling saves 11%: the knee after it


def test_the_limit_is_the_factor_that_falls_short_of_halving():
    # a fixed global batch: the steps stay, the step stops halving -> communication
    assert pf.limit_of(4e6, 4e6, 1.0, 0.95) == "communication"
    # a fixed batch per replica: the steps barely fall, the step is unchanged -> the critical batch
    assert pf.limit_of(4e6, 8e6, 0.95, 1.0) == "critical"
    # the steps still nearly halve but the exposed all-reduce makes each step longer -> communication
    assert pf.limit_of(4e3, 8e3, 0.52, 1.8) == "communication"


def every_selection():
    """Every choice of every control but the run's size, the layout and the step (the default's): S_min only scales
    the times (below); the layouts and the real cluster are walked by test_every_layout_and_step_has_its_facts."""
    p = presets()
    keys = [key for key in pf.CONTROLS if key not in ("size", "layout", "step")]
    default = facts()["selection"]
    for combo in itertools.product(*(p[pf.CONTROLS[key]] for key in keys)):
        yield {**default, **dict(zip(keys, combo))}


def gpus(p: dict, sel: dict) -> int:
    """GPUs per replica: the layout chosen, or (published) the model's own, else one."""
    ident = p["models"][sel["model"]].get("layout") if sel["layout"] == "published" else sel["layout"]
    return p["layouts"][ident]["tensor"] * p["layouts"][ident]["pipeline"] if ident else 1


def test_every_layout_and_step_has_its_facts():
    """Each layout and either step, for every model and network: the replica axis stops where the replicas' GPUs
    reach the cap, the real cluster's step is never shorter than its compute, and a knee names its limit."""
    p = presets()
    default = facts()["selection"]
    for m, net, lay, step in itertools.product(p["models"], p["networks"], p["layout_choices"], p["steps"]):
        sel = {**default, "model": m, "network": net, "layout": lay, "step": step}
        f = pf.facts(sel, p)
        g = gpus(p, sel)
        assert f["layout"]["gpus"] == g and f["max_replicas"] * g <= p["workshop"]["max_replicas"] or \
            f["max_replicas"] == 1
        for way in f["ways"]:
            assert way["replicas"] == f["replicas"]
            assert all(np.isfinite(way["step_s"])) and all(s > 0 for s in way["step_s"])
            assert (way["knee"] < 0) == (way["limit"] == "")
            if way["limit"] == "critical":  # the steps alone save less than the threshold there
                at = way["knee"]
                assert 1 - way["steps"][at + 1] / way["steps"][at] < p["settings"]["knee_saving"], sel


def test_every_selection_has_finite_facts_and_a_named_limit_at_each_knee():
    p = presets()
    for sel in every_selection():
        f = pf.facts(sel, p)
        for way in f["ways"]:
            assert all(math.isfinite(t) and t > 0 for t in way["time_s"])
            if way["knee"] >= 0:
                assert way["limit"] in ("critical", "communication")
                assert way["knee_replicas"] == f["replicas"][way["knee"]]
            else:
                assert way["limit"] == ""
        fixed = f["ways"][1]
        assert fixed["steps"] == [fixed["steps"][0]] * len(f["replicas"])  # a fixed global batch: S(B) fixed
        if fixed["knee"] >= 0:
            assert fixed["limit"] == "communication"


@pytest.mark.parametrize("size", every_choice("size"))
def test_the_runs_size_scales_every_time_and_moves_no_knee(size):
    base, f = facts(), facts(size=size)
    scale = f["min_steps"] / base["min_steps"]
    for way, ref in zip(f["ways"], base["ways"]):
        assert way["time_s"] == pytest.approx([t * scale for t in ref["time_s"]], rel=1e-12)
        assert (way["knee"], way["limit"]) == (ref["knee"], ref["limit"])


def test_the_words_say_where_a_fixed_global_batch_splits_sequences_and_a_link_passes_its_domain():
    """The readout and Figure 2's words flag what no run can use: replicas under a whole sequence with a fixed global
    batch, and a ring over the GPU's own link past the largest domain sold; each count derived here from the presets."""
    from generator.page.notation import num
    words = submodule("page_words")
    p = presets()
    seq_len = p["workshop"]["seq_len"]
    flagged = {"sequence": 0, "domain": 0}
    for sel in every_selection():
        f = pf.facts(sel, p)
        g = gpus(p, sel)  # the replica axis stops where its replicas' GPUs reach the cap
        top = 2 ** math.floor(math.log2(p["workshop"]["max_replicas"] // g))
        text = words.readout(f, {"plates": {}})[1]
        described = words.describe(f, "fig-time", {"plates": {}})
        whole = p["batches"][sel["batch"]]["tokens"] // seq_len
        said = f"Beyond {num(whole)} replicas each would hold less than one sequence of {num(seq_len)} tokens"
        assert (said in text) == (whole < top), (sel, text)
        assert (f"a whole sequence each only up to {num(whole)})" in described) == (whole < top), (sel, described)
        flagged["sequence"] += whole < top
        gpu = p["gpus"][sel["gpu"]]
        domain = gpu["nvlink_domain"] if p["networks"][sel["network"]]["nvlink"] else None
        said = f"{gpu['interconnect']} joins at most {num(domain or 0)} of these GPUs ({gpu['nvlink_domain_name']})"
        assert (said in text) == bool(domain and domain < top * g), (sel, text)
        flagged["domain"] += bool(domain and domain < top * g)
    assert flagged["sequence"] > 0 and flagged["domain"] > 0  # both sentences were met, not only their absence


def test_the_readout_says_how_far_past_b_crit_a_knee_is_and_when_sequences_run_out_first():
    """A knee set by the critical batch is given as a multiple of B_crit and the steps one doubling of the batch there
    still saves (McCandlish's S(B) written out here); a fixed global batch whose knee lies past the last replica count
    with a whole sequence each says that sequences run out first, and only then."""
    from generator.page.notation import num, percent, sig
    words = submodule("page_words")
    p = presets()
    met = {"critical": 0, "sequences first": 0, "knee before": 0}
    for sel in every_selection():
        f = pf.facts(sel, p)
        text = words.readout(f, {"plates": {}})[1]
        per, fixed = f["ways"]
        if per["limit"] == "critical":
            b, crit = per["knee_batch"], f["critical"]
            saved = 1 - (1 + crit / (2 * b)) / (1 + crit / b)
            assert f"is {sig(b / crit)} times B_crit, and doubling it cuts the steps by only {percent(saved)}" in text
            assert saved < p["settings"]["knee_saving"]  # the steps alone already save less than the threshold
            met["critical"] += 1
        said = f"whole sequences run out at {num(f['sequence_replicas'])} replicas, before communication"
        first = fixed["knee"] >= 0 and fixed["knee_replicas"] > f["sequence_replicas"]
        assert (said in text) == first, (sel, text)
        met["sequences first"] += first
        met["knee before"] += fixed["knee"] >= 0 and not first
    assert all(met.values()), met  # each case was met, not only its absence
