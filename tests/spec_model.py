"""The plate's scaling model written out again from spec/MODEL.md, in plain Python (no numpy, no generator code),
so that tests compare what the page says with numbers computed independently of the code under test."""
import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Expected:
    """One selection's numbers at every replica count, from MODEL.md's formulas."""

    replicas: list[int]
    compute_s: dict[int, float]
    allreduce_s: dict[int, float]
    efficiency: dict[int, float]
    crossing: int | None
    tokens: int
    seq_len: int
    model_states_gb: float
    gpu_memory_gb: float
    meeting: float  # n*: compute = all-reduce with the exact ring factor, 1 + 6·T·B/(2·b·P·u)


def replica_gpus(presets, sel) -> int:
    """g = t·p: the selection's layout, or (published) its model's published layout, else one GPU (Model v3)."""
    ident = presets.models[sel.model].layout if sel.layout == "published" else sel.layout
    return presets.layouts[ident].tensor * presets.layouts[ident].pipeline if ident else 1


def expected(presets, sel) -> Expected:
    """compute_s = 6·N·T/(n·P·u); allreduce_s = 2(n−1)/n · b·N/B; efficiency = compute/max(compute, allreduce); for
    a replica of g GPUs each GPU's N/g, the replica counts while n·g stays within max_replicas."""
    w = presets.workshop
    g = replica_gpus(presets, sel)
    n_params = presets.models[sel.model].params / g
    tokens = presets.batches[sel.batch].tokens
    link = presets.networks[sel.network].link_gbytes_per_s * 1e9
    peak = presets.gpu.peak_tflops * 1e12
    replicas, n = [], 1
    while n * g <= w.max_replicas or n == 1:
        replicas.append(n)
        n *= 2
    compute = {n: 6 * n_params * tokens / (n * peak * w.mfu) for n in replicas}
    reduce = {n: 2 * (n - 1) / n * w.bytes_per_grad * n_params / link for n in replicas}
    efficiency = {n: compute[n] / max(compute[n], reduce[n]) for n in replicas}
    crossing = next((n for n in replicas if reduce[n] > compute[n]), None)
    return Expected(replicas, compute, reduce, efficiency, crossing, tokens, w.seq_len,
                    (2 + w.bytes_per_grad + 12) * n_params / 1e9, presets.gpu.memory_gb,
                    1 + 6 * tokens * link / (2 * w.bytes_per_grad * peak * w.mfu))


def number(text: str) -> tuple[float, int]:
    """'1,024' → (1024.0, 0); '0.071' → (0.071, 3); '6.93e-3' → (0.00693, 5): a printed number and its decimals."""
    digits, _, exponent = text.replace(",", "").partition("e")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return float(digits) * 10 ** int(exponent or 0), decimals - int(exponent or 0)


# The units notation.py scales times and sizes to, as powers of ten of the unit the checks read (s, GB).
SCALED = {"ms": ("e-3", "s"), "µs": ("e-6", "s"), "ns": ("e-9", "s"), "TB": ("e3", "GB"), "MB": ("e-3", "GB"),
          "kB": ("e-6", "GB")}


def in_base_units(text: str) -> str:
    """'6.93 ms' → '6.93e-3 s', '7.80 MB' → '7.80e-3 GB': every time in s and size in GB, digits kept."""
    return re.sub(r"(\d[\d,]*(?:\.\d+)?) (ms|µs|ns|TB|MB|kB)\b",
                  lambda m: f"{m[1]}{SCALED[m[2]][0]} {SCALED[m[2]][1]}", text)


def agrees(text: str, value: float, scale: float = 1.0) -> bool:
    """Whether a printed number is value (times scale) rounded to the digits it shows. The page's data carries
    6 significant digits, so a long time may show a digit it does not have (15,958.10 s for 15,958.136 s):
    that much more is allowed."""
    shown, decimals = number(text)
    value = value * scale
    carried = 0.5 * 10 ** (math.floor(math.log10(abs(value))) - 5) if value else 0
    return abs(shown - value) <= (0.5 * 10 ** -decimals + carried) * (1 + 1e-9) + 1e-12


NUM = r"(\d[\d,]*(?:\.\d+)?(?:e-?\d+)?)"


def check_readout(readout: str, e, presets) -> None:
    """The readout's numbers against MODEL.md's formulas, computed in the test (spec_model.py)."""
    readout = in_base_units(readout)
    states = re.search(rf"Model states: {NUM} GB per GPU, which (fit|do not fit) on one .+ \({NUM} GB", readout)
    assert states and agrees(states[1], e.model_states_gb) and agrees(states[3], e.gpu_memory_gb), readout
    assert (states[2] == "fit") == (e.model_states_gb <= e.gpu_memory_gb), readout
    last = e.replicas[-1]
    if e.crossing is None:
        found = re.search(rf"compute alone: {NUM} s on {NUM} replicas, where communication takes {NUM} s; "
                          rf"efficiency still {NUM}%", readout)
        assert found, readout
        assert agrees(found[1], e.compute_s[last]) and number(found[2])[0] == last, readout
        assert agrees(found[3], e.allreduce_s[last]) and agrees(found[4], e.efficiency[last], 100), readout
        return
    n = e.crossing
    found = re.search(rf"n\* ≈ {NUM} replicas; {NUM} is the first power of two past it, where it takes {NUM} s "
                      rf"against {NUM} s of compute", readout)
    assert found and number(found[2])[0] == n, readout
    assert abs(number(found[1])[0] - e.meeting) <= 0.5 + 1e-9, readout  # n*, rounded to a whole replica
    assert agrees(found[3], e.allreduce_s[n]) and agrees(found[4], e.compute_s[n]), readout
    found = re.search(rf"waits {NUM} s for communication beyond compute", readout)
    assert found and agrees(found[1], max(e.allreduce_s[n], e.compute_s[n]) - e.compute_s[n]), readout
    found = re.search(rf"efficiency {NUM}%, and each replica processes {NUM} tokens per step", readout)
    assert found and agrees(found[1], e.efficiency[n], 100) and agrees(found[2], e.tokens / n), readout


def check_descriptions(describe: dict, e) -> None:
    """The figures in words against MODEL.md's formulas: the ends of each line, the crossing, the shading."""
    last = e.replicas[-1]
    describe = {fid: in_base_units(text) for fid, text in describe.items()}
    time = describe["fig-time"]
    found = re.search(rf"from {NUM} s on one replica to {NUM} s on {NUM}\. .* takes {NUM} s on 2 replicas and "
                      rf"{NUM} s on {NUM}", time)
    assert found, time
    assert agrees(found[1], e.compute_s[1]) and agrees(found[2], e.compute_s[last]), time
    assert agrees(found[4], e.allreduce_s[2]) and agrees(found[5], e.allreduce_s[last]), time
    assert number(found[3])[0] == number(found[6])[0] == last, time
    assert "rises from" not in time and "none" not in time  # one replica has nothing to reduce: no value to name
    crossing = re.search(rf"first on the grid at {NUM} replicas", time)
    assert (number(crossing[1])[0] if crossing else None) == e.crossing, time
    efficiency = describe["fig-efficiency"]
    ends = re.search(rf"{NUM}% at {NUM}\.", efficiency) or re.search(rf"stays at {NUM}% up to {NUM} replicas",
                                                                     efficiency)
    assert ends and agrees(ends[1], e.efficiency[last], 100) and number(ends[2])[0] == last, efficiency
    one_sequence = e.tokens / e.seq_len
    shaded = re.search(rf"Shaded beyond {NUM} replicas", time)
    assert (shaded is not None) == (one_sequence < last), time
    if shaded:
        assert agrees(shaded[1], one_sequence), time
