"""Plate XIV.8's facts of one selection as plain data, written once: the build runs these functions and the page runs
them compiled (generator/compiler.py), so this module keeps to the Python the page runs. Every bubble here is read off
the schedules placed in time (schedule.simulate); the layout, each GPU's parameters and the compute per token are the
series' (platelib), as plate XIV.4 states them."""
import math

from generator.api import num
from platelib.compute import compute_seconds, gpu_params
from platelib.layout import replica_gpus, stage_layers
from platelib.zero import states_per_param

from .schedule import GPIPE, INTERLEAVED, ONE_F_ONE_B, ZB_H1, simulate

# The plate's controls in the page's order: {key: the presets table of its choices}. model, gpu and network are
# the series catalogue's, layout its layouts with a pipeline (and this plate's own), the others the plate's.
CONTROLS = {"schedule": "schedules", "layout": "pipelines", "micro": "micro", "chunks": "chunks", "model": "models",
            "gpu": "gpus", "network": "networks"}
SCHEDULES = {GPIPE: {"name": "GPipe"}, ONE_F_ONE_B: {"name": "1F1B"}, INTERLEAVED: {"name": "interleaved 1F1B"},
             ZB_H1: {"name": "ZB-H1"}}
ORDER = [GPIPE, ONE_F_ONE_B, INTERLEAVED, ZB_H1]
BF16_BYTES = 2  # an activation's bytes on the wire between stages


def share_of(run):
    """The idle share of a step: (step − one stage's compute)/step."""
    return (run["end"] - run["busy"]) / run["end"]


def allowed(schedule, p, m):
    """Whether the schedule runs with m micro-batches on p stages: interleaving needs m a multiple of p
    (arXiv:2104.04473 §2.2.2)."""
    return schedule != INTERLEAVED or m % p == 0


def axis(largest):
    """Figure 2's micro-batch counts: 1, 2, 4, … largest."""
    out = []
    m = 1
    while m <= largest:
        out.append(m)
        m = m * 2
    return out


def above(run, target):
    """Whether the run's bubble is above the target share, beyond the rounding of its sums (15/150 is 10%)."""
    return share_of(run) > target * (1 + 1e-9)


def settled_idle(schedule, p, v, times):
    """The schedule's idle time per step from p micro-batches on, where a larger m no longer changes it
    (tests/plates/xiv8 hold this against the full simulation): the simulation at m = p."""
    run = simulate(schedule, p, p, v, times[0], times[1], times[2], False)
    return run["end"] - run["busy"]


def fewest(schedule, p, v, times, target, idle):
    """The fewest micro-batches per step (multiples of p when interleaving) that bring the schedule's simulated
    bubble to at most `target` of the step, given its idle time from p micro-batches on: m·(f + b) must reach
    idle·(1 − target)/target. A count below p, where the idle time may differ, is checked against the simulation
    itself, one unit either side."""
    unit = p if schedule == INTERLEAVED else 1
    work = times[0] + times[1]
    m = max(unit, int(math.ceil(idle * (1 - target) / target / work / unit - 1e-9)) * unit)
    if m >= p:
        return m
    while above(simulate(schedule, p, m, v, times[0], times[1], times[2], False), target):
        m = m + unit
    while m > unit and not above(simulate(schedule, p, m - unit, v, times[0], times[1], times[2], False), target):
        m = m - unit
    return m


def facts(selection, presets):
    """One selection's facts: the chosen schedule placed in time, the four schedules' bubbles against m and at the
    reader's m, what each holds in flight, the step's time and the traffic between stages."""
    settings = presets["settings"]
    layout = presets["pipelines"][selection["layout"]]
    model = presets["models"][selection["model"]]
    gpu = presets["gpus"][selection["gpu"]]
    net = presets["networks"][selection["network"]]
    w = presets["workshop"]
    p = layout["pipeline"]
    t = layout["tensor"]
    m = presets["micro"][selection["micro"]]["count"]
    v = presets["chunks"][selection["chunks"]]["count"]
    chosen = selection["schedule"]
    runs = allowed(chosen, p, m)
    drawn = chosen if runs else ONE_F_ONE_B
    per_gpu = gpu_params(model["params"] * 1.0, replica_gpus(t, p))
    tokens = settings["micro_sequences"] * w["seq_len"]
    work = compute_seconds(per_gpu, tokens, 1, gpu["peak_tflops"] * 1e12, w["mfu"])  # forward + backward
    ratio = settings["backward_ratio"]
    f = work / (1 + ratio)
    b = work - f
    wg = b * settings["weight_share"]
    times = [f, b, wg]
    run = simulate(drawn, p, m, v, f, b, wg)
    ops = []
    for op in run["ops"]:
        ops.append({"stage": op[0] + 1, "kind": op[1], "micro": op[2] + 1, "chunk": op[3] + 1, "start": op[4],
                    "end": op[5]})
    sequence_bytes = BF16_BYTES * w["seq_len"] * model["d_model"]  # one sequence's activations at a boundary
    each = []
    idles = {}  # each schedule's idle time from p micro-batches on, in seconds
    for name in ORDER:
        ok = allowed(name, p, m)
        one = None
        if ok:
            one = run if name == drawn else simulate(name, p, m, v, f, b, wg, False)
            if m >= p:
                idles[name] = one["end"] - one["busy"]
        if name not in idles:
            idles[name] = settled_idle(name, p, v, times)
        sends = m * (v if name == INTERLEAVED else 1)  # activations sent across one boundary per step, each way
        each.append({"schedule": name, "name": SCHEDULES[name]["name"], "runs": ok, "sends": sends,
                     "step_s": one["end"] if ok else None, "share": share_of(one) if ok else None,
                     "held": one["held"] if ok else [], "most_held": max(one["held"]) if ok else None})
    curves = []
    for name in ORDER:
        for count in axis(settings["largest_micro"]):
            if allowed(name, p, count):
                if count < p:
                    share = share_of(simulate(name, p, count, v, f, b, wg, False))
                else:
                    share = idles[name] / (count * (f + b) + idles[name])
                curves.append({"schedule": name, "name": SCHEDULES[name]["name"], "m": count, "share": share})
    target = settings["bubble_target"]
    llama = simulate(ONE_F_ONE_B, settings["llama_stages"], settings["llama_micro"], 1, 1.0, ratio, 1.0, False)
    link = (gpu["nvlink_gbytes_per_s"] if net["nvlink"] else net["link_gbytes_per_s"]) * 1e9
    layers = stage_layers(model["layers"], p)
    held = run["held"]
    return {
        "selection": {"schedule": chosen, "layout": selection["layout"], "micro": selection["micro"],
                      "chunks": selection["chunks"], "model": selection["model"], "gpu": selection["gpu"],
                      "network": selection["network"]},
        "caption": SCHEDULES[chosen]["name"] + (" (" + num(v) + " chunks per GPU)" if chosen == INTERLEAVED else "")
        + " · " + layout["name"] + " · " + num(m) + " micro-batches · " + model["name"] + " · " + gpu["name"] +
        " · " + net["short"],
        "schedule": chosen, "schedule_name": SCHEDULES[chosen]["name"], "runs": runs, "drawn": drawn,
        "drawn_name": SCHEDULES[drawn]["name"], "p": p, "t": t, "m": m, "v": v,
        "chunks_drawn": v if drawn == INTERLEAVED else 1,
        "ops": ops, "first_s": run["first"], "last_s": run["last"], "step_s": run["end"], "busy_s": run["busy"],
        "idle_s": run["end"] - run["busy"],
        "share": share_of(run), "ideal_share": (run["end"] - run["busy"]) / run["busy"],
        "held": held, "most_held": max(held), "least_held": min(held),
        "forward_s": f, "backward_s": b, "weight_s": wg,
        "fewest": fewest(drawn, p, v, times, target, idles[drawn]), "target": target,
        "each": each, "curves": curves, "rule_m": settings["rule_factor"] * p, "rule_factor": settings["rule_factor"],
        "llama_p": settings["llama_stages"], "llama_m": settings["llama_micro"], "llama_share": share_of(llama),
        "model": {"name": model["name"], "params": model["params"], "layers": model["layers"],
                  "d_model": model["d_model"]},
        "gpu": {"name": gpu["name"]}, "network": {"name": net["name"], "short": net["short"]},
        "layout": {"name": layout["name"], "gpus": replica_gpus(t, p)},
        "per_gpu_params": per_gpu, "first_layers": layers[0], "most_layers": max(layers),
        "least_layers": min(layers), "micro_sequences": settings["micro_sequences"], "seq_len": w["seq_len"],
        "tokens": tokens, "mfu": w["mfu"],
        # each GPU's model states, unsharded (plate XIV.4's bytes per parameter), against its memory
        "states_bytes": per_gpu * states_per_param(w["bytes_per_grad"]), "memory_bytes": gpu["memory_gb"] * 1e9,
        "fits": per_gpu * states_per_param(w["bytes_per_grad"]) <= gpu["memory_gb"] * 1e9,
        "p2p_bytes": sequence_bytes * settings["micro_sequences"] / t,
        "p2p_s": sequence_bytes * settings["micro_sequences"] / t / link,
        "p2p_step_bytes": sequence_bytes * settings["micro_sequences"] / t * m * (v if drawn == INTERLEAVED else 1),
        "link_gbytes_per_s": link / 1e9,
    }
