"""Plate XIV.5's rows of one selection, written once: each dataset the figures' Vega specs read, and the selection's
CSV rows. The build draws the figures and writes the site's CSV from these; the page runs them compiled
(generator/page/compiler.py). f is page_facts.facts's dict."""
import numpy as np

from generator.api import num

from .page_words import same_traffic, stages_text

STATES_DATA, MEMORY_DATA = "states", "memory"  # each stage's states per GPU at each replica count; the GPU's line
TRAFFIC_DATA, TRAFFIC_LABELS = "traffic", "traffic_labels"  # bytes per GPU per step; a label per group of stages
LABEL_AT = 64  # replicas where the states figure names its lines: far enough along that they have come apart
STEEP_DECADES = 0.1  # a line falling more than this in one step would run through words set below it


def stage_name(k):
    return "stage " + str(k)


def label_index(f):
    """The index of the first replica count from LABEL_AT (or of the largest, when that is smaller)."""
    replicas = f["replicas"]
    at = 0
    while at < len(replicas) and replicas[at] < min(LABEL_AT, f["max_replicas"]):
        at += 1
    return at


def states_span(f):
    """[lowest, highest] GB the states figure spans: from a third of the least of stage 3 where its name is, the
    floor stage 2 keeps and the GPU's memory, to twice stage 0; stage 3 runs out of the foot beyond. Spanning all
    of stage 3 (down to a few MB) squeezed stages 0 to 2 into the top band."""
    at = min(label_index(f), len(f["replicas"]) - 1)
    last = len(f["replicas"]) - 1
    low = min(f["stages"][3]["states_bytes"][at], f["stages"][2]["states_bytes"][last], f["memory_bytes"]) / 3
    return [low / 1e9, f["unsharded_bytes"] * 2 / 1e9]


def label_above(f):
    """Whether each stage's name goes above its line at LABEL_AT: into the wider gap to the lines next to it."""
    # In decades; stage order keeps the lines in order. Never below a line falling steeply through words set right
    # of the point. The ZeRO formulas fix the gaps' ratios at a given n, so the narrow gaps (under two names'
    # height) hold one name at most: the tests check it over every selection.
    replicas = f["replicas"]
    at = 0  # the first replica count from LABEL_AT (or the largest, when that is smaller)
    while at < len(replicas) and replicas[at] < min(LABEL_AT, f["max_replicas"]):
        at += 1
    level = [np.log10(s["states_bytes"][at]) for s in f["stages"]]
    out = []
    for k in range(len(level)):
        y = level[k]
        up = level[k - 1] - y if k > 0 else np.inf
        down = y - level[k + 1] if k + 1 < len(level) else np.inf
        if at + 1 < len(replicas) and y - np.log10(f["stages"][k]["states_bytes"][at + 1]) > STEEP_DECADES:
            down = 0.0  # it falls through words set below it
        out.append(bool(up >= down))
    return out


def stage_rows(f, field, key, above):
    """One row per stage and replica count: the stage's field at that count in GB (10⁹ B), under key; with above
    (label_above's list), where the stage's name goes."""
    rows = []
    for s in f["stages"]:
        for i in range(len(f["replicas"])):
            row = {"replicas": f["replicas"][i], "stage": stage_name(s["stage"])}
            row[key] = s[field][i] / 1e9
            row["selected"] = s["stage"] == f["stage"]
            if above is not None:
                row["label_above"] = above[s["stage"]]
            rows.append(row)
    return rows


def datasets(f):
    """{dataset: rows} for each dataset the figures' Vega specs read."""
    last = len(f["replicas"]) - 1
    labels = []
    for group in same_traffic(f):
        stages = group[0]
        labels.append({"replicas": f["max_replicas"],
                       "traffic_gb": f["stages"][stages[0]]["traffic_bytes"][last] / 1e9,
                       "text": stages_text(stages), "stage": stage_name(stages[0])})
    return {
        STATES_DATA: stage_rows(f, "states_bytes", "states_gb", label_above(f)),
        MEMORY_DATA: [{"memory_gb": f["memory_bytes"] / 1e9, "replicas": f["max_replicas"],
                       "low_gb": states_span(f)[0], "high_gb": states_span(f)[1],
                       "label_above": f["unsharded_bytes"] <= f["memory_bytes"],
                       "gpu_label": f["gpu"]["name"] + " memory: " + num(f["gpu"]["memory_gb"]) + " GB"}],
        TRAFFIC_DATA: stage_rows(f, "traffic_bytes", "traffic_gb", None),
        TRAFFIC_LABELS: labels,
    }


def csv_rows(f):
    """The selection's CSV rows, a row per stage and replica count, under the site CSV's columns (hooks.CSV_COLUMNS):
    model, gpu, precision, network, stage, replicas, states_gb, traffic_gb, traffic_s, latency_s, hypothetical ("yes"
    where the times are over an NVLink wider than any built)."""
    sel = f["selection"]
    rows = []
    for s in f["stages"]:
        for i in range(len(f["replicas"])):
            rows.append([sel["model"], sel["gpu"], sel["precision"], sel["network"], s["stage"], f["replicas"][i],
                         s["states_bytes"][i] / 1e9, s["traffic_bytes"][i] / 1e9, s["traffic_s"][i],
                         s["latency_s"][i], "yes" if f["hypothetical"][i] else "no"])
    return rows
