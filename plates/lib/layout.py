"""A replica's layout: tensor parallelism of degree t inside each of p pipeline stages (Megatron-LM, arXiv:2104.04473
§2), so that one replica spans t·p GPUs and n replicas n·t·p. Each stage holds about L/p of the L layers, every matrix
of a layer cut t ways (the attention and MLP matrices by columns or rows, the embedding and output head by vocabulary)
and the norms whole on every GPU; the first stage also holds the input embedding, the last the final norm and the
output head. Each GPU computes, reduces and keeps N/(t·p) of the parameters in the workshop (equal stages; the
pipeline's bubble and tensor parallelism's own traffic are left out); its gradient tensors are its stage's.

Layouts are the series catalogue's [layouts.<id>] (tensor, pipeline); a layout control may also offer PUBLISHED, the
layout a model's published run used (its catalogue entry's `layout`), else one GPU per replica."""
from platelib.buckets import LAYER_NORMS, model_parts, tensor_params

PUBLISHED = "published"  # a layout control's choice: the model's published layout, else one GPU per replica
WORKSHOP = ""  # the workshop's replica, one GPU, whatever the catalogue holds (what a plate's prose argues from)
ONE_GPU = {"id": "", "name": "one GPU", "tensor": 1, "pipeline": 1}  # a replica on one GPU: t = p = 1


def chosen_layout(choice, model, layouts):
    """The layout a control's choice names, as the page data holds it ({id, name, tensor, pipeline}): a layout of
    the catalogue by its id, for PUBLISHED the model's published layout, else ONE_GPU; WORKSHOP is ONE_GPU."""
    if choice == WORKSHOP:
        return ONE_GPU
    if choice == PUBLISHED:
        own = model["layout"] if "layout" in model else ""  # the reader's own model has none
        if own:
            return layouts[own]
        return ONE_GPU
    return layouts[choice]


def replica_gpus(tensor, pipeline):
    """GPUs one replica spans: t·p."""
    return tensor * pipeline


def stage_layers(layers, pipeline):
    """The layers each of p stages holds, first to last: ⌈L/p⌉ each, the stages at the two ends, which also hold
    the embedding and the output head, giving up one layer each in turn (the first, the last, the second, the second
    to last, …) until they add up to L: 126 layers on 16 stages are 7, 8, …, 8, 7."""
    most = (layers + pipeline - 1) // pipeline
    counts = [most] * pipeline
    extra = most * pipeline - layers
    k = 0
    while extra > 0:
        at = k // 2 if k % 2 == 0 else pipeline - 1 - k // 2
        if counts[at] > 0:
            counts[at] -= 1
            extra -= 1
        k += 1
    return counts


def layer_gpu_tensors(params, layers, d_model, ffn, vocab, tensor):
    """One layer's tensors on one GPU of its stage, in the order the backward pass makes their gradients: each matrix
    cut t ways, its two norms whole; [] for a model without a shape."""
    parts = model_parts(params, layers, d_model, ffn, vocab)
    if parts is None:
        return []
    one = parts[2]
    out = []
    for i in range(len(one)):
        out.append(one[i] if i == LAYER_NORMS[0] or i == LAYER_NORMS[1] else one[i] / tensor)
    return out


def gpu_tensors(params, layers, d_model, ffn, vocab, tensor, pipeline):
    """One GPU's gradient tensors in the order its backward pass makes them, on the stage whose gradients are the
    most (its data-parallel all-reduce is the one the step waits for; the first such stage): the output head cut t
    ways and the final norm (last stage), its layers from its last, the input embedding cut t ways (first stage). A
    model known by its size alone: its pieces (tensor_params), each cut t·p ways."""
    parts = model_parts(params, layers, d_model, ffn, vocab)
    if parts is None:
        return [t / (tensor * pipeline) for t in tensor_params(params, layers, d_model, ffn, vocab)]
    vocabulary = parts[0] / tensor
    norm = parts[1]
    one = layer_gpu_tensors(params, layers, d_model, ffn, vocab, tensor)
    per_layer = sum(one)
    counts = stage_layers(layers, pipeline)
    best = 0
    most = -1.0
    for s in range(pipeline):
        total = counts[s] * per_layer
        if s == pipeline - 1:
            total += vocabulary + norm
        if s == 0:
            total += vocabulary
        if total > most:
            most = total
            best = s
    out = []
    if best == pipeline - 1:
        out = [vocabulary, norm]
    for k in range(counts[best]):
        for t in one:
            out.append(t)
    if best == 0:
        out.append(vocabulary)
    return [t for t in out if t > 0]
