"""One number formatter: half-up, consistent significant figures, no padded digits; and texts that use it."""
import re

import pytest

from generator import content, facts, notation, render
from generator.content import Selection

from conftest import CONTENT


@pytest.mark.parametrize("value, digits, text", [
    (0.5, 0, "1"), (1.5, 0, "2"), (2.5, 0, "3"), (3.5, 0, "4"),  # exact binary ties go up, never to even
    (0.125, 2, "0.13"), (0.375, 2, "0.38"), (1024.5, 0, "1,025"),
    (128.484179968, 1, "128.5"), (8_030_261_248, 0, "8,030,261,248"), (0.0, 0, "0"), (-0.0001, 2, "0.00"),
])
def test_num_rounds_half_up_and_separates_thousands(value, digits, text):
    assert notation.num(value, digits) == text


@pytest.mark.parametrize("value, text", [
    (91797.64, "91,798 s"), (22949.4, "22,949 s"), (15958.1, "15,958 s"),  # whole digits are never rounded away
    (0.006934, "0.00693 s"), (0.0711, "0.0711 s"), (0.64179, "0.642 s"), (454.03, "454 s"),
    (0.5, "0.5 s"), (0.07, "0.07 s"),  # and never padded with zeros
    (0.99996, "1 s"), (0.0625, "0.0625 s"), (0.00125, "0.00125 s"),  # half-up at the third figure
    (0, "0 s"),
])
def test_seconds_have_three_significant_figures_without_padding(value, text):
    assert notation.seconds(value) == text


def test_percent_and_fraction():
    assert notation.percent(0.685) == "69%" and notation.percent(0.995) == "100%" and notation.percent(0.125, 1) == "12.5%"
    assert [notation.fraction(v) for v in (0.5, 0.25, 0.0625, 1.0, 0.3)] == ["half", "a quarter", "1/16", "all", "0.3"]


@pytest.fixture(scope="module")
def atlas():
    return facts.Atlas(content.load(CONTENT).presets)


def test_descriptions_never_start_the_all_reduce_from_one_replica(atlas):
    """With one replica nothing is reduced: no text may say the all-reduce 'rises from' that, or print 'none'."""
    seq_len = atlas.presets.workshop.seq_len
    for sel in atlas.selections[:: 7]:
        f = atlas.facts(sel)
        for fid in render.TABLE_COLUMNS:
            text = render.describe(f, fid, seq_len)
            assert "rises from" not in text and "none" not in text.split("ZeRO")[0], (sel, text)
            assert not re.search(r"\d\.\d*0 s\b", text), text  # no padded zero before the unit
        assert f"takes {notation.seconds(f.at(2).comm_s)} on 2 replicas" in render.describe(f, "fig-time", seq_len)


def test_readout_says_n_star_and_the_first_power_of_two(atlas):
    for sel in atlas.selections[:: 7]:
        f = atlas.facts(sel)
        text = render.readout(f)
        if f.crossing_replicas:
            assert f"n* ≈ {notation.num(f.continuous_crossing)} replicas; {notation.num(f.crossing_replicas)} is " \
                   "the first power of two past it" in text, sel
        else:
            assert "first power of two past it" not in text, sel
        assert ("hypothetical" in text) == (f.hypothetical_from is not None), sel


def test_readout_states_the_spec_claims(atlas):
    """MODEL.md: n* ≈ 708 (707 dropping the 1), first crossed at 1,024; NVLink on an H100 is real up to its HGX
    board's 8 GPUs (the 256-GPU NVLink Switch System did not ship for H100, MODEL.md's corrections)."""
    from conftest import spec_selection
    text = render.readout(atlas.facts(spec_selection(atlas.presets)))
    assert "n* ≈ 708 replicas; 1,024 is the first power of two past it" in text and "hypothetical" not in text
    nvlink = render.readout(atlas.facts(spec_selection(atlas.presets, network="nvlink")))
    assert "hypothetical" in nvlink and "NVLink joins at most 8 H100 SXM GPUs" in nvlink
