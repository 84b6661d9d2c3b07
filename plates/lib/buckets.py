"""The model's gradient tensors in the order the backward pass makes them, DDP's buckets of them and when each
bucket's all-reduce runs (spec/MODEL.md "Model v2")."""
import math

from platelib.units import MIB

BUCKET_BYTES = 25 * MIB  # PyTorch DDP's bucket_cap_mb default (torch/nn/parallel/distributed.py, 25 MiB)
FIRST_BUCKET_BYTES = MIB  # its first bucket's limit when bucket_cap_mb is left unset (reducer.hpp, 1 MiB)
PIECE = MIB  # elements per tensor of a model known by its size alone (no layer shape to cut it by) …
PIECES = 4096  # … in at most this many pieces (the page cuts the same list at every change)
MAX_LAYERS = 10_000  # deeper than any model trained; past it the shape is not used (nine tensors a layer)
LAYER_NORMS = [3, 8]  # the places of a layer's two norms among its tensors (model_parts)


def model_parts(params, layers, d_model, ffn, vocab):
    """[embedding (or output head), final norm, one layer's tensors] of a model's parameter tensors, in elements;
    a layer's in the order the backward pass makes their gradients: down, up, gate, post-attention norm, o, v, k, q,
    input norm (LAYER_NORMS: the norms' places). k and v are as wide as makes the shapes add up to params
    (grouped-query attention); where no width up to d_model does, a layer's attention is four equal tensors. None
    for a model without a shape (or deeper than MAX_LAYERS)."""
    if layers <= 0 or d_model <= 0 or layers > MAX_LAYERS:
        return None
    d = d_model
    embedding = vocab * d
    rest = params - 2 * embedding
    norm = min(d, rest)
    layer = (rest - norm) / layers
    attention = layer - 3 * d * ffn - 2 * d
    kv = (attention - 2 * d * d) / (2 * d)
    if kv > 0 and kv <= d:
        q = d * d
        k = d * kv
    elif attention > 0:
        q = attention / 4
        k = attention / 4
    else:  # no room for attention beside the MLP: the layer as three equal matrices
        q = 0
        k = 0
    mlp = d * ffn if attention > 0 else layer / 3
    norms = d if attention > 0 else 0
    return [embedding, norm, [mlp, mlp, mlp, norms, q, k, k, q, norms]]


def tensor_params(params, layers, d_model, ffn, vocab):
    """The model's parameter tensors (elements each) in the order the backward pass makes their gradients: the
    output head, the final norm, each layer from the last (model_parts), the input embedding. A model without a
    shape (or deeper than MAX_LAYERS) is cut in equal pieces of PIECE elements, or in PIECES pieces where that
    makes too many."""
    parts = model_parts(params, layers, d_model, ffn, vocab)
    if parts is None:
        count = min(math.ceil(params / PIECE), PIECES)
        return [params / count] * count
    out = [parts[0], parts[1]] + parts[2] * layers + [parts[0]]
    return [t for t in out if t > 0]


def buckets(tensors, bytes_per_element, cap_bytes=BUCKET_BYTES, first_bytes=FIRST_BUCKET_BYTES):
    """DDP's gradient buckets in the order they are all-reduced, as its reducer assigns them: whole tensors in
    gradient order, a bucket closed once it holds at least its limit (first_bytes for the first, cap_bytes after),
    a tensor never split, so a bucket holds more than its limit when a tensor crosses it. Returns each bucket's
    bytes and the share of the gradients made when it is full."""
    total = sum(tensors)
    sizes = []
    ready = []
    size = 0.0
    done = 0.0
    limit = first_bytes
    for tensor in tensors:
        size += tensor * bytes_per_element
        done += tensor
        if size >= limit:
            sizes.append(size)
            ready.append(done / total)
            size = 0.0
            limit = cap_bytes
    if size > 0:
        sizes.append(size)
        ready.append(done / total)
    return sizes, ready


def bucket_caps(cap_mb):
    """DDP's bucket limits for bucket_cap_mb: [later buckets, first bucket] in bytes; the first is 1 MiB only when
    bucket_cap_mb is left unset (None), else the cap too."""
    if cap_mb is None:
        return [BUCKET_BYTES, FIRST_BUCKET_BYTES]
    return [cap_mb * MIB, cap_mb * MIB]


def bucket_times(compute, comm, sizes, ready, starts, ends):
    """When the last bucket's all-reduce ends: each starts once the backward pass (the last 2/3 of compute, at a rate
    in proportion to parameters) has filled it and the link has sent the one before, and takes its share of comm.
    Each bucket's start and end are appended to starts and ends, unless they are None (the end alone is wanted)."""
    total = sum(sizes)
    backward = compute * 2 / 3
    free = 0.0
    for size, share in zip(sizes, ready):
        start = max(compute / 3 + backward * share, free)
        free = start + comm * size / total
        if starts is not None:
            starts.append(start)
            ends.append(free)
    return free


def bucket_schedule(compute, comm, sizes, ready):
    """When each bucket's all-reduce starts and ends (bucket_times)."""
    starts = []
    ends = []
    bucket_times(compute, comm, sizes, ready, starts, ends)
    return starts, ends


def bucketed_tail_seconds(compute, comm, sizes, ready):
    """Communication left after compute when the buckets go during the backward pass: at least max(0, A − 2C/3),
    more when a large bucket fills late (the input embedding's comes last)."""
    if comm <= 0 or not sizes:
        return 0.0
    return max(bucket_times(compute, comm, sizes, ready, None, None), compute) - compute
