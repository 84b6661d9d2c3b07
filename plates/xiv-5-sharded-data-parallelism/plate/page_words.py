"""Plate XIV.5's words, written once: the readout, each figure's description and data table of one selection.

The build calls these on the facts as plain data (page_facts.facts; generator/plate/texts.py), the page runs them compiled
(generator/page/compiler.py), so the page as built and the live page say the same. f is page_facts.facts's dict, W the
page data's words_context: of it they read only the plates this one refers to (plate.md's [plates]). Every number
written is one of the facts, formatted by generator.page.notation (the page's notation.js).
"""
from generator.api import data_size, num, seconds, sig
from platelib.zero import STATE_FIGURES

FIGURES = ["fig-states", "fig-traffic"]  # the figures the words know
TABLE_FIELDS = {"fig-states": "states_bytes", "fig-traffic": "traffic_bytes"}  # what each figure's table lists


def see_plate(W, subject):
    """' (plate XIV.3)' when the content names the plate on that subject, else nothing."""
    plate = W["plates"].get(subject)
    return " (plate " + plate + ")" if plate else ""


def replicas_word(n):
    return "replica" if n == 1 else "replicas"


def stages_text(stages):
    """'stage 3', 'stages 0, 1 and 2'."""
    if len(stages) == 1:
        return "stage " + str(stages[0])
    return "stages " + ", ".join([str(k) for k in stages[:len(stages) - 1]]) + " and " + str(stages[len(stages) - 1])


def states_size(value):
    """Model states in bytes, to STATE_FIGURES significant figures (144.5 GB), as every plate's sentences write them
    (the data tables keep three)."""
    return data_size(value, STATE_FIGURES)


def same_traffic(f):
    """Stages that send the same bytes at the selected precision, [[stages, ratio to the all-reduce]], least first."""
    groups = []  # in the order each ratio first comes (a list: a dict's keys would be strings in the page)
    for s in f["stages"]:
        found = False
        for group in groups:
            if group[1] == s["traffic_ratio"]:
                group[0].append(s["stage"])
                found = True
        if not found:
            groups.append([[s["stage"]], s["traffic_ratio"]])
    ordered = []  # by ratio, equal ratios in the order they came (as a stable sort would)
    for group in groups:
        at = len(ordered)
        while at > 0 and ordered[at - 1][1] > group[1]:
            at -= 1
        ordered.insert(at, group)
    return ordered


def fit_text(f):
    """Whether the selected stage's states fit one GPU, from how many replicas (GB = 10⁹ B, and as GiB)."""
    s = f["stages"][f["stage"]]
    memory = "one " + f["gpu"]["name"] + " GPU's " + num(f["gpu"]["memory_gb"]) + " GB (10⁹ B)"
    states = f["model"]["name"] + "'s model states"
    if s["smallest_fitting"] is None:
        floor = states_size(s["floor_bytes"])
        if f["stage"] == 0:
            kept = "all " + floor + " of them"
        else:
            kept = floor + " of them whole, however many replicas share the rest"
        return "Under stage " + str(f["stage"]) + ", " + states + " never fit in " + memory + ": every GPU keeps " + \
            kept + "."
    n = s["smallest_fitting"]
    gib = s["smallest_fitting_gib"]
    binary = ""
    if gib != n:
        binary = " (" + num(gib) + " if the memory is read as " + num(f["gpu"]["memory_gb"]) + " GiB, 2³⁰ B each)"
    where = "without being shared at all" if n == 1 else "once " + num(n) + " or more GPUs share them"
    return "Under stage " + str(f["stage"]) + ", " + states + " fit in " + memory + " " + where + binary + "."


def traffic_text(f, W):
    """What each GPU then sends per step as replicas grow, against plain data parallelism, and how long that takes."""
    s = f["stages"][f["stage"]]
    precision = f["precision_name"]
    sent = ("As replicas grow, each GPU's traffic per step, sent and received alike, approaches " +
            data_size(s["traffic_limit_bytes"]))
    if f["stage"] == 0:
        what = ": the ring all-reduce of its " + precision + " gradients"
    else:
        what = ", " + sig(s["traffic_ratio"]) + " times the ring all-reduce of " + precision + " gradients"
    speed = num(f["link_gbytes_per_s"]) + " GB/s per direction"
    link = f["gpu"]["interconnect"]
    if not f["network"]["nvlink"]:
        time = "At " + speed + " on the " + f["network"]["short"] + " network that takes " + \
            seconds(s["traffic_limit_s"]) + "."
    elif f["gpu"]["nvlink_domain"]:
        d = num(f["gpu"]["nvlink_domain"])
        time = "Over " + link + " (" + speed + ") one domain of " + d + " GPUs takes " + \
            seconds(s["domain_traffic_s"]) + "; " + link + " joins no more than " + d + " of them."
    else:
        time = "Over " + link + " (" + speed + ") that would take " + seconds(s["traffic_limit_s"]) + \
            ", were every GPU joined by it."
    latency = ""
    if f["stage"] > 0 and not f["network"]["nvlink"]:
        latency = " At " + num(f["latency_at"]) + " GPUs NCCL's cost model adds " + seconds(s["latency_at_s"]) + \
            " of latency per step: it has no tree for these calls, and " + \
            ("stage 1 is priced as FSDP's stage 2, a gather and a reduce-scatter per layer (DeepSpeed's buckets "
             "set its real count)." if f["stage"] == 1 else "FSDP makes them per layer.")
    return sent + what + ". " + time + latency


def left_out(W):
    """What the formulas leave out, so a reader does not take the numbers for a whole run's."""
    return "These count model states and traffic only: activations" + see_plate(W, "activations") + ", " + \
        "the weights a unit holds gathered while it computes, temporary buffers and overlap with compute are left out."


def readout(f, W):
    """The readout: one paragraph on memory, one on traffic."""
    return [fit_text(f), traffic_text(f, W) + " " + left_out(W)]


def fits(f, k):
    """How stage k fits, in words: from how many replicas, or not at all."""
    n = f["stages"][k]["smallest_fitting"]
    if n is None:
        return "stage " + str(k) + " never fits"
    return "stage " + str(k) + " fits from " + num(n) + " " + replicas_word(n)


def describe_states(f):
    """Figure (a) in words: stage 0's level against the GPU's memory, and where each sharded stage fits."""
    where = "under" if f["unsharded_bytes"] <= f["memory_bytes"] else "above"
    return "Model states per GPU against data-parallel replicas for ZeRO stages 0 to 3, log–log, " + \
        f["model"]["name"] + " on the " + f["gpu"]["name"] + ": stage 0 stays at " + \
        states_size(f["unsharded_bytes"]) + ", " + where + " the GPU's " + num(f["gpu"]["memory_gb"]) + \
        " GB (10⁹ B); " + ", ".join([fits(f, k) for k in [1, 2, 3]]) + "."


def describe_traffic(f):
    """Figure (b) in words: which stages send alike, how much, and how many times the all-reduce."""
    groups = same_traffic(f)
    base = groups[0]
    for group in groups:
        if 0 in group[0]:
            base = group
    if len(base[0]) > 1:
        alike = stages_text(base[0]) + " send the same"
    else:
        alike = "stage 0 sends its all-reduce"
    parts = [alike + ", approaching " + data_size(f["stages"][0]["traffic_limit_bytes"])]
    for group in groups:
        stages = group[0]
        if not (0 in stages):
            verb = "send" if len(stages) > 1 else "sends"
            parts.append(stages_text(stages) + " " + verb + " " + sig(group[1] / base[1]) + " times that, " +
                         "approaching " + data_size(f["stages"][stages[0]]["traffic_limit_bytes"]))
    shared = ""
    for group in groups:
        if len(group[0]) > 1:
            shared = " Stages that send the same bytes share one line, drawn in each stage's colour in turn."
    return "Bytes each GPU sends per step against data-parallel replicas, " + f["model"]["name"] + " with " + \
        f["precision_name"] + " gradients: " + "; ".join(parts) + " as replicas grow." + shared


def title(f, figure_id, W):
    """A figure's point for the selected stage, the line above it: from how many replicas its states fit one GPU,
    or how much it sends against plain data parallelism."""
    k = f["stage"]
    s = f["stages"][k]
    if figure_id == "fig-traffic":
        sent = data_size(s["traffic_limit_bytes"]) + " per GPU and step"
        group = [k]  # the selected stage and those that send the same, named together: one line in the figure
        for found in same_traffic(f):
            if k in found[0]:
                group = found[0]
        if 0 in group:
            if k == 0:
                if len(group) == 1:
                    return "Stage 0 sends " + sent + ": the ring all-reduce"
                return "S" + stages_text(group)[1:] + " send " + sent + ", the ring all-reduce's bytes"
            group = [g for g in group if g != 0]
        verb = " send " if len(group) > 1 else " sends "
        if s["traffic_ratio"] == f["stages"][0]["traffic_ratio"]:
            return "S" + stages_text(group)[1:] + verb + "as much as plain data parallelism, " + sent
        return "S" + stages_text(group)[1:] + verb + sig(s["traffic_ratio"] / f["stages"][0]["traffic_ratio"]) + \
            " times plain data parallelism's bytes, " + sent
    memory = "one " + f["gpu"]["name"] + "'s " + num(f["gpu"]["memory_gb"]) + " GB"
    n = s["smallest_fitting"]
    if n is None:
        return "Under stage " + str(k) + ", " + f["model"]["name"] + "'s states never fit in " + memory
    return "Under stage " + str(k) + ", " + f["model"]["name"] + "'s states fit in " + memory + " from " + num(n) + \
        " " + replicas_word(n)


def describe(f, figure_id, W):
    """A figure in words for one selection ('' for a figure the words do not know)."""
    if figure_id == "fig-states":
        return describe_states(f)
    if figure_id == "fig-traffic":
        return describe_traffic(f)
    return ""


def table_rows(f, figure_id):
    """A figure's data table for one selection, as text: a row per replica count, a column per stage ([] for a
    figure without a table)."""
    field = TABLE_FIELDS.get(figure_id)
    if field is None:
        return []
    rows = []
    for i in range(len(f["replicas"])):
        row = [num(f["replicas"][i])]
        for s in f["stages"]:
            row.append(data_size(s[field][i]))
        rows.append(row)
    return rows
