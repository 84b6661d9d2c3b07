"""XIV.4's facts of one selection as plain data (the model's run and what is read off it), in the page's subset."""
# The page computes them compiled (generator/page/compiler.py) for the selection shown, the build in Python for the
# default (words.facts_data); the words (page_words) and rows (page_rows) read them. `presets` is the page data's.
import math

from generator.api import given, num, percent
from platelib.buckets import bucket_schedule, bucketed_tail_seconds
from platelib.cluster import cluster_domain, gradient_buckets, real_cluster
from platelib.collectives import group_node_gpus
from platelib.compute import continuous_crossing, efficiency, gpu_params, replica_counts, step_seconds, workshop_step
from platelib.layout import PUBLISHED, chosen_layout
from platelib.units import GB
from platelib.zero import forward_traffic, smallest_fitting_replicas, state_bytes_per_param, states_per_param

from .options import CAPTIONS, CUSTOM, FP32_BYTES, SHAPE, SHARDING


def copied(table):
    """A shallow copy of a dict."""
    out = {}
    for key in table:
        out[key] = table[key]
    return out


def presets_of(sel, presets):
    """The presets with the reader's own model, batch and network (id CUSTOM) and MFU where the selection gives
    them."""
    workshop = copied(presets["workshop"])
    if "mfu" in sel:
        workshop["mfu"] = sel["mfu"]
    models = copied(presets["models"])
    batches = copied(presets["batches"])
    networks = copied(presets["networks"])
    if sel["model"] == CUSTOM and "params" in sel:
        model = {"id": CUSTOM, "name": "custom " + given(sel["params"] / 1e9) + "B model", "params": sel["params"]}
        for key in SHAPE:
            model[key] = sel[key] if key in sel and sel[key] is not None else 0
        models[CUSTOM] = model
    if sel["batch"] == CUSTOM and "tokens" in sel:
        batches[CUSTOM] = {"id": CUSTOM, "name": num(sel["tokens"]) + " tokens", "tokens": sel["tokens"]}
    if sel["network"] == CUSTOM and "gbps" in sel:
        name = given(sel["gbps"]) + " GB/s"
        networks[CUSTOM] = {"id": CUSTOM, "name": name, "short": name, "link_gbytes_per_s": sel["gbps"],
                            "nvlink": False}
    return {"workshop": workshop, "gpus": presets["gpus"], "models": models, "batches": batches,
            "networks": networks, "layouts": presets["layouts"]}


def inputs(p, sel):
    """The model's inputs for a selection, in SI units, as doubles."""
    m = p["models"][sel["model"]]
    b = p["batches"][sel["batch"]]
    net = p["networks"][sel["network"]]
    gpu = p["gpus"][sel["gpu"]]
    w = p["workshop"]
    layout = chosen_layout(sel["layout"], m, p["layouts"])
    link = gpu["nvlink_gbytes_per_s"] if net["nvlink"] else net["link_gbytes_per_s"]
    return {"params": float(m["params"]), "batch_tokens": float(b["tokens"]), "link_bytes_per_s": link * 1e9,
            "nvlink_bytes_per_s": gpu["nvlink_gbytes_per_s"] * GB, "peak_flops": gpu["peak_tflops"] * 1e12,
            "memory_bytes": gpu["memory_gb"] * GB, "mfu": float(w["mfu"]),
            "bytes_per_grad": float(FP32_BYTES if sel["precision"] == "fp32" else w["bytes_per_grad"]),
            "hierarchical": sel["topology"] == "nodes", "backward_only": sel["overlap"] == "backward",
            "sharding": SHARDING.index(sel["sharding"]), "seq_len": float(w["seq_len"]),
            "tensor": float(layout["tensor"]), "pipeline": float(layout["pipeline"]),
            "gpus_per_replica": float(layout["tensor"] * layout["pipeline"])}


def point(x, n):
    """The model at one replica count: the workshop's step (platelib.compute.workshop_step) and each GPU's states."""
    made = workshop_step(x["params"], x["batch_tokens"], n, x["gpus_per_replica"], x["peak_flops"], x["mfu"],
                         x["bytes_per_grad"], x["link_bytes_per_s"], x["nvlink_bytes_per_s"], x["hierarchical"],
                         x["backward_only"], x["sharding"])
    compute = float(made[0])
    step = float(made[3])
    tokens = x["batch_tokens"] / n
    share = float(gpu_params(x["params"], x["gpus_per_replica"]))  # each GPU computes, reduces and keeps N/g
    states = float(state_bytes_per_param(x["sharding"], n, x["bytes_per_grad"])) * share
    return {"replicas": n, "compute_s": compute, "allreduce_s": float(made[1]), "comm_s": float(made[2]),
            "step_s": step, "exposed_s": step - compute, "efficiency": float(efficiency(compute, step)),
            "tokens_per_replica": tokens, "sequences_per_replica": tokens / x["seq_len"], "states_gb": states / GB,
            "states_bytes": states, "fits": states <= x["memory_bytes"]}


def caption(sel, p, presets):
    """The presets' names, then the GPU and options where they are not the workshop's, and an own MFU."""
    parts = [p["models"][sel["model"]]["name"], p["batches"][sel["batch"]]["name"],
             p["networks"][sel["network"]]["short"]]
    if sel["gpu"] != p["workshop"]["gpu"]:
        parts.append(p["gpus"][sel["gpu"]]["name"])
    layout = chosen_layout(sel["layout"], p["models"][sel["model"]], p["layouts"])
    if layout["tensor"] * layout["pipeline"] > 1:
        parts.append(layout["name"] + " per replica")
    for key in CAPTIONS:
        if sel[key] in CAPTIONS[key]:
            parts.append(CAPTIONS[key][sel[key]])
    if p["workshop"]["mfu"] != presets["workshop"]["mfu"]:
        parts.append("MFU " + percent(p["workshop"]["mfu"]))
    return " · ".join(parts)


def crossing_index(points):
    """The first replica index at which communication outlasts the compute it hides behind, -1 where none does."""
    for r in range(len(points)):
        if points[r]["step_s"] > points[r]["compute_s"]:
            return r
    return -1


def fitting_index(points):
    """The first replica index whose model states fit on the GPU, -1 where none does."""
    for r in range(len(points)):
        if points[r]["fits"]:
            return r
    return -1


def hypothetical_from(nvlink, domain, gpus_per_replica, max_replicas):
    """Over the GPU's own link, the replica count beyond which no real domain of it holds the replicas' GPUs (at
    least one replica), or None where that is past the grid or the network is not the GPU's link."""
    if not nvlink or domain is None:
        return None
    reach = max(1.0, domain / gpus_per_replica)
    if reach >= max_replicas:
        return None
    return int(reach) if reach == int(reach) else reach


def facts(selection, presets):
    """What the plate says about one selection {control: id} (and the reader's own values): the model's run at each
    replica count (points), what is read off it, DDP's buckets and the real cluster beside it."""
    sel = copied(selection)
    # a selection may leave out the workshop's GPU and DDP's defaults (bucket_cap_mb unset, one micro-batch)
    if "gpu" not in sel or not sel["gpu"]:
        sel["gpu"] = presets["workshop"]["gpu"]
    if "bucket" not in sel:
        sel["bucket"] = "default"
    if "micro" not in sel:
        sel["micro"] = "1"
    if "layout" not in sel:
        sel["layout"] = PUBLISHED
    p = presets_of(sel, presets)
    x = inputs(p, sel)
    counts = replica_counts(p["workshop"]["max_replicas"], x["gpus_per_replica"])
    replicas = []
    points = []
    for r in range(len(counts)):
        replicas.append(int(counts[r]))
        points.append(point(x, replicas[r]))
    crossing = crossing_index(points)
    share = float(gpu_params(x["params"], x["gpus_per_replica"]))
    node_gpus = int(group_node_gpus(x["gpus_per_replica"]))
    fitting = float(smallest_fitting_replicas(share, x["sharding"], x["memory_bytes"], x["bytes_per_grad"]))
    fits_at = fitting_index(points)
    gpu = p["gpus"][sel["gpu"]]
    network = p["networks"][sel["network"]]
    model = p["models"][sel["model"]]
    max_replicas = replicas[-1]
    domain = gpu["nvlink_domain"]
    layout = chosen_layout(sel["layout"], model, p["layouts"])
    f = {"selection": sel, "caption": caption(sel, p, presets), "points": points, "gpu": gpu, "network": network,
         "inputs": x, "model": model, "batch": p["batches"][sel["batch"]], "max_replicas": max_replicas,
         "layout": {"name": layout["name"], "tensor": layout["tensor"], "pipeline": layout["pipeline"],
                    "published": sel["layout"] == PUBLISHED and layout["tensor"] * layout["pipeline"] > 1},
         "states_per_param": float(states_per_param(x["bytes_per_grad"])),
         "crossing_replicas": None if crossing < 0 else replicas[crossing],
         "continuous_crossing": float(continuous_crossing(x["batch_tokens"], x["peak_flops"], x["mfu"],
                                                          x["bytes_per_grad"], x["link_bytes_per_s"],
                                                          x["nvlink_bytes_per_s"], x["hierarchical"],
                                                          x["backward_only"], x["sharding"], node_gpus)),
         "backward_only": x["backward_only"], "sharding_stage": x["sharding"],
         "smallest_fitting_replicas": None if math.isnan(fitting) else fitting,
         "smallest_fitting_on_grid": None if fits_at < 0 else replicas[fits_at],
         "hypothetical_from": hypothetical_from(network["nvlink"], domain, x["gpus_per_replica"], max_replicas),
         "gpu_memory_gb": gpu["memory_gb"]}
    f["timeline_replicas"] = f["crossing_replicas"] or max_replicas
    t = points[replicas.index(f["timeline_replicas"])]
    forward_comm = float(forward_traffic(x["sharding"], x["bytes_per_grad"])) * t["allreduce_s"]
    f["forward_comm_s"] = forward_comm
    f["timeline_comm_s"] = t["comm_s"] - forward_comm
    # DDP's buckets under the chosen bucket_cap_mb: the timeline's, and the real cluster's
    f["bucket_cap_mb"] = None if sel["bucket"] == "default" else float(sel["bucket"])
    made = gradient_buckets(model, layout, x["bytes_per_grad"], f["bucket_cap_mb"])
    sizes = made[0]
    ready = made[1]
    f["buckets"] = [sizes, ready]  # the timeline's and the real cluster's
    schedule = bucket_schedule(t["compute_s"], f["timeline_comm_s"], sizes, ready)
    f["bucket_schedule"] = [schedule[0], schedule[1]]
    compute = []
    for r in range(len(points)):
        compute.append(points[r]["compute_s"])
    f["cluster_domain"] = cluster_domain(network["nvlink"], gpu["nvlink_domain"], max_replicas)
    f["cluster"] = real_cluster(compute, sizes, ready, x["link_bytes_per_s"], x["nvlink_bytes_per_s"], replicas,
                                int(sel["micro"]), f["cluster_domain"],
                                x["gpus_per_replica"])
    reach = 0
    for r in range(len(replicas)):
        if f["cluster"]["step_s"][r] is not None:
            reach = replicas[r]
    f["cluster_reach"] = reach
    bucketed = max(0.0, forward_comm - t["compute_s"] / 3) + bucketed_tail_seconds(t["compute_s"], f["timeline_comm_s"],
                                                                                  sizes, ready)
    bound = float(step_seconds(t["compute_s"], t["comm_s"], True, forward_comm)) - t["compute_s"]
    f["forward_exposed_s"] = max(0.0, forward_comm - t["compute_s"] / 3) if x["backward_only"] else 0.0
    f["timeline_tail_s"] = bucketed if x["backward_only"] else t["exposed_s"]
    f["timeline_bound_s"] = bound if x["backward_only"] else f["timeline_tail_s"]
    return f
