"""Plate XI.2's words, written once: the readout, each figure's description and data table of one selection.

The build runs these on page_facts.facts's dict, and the page runs them compiled (generator/page/compiler.py), so the page
as built and the live page say the same. W is the page data's words_context: the plates this one refers to
(plate.md's [plates]). Every number written is one of the facts, formatted by generator.page.notation.
"""
from generator.api import num, percent, seconds, sig

FIGURES = ["fig-steps", "fig-time"]  # the figures the words know
WAY_NAMES = {"per_replica": "a fixed batch per replica", "global": "a fixed global batch"}


def count(value):
    """A large count in words: 1.07 million, 80.0 billion, 3.20 trillion (to three figures), smaller ones whole."""
    if value >= 1e12:
        return sig(value / 1e12) + " trillion"
    if value >= 1e9:
        return sig(value / 1e9) + " billion"
    if value >= 1e6:
        return sig(value / 1e6) + " million"
    return num(value)


def edge(value):
    """A region's edge in words, to three figures like the critical batch it derives from: 267 thousand, not
    267,279 (a fit's two-figure constants give no more)."""
    if value >= 1e3 and value < 1e6:
        return sig(value / 1e3) + " thousand"
    return count(value)


def duration(value):
    """A time to the target in the unit that suits it: days, hours, minutes, else seconds."""
    if value >= 2 * 86400:
        return sig(value / 86400) + " days"
    if value >= 2 * 3600:
        return sig(value / 3600) + " hours"
    if value >= 120:
        return sig(value / 60) + " minutes"
    return seconds(value)


def plate_ref(W, subject):
    """'plate XIV.4' when plate.md names the plate on that subject, else ''."""
    plate = W["plates"].get(subject)
    return "plate " + plate if plate else ""


def critical_text(f):
    """Where the critical batch comes from, and what a run costs there."""
    if f["from_loss"]:
        where = "Kaplan et al.'s fit turns a target loss of " + sig(f["loss"]) + " nats per token into a critical " + \
            "batch of " + count(f["critical"]) + " tokens; the fit holds for their corpus and tokenizer, not for a loss " + \
            "measured on other data."
    else:
        where = "The critical batch is set to " + count(f["critical"]) + " tokens."
    ratio = f["steps_at_critical"] / f["min_steps"]
    return where + " A run with that batch takes " + sig(ratio) + " times the fewest steps, " + \
        num(f["steps_at_critical"]) + " instead of " + num(f["min_steps"]) + ", and " + \
        sig(f["tokens_at_critical"] / f["min_tokens"]) + " times the fewest tokens, " + \
        count(f["tokens_at_critical"]) + " instead of " + count(f["min_tokens"]) + "."


def regions_text(f):
    """What one doubling of the batch buys either side of B_crit."""
    return "Below " + edge(f["low_edge"]) + " tokens a doubling of the batch cuts the steps by " + \
        percent(f["cut_low"]) + " or more for at most " + percent(f["growth_low"]) + " more tokens; above " + \
        edge(f["high_edge"]) + " it cuts them by " + percent(f["cut_high"]) + " or less and adds " + \
        percent(f["growth_high"]) + " or more to the tokens."


def way_text(f, way, W):
    """One way to add replicas: where each doubling stops paying, and which limit stopped it."""
    if way["way"] == "per_replica":
        how = "With " + f["per_replica"]["name"] + " (" + num(f["per_replica"]["tokens"]) + " tokens each), " + \
            "adding replicas grows the global batch"
    else:
        how = "With a fixed global batch of " + f["batch"]["name"] + " (" + count(f["batch"]["tokens"]) + \
            "), adding replicas shrinks each one's share"
    if way["knee"] < 0:
        return how + ": every doubling up to " + num(f["max_replicas"]) + " replicas still saves " + \
            percent(f["saving"]) + " or more of the time to the target." + partial_text(f, way)
    if way["limit"] == "critical":
        at = way["knee"]
        why = "the critical batch: there the batch, " + count(way["knee_batch"]) + " tokens, is " + \
            sig(way["knee_batch"] / f["critical"]) + " times B_crit, and doubling it cuts the steps by only " + \
            percent(1 - way["steps"][at + 1] / way["steps"][at])
    else:
        ref = plate_ref(W, "data_parallelism")
        behind = "the backward pass" if f["step"] == "cluster" else "the compute"  # DDP's buckets: backward only
        why = "communication: the all-reduce no longer hides behind " + behind + (" (" + ref + ")" if ref else "")
    return how + ". Past " + num(way["knee_replicas"]) + " replicas (" + duration(way["knee_time_s"]) + \
        " to the target) each doubling saves less than " + percent(f["saving"]) + " of the time, a limit set by " + \
        why + "." + partial_text(f, way)


def runs_out_first(f, way):
    """Whether a fixed global batch's knee lies where a replica would hold less than a sequence: whole sequences run
    out first."""
    return way["way"] == "global" and way["knee"] >= 0 and way["knee_replicas"] > f["sequence_replicas"]


def partial_text(f, way):
    """With a fixed global batch, where the replicas stop getting a whole sequence each ('' if they never do)."""
    if way["way"] != "global" or f["sequence_replicas"] >= f["max_replicas"]:
        return ""
    text = " Beyond " + num(f["sequence_replicas"]) + " replicas each would hold less than one sequence of " + \
        num(f["seq_len"]) + " tokens, so that part of the line is arithmetic, not a layout a run can use"
    if runs_out_first(f, way):
        return text + "; the knee lies in it, so whole sequences run out at " + num(f["sequence_replicas"]) + \
            " replicas, before communication stops the line."
    return text + "."


def domain_text(f):
    """With the GPU's own link as the network, where a ring over it stops being one a vendor sells ('' if never)."""
    if f["link_domain"] == 0 or f["link_domain"] >= f["max_replicas"] * f["layout"]["gpus"]:
        return ""
    return " " + f["interconnect"] + " joins at most " + num(f["link_domain"]) + " of these GPUs (" + \
        f["link_domain_name"] + "): a ring over it past that many is hypothetical."


def readout(f, W):
    """The readout: the critical batch and its regions, then each way to add replicas."""
    return [critical_text(f) + " " + regions_text(f),
            way_text(f, f["ways"][0], W) + " " + way_text(f, f["ways"][1], W) + domain_text(f)]


def title(f, figure_id, W):
    """A figure's point for one selection, the line above it: where a bigger batch stops saving steps, or where
    adding replicas stops paying."""
    if figure_id == "fig-steps":
        return "Past the critical batch of " + count(f["critical"]) + " tokens, a bigger batch mostly adds tokens"
    parts = []
    for way in f["ways"]:
        if way["knee"] >= 0:
            limit = "the critical batch" if way["limit"] == "critical" else "communication"
            if runs_out_first(f, way):
                parts.append(WAY_NAMES[way["way"]] + " at " + num(f["sequence_replicas"]) + " (one sequence per " +
                             "replica; " + limit + " would stop it past " + num(way["knee_replicas"]) + ")")
            else:
                parts.append(WAY_NAMES[way["way"]] + " past " + num(way["knee_replicas"]) + " (" + limit + ")")
    if len(parts) == 0:
        return "Every doubling up to " + num(f["max_replicas"]) + " replicas still saves time, either way"
    return "Adding replicas stops paying with " + " and with ".join(parts)


def describe(f, figure_id, W):
    """A figure in words for one selection ('' for a figure the words do not know)."""
    if figure_id == "fig-steps":
        first = f["curve"][0]
        last = f["curve"][len(f["curve"]) - 1]
        return "Steps (left axis) and tokens (right axis) to the target against the global batch, all on log " + \
            "scales, for a critical batch of " + count(f["critical"]) + " tokens: the steps fall from " + \
            count(first["steps"]) + " at " + count(first["batch"]) + " tokens toward " + num(f["min_steps"]) + \
            ", the tokens rise from near " + count(f["min_tokens"]) + " to " + count(last["tokens"]) + " at " + \
            count(last["batch"]) + "; the two cross at the critical batch, each twice its least. Shaded: below " + \
            edge(f["low_edge"]) + " and above " + edge(f["high_edge"]) + " tokens."
    if figure_id == "fig-time":
        parts = []
        for way in f["ways"]:
            # in hours, the axis's unit, so that a sentence holds one unit
            text = WAY_NAMES[way["way"]] + " from " + sig(way["time_s"][0] / 3600) + " hours on one replica to " + \
                sig(way["time_s"][len(way["time_s"]) - 1] / 3600) + " hours on " + num(f["max_replicas"])
            if way["knee"] >= 0:
                text = text + ", levelling off past " + num(way["knee_replicas"])
            if way["way"] == "global" and f["sequence_replicas"] < f["max_replicas"]:
                text = text + " (a whole sequence each only up to " + num(f["sequence_replicas"]) + ")"
            parts.append(text)
        layout = ""
        if f["layout"]["gpus"] > 1:
            layout = " in replicas of " + f["layout"]["name"] + " (" + num(f["layout"]["gpus"]) + " GPUs)"
        return "Time to the target against data-parallel replicas, log–log, " + f["model"]["name"] + " on the " + \
            f["gpu"]["name"] + " over " + f["network"]["short"] + layout + ", each step " + f["step_name"] + ": " + \
            "; ".join(parts) + "."
    return ""


def table_rows(f, figure_id):
    """A figure's data table for one selection, as text ([] for a figure the words do not know)."""
    rows = []
    if figure_id == "fig-steps":
        for point in f["curve"]:
            rows.append([count(point["batch"]), count(point["steps"]), count(point["tokens"])])
    if figure_id == "fig-time":
        for i in range(len(f["replicas"])):
            rows.append([num(f["replicas"][i]), duration(f["ways"][0]["time_s"][i]),
                         duration(f["ways"][1]["time_s"][i])])
    return rows
