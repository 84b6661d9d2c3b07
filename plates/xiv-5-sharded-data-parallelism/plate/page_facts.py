"""Plate XIV.5's facts of one selection as plain data, written once: what its words, figures' rows and CSV rows read.

The page computes them from the presets the build wrote into it (the page data's `presets`: facts.presets_data);
the build calls the same function for a selection's words, rows and CSV (facts.facts_data). Each number is one of
plate/model.py's formulas at one replica count.
"""
import math

from platelib.compute import replica_counts
from platelib.units import GB, GIB


from .model import (LATENCY_AT, STAGES as STAGE_NUMBERS, kept_bytes, latency_seconds, node_gpus, smallest_replicas,
                    state_bytes, traffic_bytes, traffic_limit_bytes, traffic_ratio, traffic_seconds)

# The plate's controls beyond the presets: {key: {id: label}}, the default first. Stage ids are XIV.4's Sharding
# ids, so that XIV.4's `sharding=zero3` names the same stage here.
STAGES = {"none": "stage 0: plain data parallelism", "zero1": "stage 1: optimiser states",
          "zero2": "stage 2: + gradients", "zero3": "stage 3: + weights (FSDP FULL_SHARD)"}
PRECISIONS = {"bf16": "BF16", "fp32": "FP32"}
GRAD_BYTES = {"bf16": 2, "fp32": 4}
CONTROLS = ["model", "gpu", "stage", "precision", "network"]  # in the order the page shows them


def or_none(x):
    """A count as the page's JSON carries it: NaN (no count fits) as None (null)."""
    return None if math.isnan(x) else x


def stage_facts(stage, params, b, replicas, memory, memory_gib, link, domain, units, node):
    """One ZeRO stage at the selection's model, gradient bytes b, GPU memory (10⁹ B and GiB) and link speed per
    direction, over the replica counts; domain: the GPUs one NVLink domain joins (None: not over NVLink); units:
    FSDP units (the model's layers); node: GPUs NCCL counts as one node (NVLink steps inside it)."""
    states = [float(state_bytes(params, stage, n, b)) for n in replicas]
    on_grid = None  # the first replica count of the grid whose states fit, if any
    for i in range(len(replicas)):
        if on_grid is None and states[i] <= memory:
            on_grid = replicas[i]
    limit = float(traffic_limit_bytes(params, stage, b))
    return {
        "stage": stage, "states_bytes": states, "floor_bytes": float(kept_bytes(params, stage, b)),
        "smallest_fitting": or_none(float(smallest_replicas(params, stage, memory, b))),
        "smallest_fitting_gib": or_none(float(smallest_replicas(params, stage, memory_gib, b))),
        "smallest_fitting_on_grid": on_grid,
        "traffic_bytes": [float(traffic_bytes(params, stage, b, n)) for n in replicas],
        "traffic_s": [float(traffic_seconds(params, stage, b, link, n)) for n in replicas],
        "latency_s": [float(latency_seconds(stage, units, n, node)) for n in replicas],
        "latency_at_s": float(latency_seconds(stage, units, LATENCY_AT, node)),
        "traffic_ratio": float(traffic_ratio(stage, b)), "traffic_limit_bytes": limit,
        "traffic_limit_s": limit / link,
        "domain_traffic_s": None if domain is None else float(traffic_seconds(params, stage, b, link, domain)),
    }


def facts(selection, presets):
    """The facts of a selection {model, gpu, stage, precision, network} of ids under the page data's presets (an id
    neither has fails, in the page as in the build)."""
    m = presets["models"][selection["model"]]
    gpu = presets["gpus"][selection["gpu"]]
    net = presets["networks"][selection["network"]]
    k = [s for s in STAGES].index(selection["stage"])  # an id the controls do not have fails here, as below
    precisions = [p for p in PRECISIONS]
    precision = precisions[precisions.index(selection["precision"])]
    b = GRAD_BYTES[precision]
    params = float(m["params"])
    max_replicas = presets["workshop"]["max_replicas"]
    replicas = [int(n) for n in replica_counts(max_replicas)]
    memory = gpu["memory_gb"] * GB
    memory_gib = gpu["memory_gb"] * GIB
    link = (gpu["nvlink_gbytes_per_s"] if net["nvlink"] else net["link_gbytes_per_s"]) * 1e9
    domain = gpu.get("nvlink_domain")
    over_domain = domain if net["nvlink"] and domain else None
    node = node_gpus(domain)
    units = m["layers"]  # FSDP's unit: a transformer layer, as its auto-wrap policy is usually set
    chosen = {}
    for key in CONTROLS:
        chosen[key] = selection[key]
    return {
        "selection": chosen,
        "model": {"name": m["name"], "params": params},
        "gpu": {"name": gpu["name"], "memory_gb": float(gpu["memory_gb"]), "nvlink_domain": domain,
                "interconnect": gpu["interconnect"]},
        "network": {"name": net["name"], "short": net["short"], "nvlink": bool(net["nvlink"])},
        "caption": m["name"] + " · " + gpu["name"] + " · stage " + str(k) + " · " + PRECISIONS[precision] +
        " gradients · " + net["short"],
        "precision_name": PRECISIONS[precision], "stage": k, "grad_bytes": b, "max_replicas": max_replicas,
        "replicas": replicas, "fsdp_units": units, "latency_at": LATENCY_AT,
        # NVLink times past the GPUs one NVLink joins are a what-if: no such fabric is built
        "hypothetical": [bool(net["nvlink"]) and n > node for n in replicas],
        "memory_bytes": memory, "memory_gib_bytes": float(memory_gib),
        "link_bytes_per_s": link, "link_gbytes_per_s": link / 1e9,
        "unsharded_bytes": float(state_bytes(params, 0, 1, b)),
        "stages": [stage_facts(s, params, b, replicas, memory, memory_gib, link, over_domain, units, node)
                   for s in STAGE_NUMBERS],
    }
