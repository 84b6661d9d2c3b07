"""XIV.4's figures' rows and a selection's CSV rows for one selection's facts, in the Python the page runs compiled."""
# The build draws the default's figures from these rows; the page runs them compiled by generator/page/compiler.py for
# the selection shown. They read the facts as plain data (the page's shape: see words.facts_data).
from generator.api import num, seconds

from platelib.zero import hiding_comm_seconds

BUCKET_GROUPS = 32  # buckets drawn as at most this many bars, each shaded by how busy the link is within it

# The columns of a selection's CSV, declared once (the page writes them under the site CSV's names). Each is
# [name, source, field, divisor]: the selection's id or option ("selection"), an input of the model in SI units
# ("inputs"), a value at each replica count ("points"), or the real cluster's ("cluster"), divided by divisor.
# A quantity the model gains per replica count is one line here.
SELECTION_COLUMNS = [
    ["model", "selection", "model", 1], ["batch", "selection", "batch", 1], ["network", "selection", "network", 1],
    ["gpu", "selection", "gpu", 1], ["overlap", "selection", "overlap", 1],
    ["gradient_precision", "selection", "precision", 1], ["topology", "selection", "topology", 1],
    ["sharding", "selection", "sharding", 1],
    ["replicas", "points", "replicas", 1], ["gpus_per_replica", "inputs", "gpus_per_replica", 1],
    ["tensor_parallel", "inputs", "tensor", 1], ["pipeline_parallel", "inputs", "pipeline", 1],
    ["params", "inputs", "params", 1], ["global_batch_tokens", "inputs", "batch_tokens", 1],
    ["gpu_peak_tflops", "inputs", "peak_flops", 1e12], ["mfu", "inputs", "mfu", 1],
    ["link_gbytes_per_s", "inputs", "link_bytes_per_s", 1e9],
    ["nvlink_gbytes_per_s", "inputs", "nvlink_bytes_per_s", 1e9], ["gpu_memory_gb", "inputs", "memory_bytes", 1e9],
    ["bytes_per_grad", "inputs", "bytes_per_grad", 1], ["seq_len", "inputs", "seq_len", 1],
    ["compute_s", "points", "compute_s", 1], ["allreduce_s", "points", "allreduce_s", 1],
    ["comm_s", "points", "comm_s", 1], ["step_s", "points", "step_s", 1], ["exposed_s", "points", "exposed_s", 1],
    ["efficiency", "points", "efficiency", 1], ["tokens_per_replica", "points", "tokens_per_replica", 1],
    ["sequences_per_replica", "points", "sequences_per_replica", 1],
    ["model_states_gb", "points", "states_bytes", 1e9], ["fits_in_memory", "points", "fits", 1],
    # the real cluster beside the workshop, under the selection's bucket_cap_mb and micro-batches
    ["bucket_cap_mb", "selection", "bucket", 1], ["micro_batches", "selection", "micro", 1],
    ["cluster_step_s", "cluster", "step_s", 1], ["cluster_comm_s", "cluster", "comm_s", 1],
    ["cluster_latency_s", "cluster", "latency_s", 1], ["cluster_bandwidth_s", "cluster", "bandwidth_s", 1],
    ["cluster_tree_calls", "cluster", "tree_calls", 1], ["cluster_efficiency", "cluster", "efficiency", 1],
]


def cell(f, column, r):
    """One cell of a selection's CSV: a column at replica index r."""
    source = column[1]
    field = column[2]
    divisor = column[3]
    if source == "selection":
        return f["selection"][field]
    if source == "inputs":
        value = f["inputs"][field]
    elif source == "cluster":
        value = f["cluster"][field][r]
        if value is None:  # beyond the NVLink domain the real cluster is not priced: an empty cell
            return ""
    else:
        value = f["points"][r][field]
    return value / divisor if divisor != 1 else value


def csv_rows(f):
    """A selection's CSV rows (SELECTION_COLUMNS): one per replica count."""
    rows = []
    for r in range(len(f["points"])):
        row = []
        for c in range(len(SELECTION_COLUMNS)):
            row.append(cell(f, SELECTION_COLUMNS[c], r))
        rows.append(row)
    return rows


def grid_rows(f):
    """Figures 1 and 2: the selection's values at each replica count; Figure 1's line is what must hide in the
    window it is drawn against, so that the two meet at n*."""
    x = f["inputs"]
    c = f["cluster"]
    rows = []
    for r in range(len(f["points"])):
        p = f["points"][r]
        rows.append({"replicas": p["replicas"], "compute_s": p["compute_s"],
                     "comm_s": float(hiding_comm_seconds(p["comm_s"], p["allreduce_s"], x["sharding"],
                                                         x["bytes_per_grad"], f["backward_only"])),
                     "window_s": p["compute_s"] * 2 / 3 if f["backward_only"] else None,
                     "efficiency": p["efficiency"], "cluster_s": c["comm_s"][r],
                     "cluster_efficiency": c["efficiency"][r]})
    return rows


def facts_rows(f):
    """The one row of marks for a selection: label, crossing, n*, one sequence, the GPU's own link's reach."""
    return [{"label": f["caption"], "crossing": f["crossing_replicas"], "n_star": f["continuous_crossing"],
             "n_star_text": "n* ≈ " + num(f["continuous_crossing"]),
             "one_sequence": f["batch"]["tokens"] / f["inputs"]["seq_len"], "max_replicas": f["max_replicas"],
             "hypothetical_from": f["hypothetical_from"],
             "hypothetical_text": f["gpu"]["interconnect"] + " beyond a real domain: hypothetical"}]


def timeline_point(f):
    """The facts' point at the timeline's replica count."""
    points = f["points"]
    for r in range(len(points)):
        if points[r]["replicas"] == f["timeline_replicas"]:
            return points[r]
    return None


def timeline_rows(f):
    """One step at the timeline's replica count: the forward pass, the backward pass from the output head through
    the layers to the input embedding, and the gradient buckets' all-reduces back to back, grouped into bars shaded
    by the link's busy share."""
    p = timeline_point(f)
    compute = p["compute_s"]
    comm = f["timeline_comm_s"]
    forward = compute / 3
    backward = compute * 2 / 3
    m = f["model"]
    embedding = m["vocab"] * m["d_model"]
    layer = (m["params"] - 2 * embedding) / m["layers"] if m["layers"] > 0 else 0  # a model given by its size alone
    rows = [{"row": "compute", "kind": "forward", "start": 0.0, "end": forward, "shade": 1.0}]
    t = forward
    parts = m["layers"] + 2  # the output head, each layer, the input embedding
    for i in range(parts):
        kind = "head" if i == 0 else "embedding" if i == parts - 1 else "layer"
        params = layer if kind == "layer" else embedding
        end = t + backward * params / m["params"]
        rows.append({"row": "compute", "kind": kind, "start": t, "end": end, "shade": 0.55 if i % 2 else 0.8})
        t = end
    if comm > 0 and not f["backward_only"]:  # the workshop: the whole all-reduce beside the whole step, from its start
        rows.append({"row": "all-reduce", "kind": "buckets", "start": 0.0, "end": p["comm_s"], "shade": 1.0})
    elif comm > 0:
        starts = f["bucket_schedule"][0]
        ends = f["bucket_schedule"][1]
        count = len(starts)
        groups = min(count, BUCKET_GROUPS)
        for g in range(groups):
            first = g * count // groups  # the group's first and last bucket
            through = (g + 1) * count // groups - 1
            start = starts[first]
            end = ends[through]
            busy = 0
            for k in range(first, through + 1):
                busy += ends[k] - starts[k]
            rows.append({"row": "all-reduce", "kind": "buckets", "start": start, "end": end,
                         "shade": max(0.25, min(1.0, busy / (end - start))) if end > start else 1.0})
    tail = f["timeline_tail_s"]
    if tail > 0:
        rows.append({"row": "exposed", "kind": "tail", "start": compute, "end": compute + tail, "shade": 1.0})
    return rows


def timeline_facts(f):
    """The timeline's rules and labels: where compute ends, the backward-only bound, the bucketed end."""
    p = timeline_point(f)
    tail = f["timeline_tail_s"]
    bound = f["timeline_bound_s"]
    return [{"compute_end": p["compute_s"], "bound_end": p["compute_s"] + bound, "step_end": p["compute_s"] + tail,
             "span": max(p["compute_s"] + tail, p["compute_s"]) * 1.04,
             "tail_text": "exposed tail " + seconds(tail) if tail > 0 else "no exposed tail",
             "bound_text": "bound " + seconds(bound),
             "replicas_text": "one step on each of " + num(f["timeline_replicas"]) + " replicas"}]


def memory_rows(f):
    """The memory figure's rows: model states per GPU at each replica count, and the GPU's memory."""
    first = f["smallest_fitting_on_grid"]
    label = f["gpu"]["name"] + " memory: " + num(f["gpu_memory_gb"]) + " GB"
    points = f["points"]
    rows = []
    for r in range(len(points)):
        p = points[r]
        rows.append({"replicas": p["replicas"], "states_gb": p["states_gb"], "memory_gb": f["gpu_memory_gb"],
                     "first_fit": p["replicas"] == first, "gpu_label": label})
    return rows


def datasets(f):
    """Every dataset the figures' Vega specs read, by name, for one selection's facts."""
    return {"grid": grid_rows(f), "facts": facts_rows(f), "timeline": timeline_rows(f),
            "timeline_facts": timeline_facts(f), "memory": memory_rows(f)}
