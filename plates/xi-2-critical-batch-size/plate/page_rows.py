"""Plate XI.2's rows of one selection, written once: each dataset the figures' Vega specs read, and the selection's
CSV rows. The build draws the figures and writes the site's CSV from these; the page runs them compiled
(generator/page/compiler.py). f is page_facts.facts's dict."""
from generator.api import percent

from .page_words import WAY_NAMES, count

CURVE_DATA, CRITICAL_DATA = "curve", "critical"  # Figure 1: S(B) and E(B); B_crit and the shaded regions
TIME_DATA, KNEE_DATA = "time", "knees"  # Figure 2: time to the target per way and replica count; each way's knee


def datasets(f):
    """{dataset: rows} for each dataset the figures' Vega specs read."""
    curve = [{"batch": p["batch"], "steps": p["steps"], "tokens": p["tokens"]} for p in f["curve"]]
    critical = [{"critical": f["critical"], "low": f["low_edge"], "high": f["high_edge"],
                 "smallest": f["smallest_batch"], "largest": f["largest_batch"],
                 "label": "critical batch: " + count(f["critical"]),
                 "low_label": "doubling B:\n≥" + percent(f["cut_low"]) + " fewer\nsteps",
                 "high_label": "doubling B:\n≥" + percent(f["growth_high"]) + " more\ntokens"}]
    time = []
    knees = []
    for way in f["ways"]:
        for i in range(len(f["replicas"])):
            time.append({"replicas": f["replicas"][i], "hours": way["time_s"][i] / 3600, "way": WAY_NAMES[way["way"]]})
        if way["knee"] >= 0:
            knees.append({"replicas": way["knee_replicas"], "hours": way["knee_time_s"] / 3600,
                          "way": WAY_NAMES[way["way"]], "lower": way["way"] == "per_replica",
                          "text": "limit: " + ("critical batch" if way["limit"] == "critical" else "communication")})
    return {CURVE_DATA: curve, CRITICAL_DATA: critical, TIME_DATA: time, KNEE_DATA: knees}


def csv_rows(f):
    """The selection's CSV rows, a row per way and replica count, under the site CSV's columns (CSV_COLUMNS in
    plate/__init__.py): the selection's ids, B_crit, way, replicas, global batch, steps, step time, time."""
    sel = f["selection"]
    rows = []
    for way in f["ways"]:
        for i in range(len(f["replicas"])):
            rows.append([sel["critical"], sel["size"], sel["model"], sel["gpu"], sel["network"], sel["batch"],
                         sel["per_replica"], f["critical"], way["way"], f["replicas"][i], way["batch"][i],
                         way["steps"][i], way["step_s"][i], way["time_s"][i]])
    return rows
