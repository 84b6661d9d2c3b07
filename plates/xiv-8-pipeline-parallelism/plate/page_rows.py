"""Plate XIV.8's rows of one selection, written once: each dataset the figures' Vega specs read, and the selection's
CSV rows. The page runs them compiled (generator/compiler.py). f is page_facts.facts's dict."""
from .page_words import KIND_NAMES

OPS_DATA = "ops"  # Figure 1: every operation
LANES_DATA = "lanes"  # Figure 1: every operation; each stage's whole step (idle behind the blocks)
CURVES_DATA = "curves"  # Figure 2: the bubble against m per schedule
MARKS_DATA = "marks"  # Figure 2: the bubble against m per schedule; m = 4p and Llama 3 405B
HELD_DATA = "held"  # Figure 3: micro-batches held per stage per schedule
MOST_BLOCKS = 64  # passes per stage Figure 1 draws one by one; past it each is under 11 px wide, and drawn merged
BUSY = "passes too short to draw apart"  # Figure 1's kind for merged passes


def blocks(f):
    """Figure 1's blocks: every pass, or, with more than MOST_BLOCKS passes per stage, each run of passes a stage
    works through without a pause merged into one block."""
    rows = []
    if len(f["ops"]) <= MOST_BLOCKS * f["p"]:
        for op in f["ops"]:
            rows.append({"stage": op["stage"], "kind": KIND_NAMES[op["kind"]], "start": op["start"], "end": op["end"],
                         "micro": op["micro"]})
        return rows
    open_at = []
    for s in range(f["p"]):
        open_at.append(-1)
    for op in f["ops"]:
        s = op["stage"] - 1
        at = open_at[s]
        if at >= 0 and rows[at]["end"] >= op["start"] - 1e-12 * f["step_s"]:
            rows[at]["end"] = op["end"]
        else:
            open_at[s] = len(rows)
            rows.append({"stage": op["stage"], "kind": BUSY, "start": op["start"], "end": op["end"], "micro": 0})
    return rows


def datasets(f):
    """{dataset: rows} for each dataset the figures' Vega specs read."""
    ops = blocks(f)
    lanes = []
    for s in range(f["p"]):
        lanes.append({"stage": s + 1, "start": 0.0, "end": f["step_s"]})
    curves = []
    for point in f["curves"]:
        curves.append({"schedule": point["name"], "m": point["m"], "share": point["share"]})
    marks = [{"rule_m": f["rule_m"], "llama_m": f["llama_m"], "llama_share": f["llama_share"]}]
    held = []
    for one in f["each"]:
        for s in range(len(one["held"])):
            held.append({"schedule": one["name"], "stage": s + 1, "held": one["held"][s]})
    return {OPS_DATA: ops, LANES_DATA: lanes, CURVES_DATA: curves, MARKS_DATA: marks, HELD_DATA: held}


def csv_rows(f):
    """The selection's CSV rows, a row per schedule, under the site CSV's columns (CSV_COLUMNS in plate/__init__.py)."""
    sel = f["selection"]
    rows = []
    for one in f["each"]:
        if one["runs"]:
            rows.append([sel["layout"], sel["micro"], sel["chunks"], sel["model"], sel["gpu"], sel["network"],
                         one["schedule"], f["p"], f["m"], f["v"] if one["schedule"] == "interleaved" else 1,
                         one["step_s"], one["share"], one["most_held"], f["p2p_bytes"]])
    return rows
