"""Plate XIV.8's words, written once: the readout, each figure's title, description and data table of one selection.
The build runs these on page_facts.facts's dict and the page runs them compiled (generator/compiler.py). W is the
page data's words_context: the plates this one refers to (plate.md's [plates]). Every number is one of the facts,
written by generator.notation."""
from generator.api import data_size, num, percent, seconds, sig

FIGURES = ["fig-schedule", "fig-bubble", "fig-step"]  # the figures the words know
KIND_NAMES = ["forward", "backward", "weight gradient"]


def count(value):
    """A parameter count in words: 3.17 billion, 109 million."""
    if value >= 1e9:
        return sig(value / 1e9) + " billion"
    if value >= 1e6:
        return sig(value / 1e6) + " million"
    return num(value)


def held(value):
    """Micro-batches held: whole ones as a count (4), chunks' shares to three figures (5.50)."""
    if value == int(value):
        return num(value)
    return sig(value)


def held_micro(value):
    """'1 micro-batch', '4 micro-batches', '5.50 micro-batches'."""
    return held(value) + (" micro-batch" if value == 1 else " micro-batches")


def plate_ref(W, subject):
    """'plate XIV.4' when plate.md names the plate on that subject, else ''."""
    plate = W["plates"].get(subject)
    return "plate " + plate if plate else ""


def micro(value):
    """'1 micro-batch', '8 micro-batches'."""
    return num(value) + (" micro-batch" if value == 1 else " micro-batches")


def held_text(f):
    """What the drawn schedule keeps in flight, stage by stage."""
    if f["most_held"] == f["least_held"]:
        return "every stage holds the activations of " + held_micro(f["most_held"]) + " at its peak"
    return "the first stage holds the activations of " + held_micro(f["held"][0]) + " at its peak and the " + \
        "last " + held(f["held"][len(f["held"]) - 1])


def readout(f, W):
    """The bubble's share, the micro-batches a 10% bubble needs, and what the schedule holds in flight."""
    first = ""
    if not f["runs"]:
        first = "Interleaving needs the micro-batches to be a multiple of the " + num(f["p"]) + " stages, so this " + \
            "step is drawn as plain 1F1B. "
    name = f["drawn_name"] + (" with " + num(f["chunks_drawn"]) + " chunks per GPU" if f["chunks_drawn"] > 1 else "")
    one = first + "With " + num(f["p"]) + " stages and " + micro(f["m"]) + " per step, " + name + " leaves each " + \
        "GPU idle for " + percent(f["share"]) + " of the step, " + seconds(f["idle_s"]) + " of " + \
        seconds(f["step_s"]) + ". It needs " + micro(f["fewest"]) + " per step to bring that to " + \
        percent(f["target"]) + "; " + held_text(f) + "."
    who = "each stage but the last sends the next "
    if f["t"] > 1:
        who = "each GPU of every stage but the last sends its peer in the next "
    share = " (its 1/" + num(f["t"]) + " share under tensor parallelism)" if f["t"] > 1 else ""
    more = "; interleaving sends " + num(f["chunks_drawn"]) + " times as many" if f["chunks_drawn"] > 1 else ""
    two = "Per micro-batch, " + who + data_size(f["p2p_bytes"]) + " of activations" + share + ", and gets as " + \
        "many bytes of gradients back: " + seconds(f["p2p_s"]) + " each way at " + num(f["link_gbytes_per_s"]) + \
        " GB/s, beside a forward pass of " + seconds(f["forward_s"]) + more + "."
    if not f["fits"]:
        ref = plate_ref(W, "sharding")
        two = two + " Mind the memory: each GPU's model states alone, " + data_size(f["states_bytes"]) + \
            ", pass the " + data_size(f["memory_bytes"]) + " of one " + f["gpu"]["name"] + "; a run would use " + \
            "more stages or tensor parallelism, or shard them" + (" (" + ref + ")" if ref else "") + "."
    return [one, two]


def title(f, figure_id, W):
    """A figure's point for one selection, the line above it."""
    if figure_id == "fig-schedule":
        return f["drawn_name"] + " on " + num(f["p"]) + " stages: idle " + percent(f["share"]) + " of the step"
    if figure_id == "fig-bubble":
        return "At " + num(f["p"]) + " stages, " + micro(f["fewest"]) + " bring " + f["drawn_name"] + \
            "'s bubble to " + percent(f["target"])
    best = None
    for one in f["each"]:
        if one["runs"] and (best is None or one["step_s"] < best["step_s"]):
            best = one
    return "The shortest step: " + best["name"] + ", " + seconds(best["step_s"]) + " for " + micro(f["m"])


def describe(f, figure_id, W):
    """A figure in words for one selection."""
    if figure_id == "fig-schedule":
        return "Each of the " + num(f["p"]) + " rows is a stage; each block one micro-batch's forward" + \
            (", input gradient or weight gradient" if f["drawn"] == "zb-h1" else " or backward pass") + \
            " on it, placed in time as " + \
            f["drawn_name"] + " runs them; the grey behind the blocks is idle time. The step takes " + \
            seconds(f["step_s"]) + ", of which each stage computes for " + seconds(f["busy_s"]) + "."
    if figure_id == "fig-bubble":
        parts = []
        for one in f["each"]:
            last = None
            first = None
            for point in f["curves"]:
                if point["schedule"] == one["schedule"]:
                    if first is None:
                        first = point
                    last = point
            if first is not None:
                parts.append(one["name"] + " from " + percent(first["share"]) + " at " + micro(first["m"]) + " to " +
                             percent(last["share"]) + " at " + num(last["m"]))
        return "The idle share of a step against micro-batches per step, at " + num(f["p"]) + " stages: " + \
            "; ".join(parts) + ". A dashed line marks m = " + num(f["rule_factor"]) + "p = " + num(f["rule_m"]) + \
            "; the diamond, Llama 3 405B's " + num(f["llama_p"]) + " stages with " + num(f["llama_m"]) + \
            " micro-batches under 1F1B, " + percent(f["llama_share"]) + "."
    parts = []
    for one in f["each"]:
        if one["runs"]:
            parts.append(one["name"] + " " + seconds(one["step_s"]) + " a step, at most " + held(one["most_held"]) +
                         " micro-batches held, " + data_size(one["sends"] * f["p2p_bytes"]) + " a step over each " +
                         "boundary, per GPU and direction")
        else:
            parts.append(one["name"] + " does not run with " + micro(f["m"]))
    return "Micro-batches whose activations each stage holds at its peak, stage by stage, " + f["model"]["name"] + \
        " on " + f["layout"]["name"] + " (" + count(f["per_gpu_params"]) + " parameters per GPU): " + \
        "; ".join(parts) + "."


def table_rows(f, figure_id):
    """A figure's data table for one selection, as text."""
    rows = []
    if figure_id == "fig-schedule":
        for s in range(f["p"]):
            rows.append([num(s + 1), seconds(f["first_s"][s]), seconds(f["last_s"][s]),
                         percent(1 - f["busy_s"] / f["step_s"])])
    if figure_id == "fig-bubble":
        counts = []
        for point in f["curves"]:
            if point["m"] not in counts:
                counts.append(point["m"])
        for m in counts:
            row = [num(m)]
            for one in f["each"]:
                cell = "–"  # interleaving needs m a multiple of p
                for point in f["curves"]:
                    if point["schedule"] == one["schedule"] and point["m"] == m:
                        cell = percent(point["share"])
                row.append(cell)
            rows.append(row)
    if figure_id == "fig-step":
        for one in f["each"]:
            if one["runs"]:
                rows.append([one["name"], seconds(one["step_s"]), percent(one["share"]), held(one["held"][0]),
                             held(one["most_held"]), data_size(one["sends"] * f["p2p_bytes"])])
    return rows
