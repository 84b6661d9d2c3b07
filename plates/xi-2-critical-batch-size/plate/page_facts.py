"""Plate XI.2's model and the facts of one selection as plain data, written once: the build runs these functions,
and the page runs them compiled (generator/page/compiler.py), so this module keeps to the Python the page runs.

Steps and tokens to a target loss against the global batch B (McCandlish et al. 2018): S(B) = S_min·(1 + B_crit/B),
E(B) = E_min·(1 + B/B_crit), E_min = S_min·B_crit. A step's time on n replicas is the series' (platelib, as plate
XIV.4 states it): the workshop's bound (compute beside a flat ring all-reduce) or DDP on a real cluster (buckets
priced by NCCL's cost model), for replicas laid out over t × p GPUs; never written here.
"""
import numpy as np

from platelib.cluster import cluster_domain, gradient_buckets, real_cluster
from platelib.compute import compute_seconds, gpu_params, replica_counts, workshop_step
from platelib.layout import chosen_layout

# The plate's controls in the page's order: {key: the presets table of its choices}. model, gpu, network, batch and
# layout are the series catalogue's; step is the plate's (STEPS), the others its presets.toml's.
CONTROLS = {"critical": "critical", "size": "size", "model": "models", "gpu": "gpus", "network": "networks",
            "batch": "batches", "per_replica": "per_replica", "layout": "layout_choices", "step": "steps"}
WAYS = ["per_replica", "global"]  # Figure 2's two ways to add replicas
# What a step costs: the workshop's bound, or DDP on a real cluster as plate XIV.4 prices it (its dash-dotted line).
STEPS = {"workshop": {"name": "the workshop's bound"}, "cluster": {"name": "DDP on a real cluster"}}


def steps(min_steps, critical, batch):
    """S(B) = S_min·(1 + B_crit/B): the optimiser steps to the target with a global batch of B tokens."""
    return min_steps * (1 + critical / batch)


def tokens(min_tokens, critical, batch):
    """E(B) = E_min·(1 + B/B_crit): the tokens processed to reach the target with a global batch of B."""
    return min_tokens * (1 + batch / critical)


def kaplan_critical(loss, b_star, alpha):
    """Kaplan et al.'s fit B_crit(L) ≈ B*/L^(1/α_B), in tokens, L in nats per token of their corpus and tokenizer."""
    return b_star / loss ** (1 / alpha)


def step_time(params, batch, replicas, gpus_per_replica, peak_flops, mfu, bytes_per_grad, link, nvlink):
    """One step of the workshop (whole-step overlap, flat ring, no sharding; platelib.compute.workshop_step) for a
    global batch on n replicas of g GPUs: the compute, plus whatever of the gradients' all-reduce outlasts it."""
    return workshop_step(params, batch, replicas, gpus_per_replica, peak_flops, mfu, bytes_per_grad, link, nvlink,
                         False, False, 0)[3]


def cluster_times(run, batches_, replicas):
    """The real cluster's step at each replica count for each count's global batch (platelib.cluster.real_cluster:
    DDP's buckets of the layout's GPU, one micro-batch, bucket_cap_mb unset), None where it is not priced (past an
    NVLink domain, when the network is the GPU's own link)."""
    compute = []
    for i in range(len(replicas)):
        compute.append(float(compute_seconds(gpu_params(run["params"], run["gpus"]), batches_[i], replicas[i],
                                             run["peak_flops"], run["mfu"])))
    made = real_cluster(compute, run["buckets"][0], run["buckets"][1], run["link"], run["nvlink"], replicas, 1,
                        run["domain"], run["gpus"])
    out = []
    for i in range(len(replicas)):
        # one replica reduces nothing: its step is its compute, even where its GPUs outgrow an NVLink domain
        out.append(compute[i] if replicas[i] == 1 and made["step_s"][i] is None else made["step_s"][i])
    return out


def batches(critical, span):
    """Figure 1's batch axis: B_crit·2^k for k = −span … span; S/S_min and E/E_min are mirror images on it."""
    return [critical * 2 ** k for k in range(-span, span + 1)]


def knee(times, replicas, saving):
    """The index of the replica count past which every doubling saves less than `saving` of the time; -1 when the
    last doubling on the axis still saves that much."""
    at = len(times) - 1
    while at > 0 and 1 - times[at] / times[at - 1] < saving:
        at -= 1
    if at == len(times) - 1:
        return -1
    return at


def limit_of(batch, doubled_batch, steps_ratio, step_ratio):
    """Which limit keeps a doubling of the replicas from halving the time: 'critical' when the steps fall short of
    falling as 1/B (the batch is past B_crit) by more than the step falls short of its compute's share, else
    'communication' (the all-reduce outlasts the compute). Each ratio is after/before the doubling."""
    grown = doubled_batch / batch  # 2 with a fixed batch per replica, 1 with a fixed global batch
    steps_short = np.log(steps_ratio * grown)  # 0 while S ∝ 1/B
    step_short = np.log(step_ratio * 2 / grown)  # 0 while the step is its compute, which is ∝ B/n
    return "critical" if steps_short > step_short else "communication"


def way_facts(way, per_tokens, global_tokens, replicas, run, saving, step):
    """One way to add replicas over the replica axis, a step as `step` prices it (STEPS): the global batch, steps,
    step time and time to the target at each count the step is priced at, its knee and which limit set it
    ('critical': the steps stopped falling; 'communication': the step stopped shrinking, or grew)."""
    every = []
    for n in replicas:
        every.append(per_tokens * n if way == "per_replica" else global_tokens)
    if step == "cluster":
        priced = cluster_times(run, every, replicas)
    else:
        priced = [float(step_time(run["params"], every[i], replicas[i], run["gpus"], run["peak_flops"], run["mfu"],
                                  run["bytes_per_grad"], run["link"], run["nvlink"])) for i in range(len(replicas))]
    counts = []
    batch = []
    step_list = []
    step_s = []
    time_s = []
    for i in range(len(replicas)):
        if priced[i] is not None:
            b = every[i]
            s = steps(run["min_steps"], run["critical"], b)
            counts.append(replicas[i])
            batch.append(b)
            step_list.append(s)
            step_s.append(priced[i])
            time_s.append(float(s * priced[i]))
    at = knee(time_s, counts, saving)
    limit = ""
    if at >= 0:
        limit = limit_of(batch[at], batch[at + 1], step_list[at + 1] / step_list[at], step_s[at + 1] / step_s[at])
        if limit == "critical" and 1 - step_list[at + 1] / step_list[at] >= saving:
            limit = "communication"  # the steps alone still save enough: a longer step is what stops the doubling
    return {"way": way, "replicas": counts, "batch": batch, "steps": step_list, "step_s": step_s, "time_s": time_s,
            "knee": at, "knee_replicas": counts[at] if at >= 0 else None, "limit": limit,
            "knee_time_s": time_s[at] if at >= 0 else None, "knee_batch": batch[at] if at >= 0 else None}


def cut(critical, batch):
    """How much of the steps one doubling of the batch from B saves: 1 − S(2B)/S(B) (S_min cancels)."""
    return 1 - steps(1, critical, 2 * batch) / steps(1, critical, batch)


def growth(critical, batch):
    """How much one doubling of the batch from B adds to the tokens: E(2B)/E(B) − 1."""
    return tokens(1, critical, 2 * batch) / tokens(1, critical, batch) - 1


def facts(selection, presets):
    """One selection's facts: the critical batch, S(B) and E(B) over the batch axis, the doubling cuts either side
    of B_crit, and the time to the target on every replica count both ways."""
    settings = presets["settings"]
    crit = presets["critical"][selection["critical"]]
    size = presets["size"][selection["size"]]
    m = presets["models"][selection["model"]]
    gpu = presets["gpus"][selection["gpu"]]
    net = presets["networks"][selection["network"]]
    batch = presets["batches"][selection["batch"]]
    per = presets["per_replica"][selection["per_replica"]]
    w = presets["workshop"]
    layout = chosen_layout(selection["layout"], m, presets["layouts"])
    gpus = layout["tensor"] * layout["pipeline"]
    step = selection["step"]
    from_loss = crit["loss"] is not None
    if from_loss:
        critical = kaplan_critical(crit["loss"], settings["kaplan_b_star"], settings["kaplan_alpha_b"])
    else:
        critical = crit["tokens"] * 1.0
    min_steps = size["min_steps"]
    min_tokens = min_steps * critical
    factor = settings["region_factor"]
    axis = batches(critical, settings["span_doublings"])
    curve = [{"batch": b, "steps": steps(min_steps, critical, b), "tokens": tokens(min_tokens, critical, b)}
             for b in axis]
    link = (gpu["nvlink_gbytes_per_s"] if net["nvlink"] else net["link_gbytes_per_s"]) * 1e9
    replicas = [int(n) for n in replica_counts(w["max_replicas"], gpus)]
    run = {"params": m["params"] * 1.0, "peak_flops": gpu["peak_tflops"] * 1e12, "mfu": w["mfu"],
           "bytes_per_grad": w["bytes_per_grad"], "link": link, "nvlink": gpu["nvlink_gbytes_per_s"] * 1e9,
           "min_steps": min_steps, "critical": critical, "gpus": gpus,
           "domain": cluster_domain(net["nvlink"], gpu["nvlink_domain"], replicas[len(replicas) - 1])}
    if step == "cluster":
        run["buckets"] = gradient_buckets(m, layout, w["bytes_per_grad"], None)
    per_tokens = per["sequences"] * w["seq_len"]
    saving = settings["knee_saving"]
    chosen = {}
    for key in CONTROLS:
        chosen[key] = selection[key]
    ways = [way_facts(way, per_tokens, batch["tokens"], replicas, run, saving, step) for way in WAYS]
    priced = ways[0]["replicas"]  # the counts the step is priced at, both ways alike (the cluster's stop at a domain)
    return {
        "selection": chosen,
        "caption": "critical batch " + crit["name"] + " · " + size["name"] + " · " + m["name"] + " · " +
        gpu["name"] + " · " + net["short"] + " · global batch " + batch["name"] + " · " + per["name"] +
        (" · " + layout["name"] + " per replica" if gpus > 1 else "") +
        (" · DDP on a real cluster" if step == "cluster" else ""),
        "critical": critical, "from_loss": from_loss, "loss": crit["loss"], "critical_name": crit["name"],
        "b_star": settings["kaplan_b_star"], "alpha": settings["kaplan_alpha_b"],
        "halving_loss_factor": 2 ** settings["kaplan_alpha_b"],
        "min_steps": min_steps, "min_tokens": min_tokens,
        "steps_at_critical": steps(min_steps, critical, critical),
        "tokens_at_critical": tokens(min_tokens, critical, critical),
        "factor": factor, "low_edge": critical / factor, "high_edge": critical * factor,
        "cut_low": cut(critical, critical / factor), "growth_low": growth(critical, critical / factor),
        "cut_high": cut(critical, critical * factor), "growth_high": growth(critical, critical * factor),
        "claim_factor": settings["claim_factor"],
        "cut_below": cut(critical, critical / settings["claim_factor"]),
        "cut_above": cut(critical, critical * settings["claim_factor"]),
        "steps_below": steps(min_steps, critical, critical / settings["claim_factor"]),
        "steps_below_doubled": steps(min_steps, critical, 2 * critical / settings["claim_factor"]),
        "steps_above": steps(min_steps, critical, critical * settings["claim_factor"]),
        "steps_above_doubled": steps(min_steps, critical, 2 * critical * settings["claim_factor"]),
        "curve": curve, "smallest_batch": axis[0], "largest_batch": axis[len(axis) - 1],
        "model": {"name": m["name"], "params": m["params"]}, "gpu": {"name": gpu["name"]},
        "network": {"name": net["name"], "short": net["short"]},
        # a ring over the GPU's own link joins no more GPUs than the vendor's largest domain of it (0: the network)
        "link_domain": gpu["nvlink_domain"] if net["nvlink"] and gpu["nvlink_domain"] else 0,
        "link_domain_name": gpu["nvlink_domain_name"], "interconnect": gpu["interconnect"],
        "batch": {"name": batch["name"], "tokens": batch["tokens"]},
        # the most replicas a fixed global batch gives a whole sequence each; past it the line is arithmetic
        "sequence_replicas": batch["tokens"] // w["seq_len"],
        "per_replica": {"name": per["name"], "sequences": per["sequences"], "tokens": per_tokens},
        "seq_len": w["seq_len"], "replicas": priced, "max_replicas": priced[len(priced) - 1],
        "saving": saving, "step": step, "step_name": STEPS[step]["name"],
        "layout": {"name": layout["name"], "gpus": gpus, "tensor": layout["tensor"], "pipeline": layout["pipeline"],
                   "published": selection["layout"] != layout["id"] and gpus > 1},
        "ways": ways,
    }
