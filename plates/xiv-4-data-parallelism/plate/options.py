"""XIV.4's controls beyond the presets: their ids and labels, and how a caption names a choice (the page's subset)."""

# The options beyond the workshop: {key: {id: label}}, the workshop's first. Ids appear in the page's URL.
OPTIONS = {
    "overlap": {"step": "whole step", "backward": "backward pass only"},
    "precision": {"bf16": "BF16", "fp32": "FP32"},
    "topology": {"flat": "flat ring", "nodes": "8-GPU nodes, hierarchical"},
    "sharding": {"none": "none", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3 / FSDP"},
}
SHARDING = ["none", "zero1", "zero2", "zero3"]  # the sharding ids by ZeRO stage (OPTIONS["sharding"]'s order)
# The real cluster's own controls (issue 22): read per selection, never axes of the grid; DDP's defaults first.
CLUSTER_OPTIONS = {
    "bucket": {"default": "unset (25 MiB; first bucket 1 MiB)", "1": "1 MiB", "5": "5 MiB", "25": "25 MiB",
               "100": "100 MiB", "500": "500 MiB"},
    "micro": {"1": "1", "2": "2", "4": "4", "8": "8", "16": "16"},
}
# The layout control (GPUs per replica, tensor × pipeline parallel) offers the catalogue's layouts after this one.
PUBLISHED_NAME = "as published"  # platelib.layout.PUBLISHED: the model's published layout, else one GPU
# How a caption names an option that is not the workshop's (in this order).
CAPTIONS = {
    "overlap": {"backward": "backward-only overlap"},
    "precision": {"fp32": "FP32 gradients"},
    "topology": {"nodes": "hierarchical on 8-GPU nodes"},
    "sharding": {"zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3 / FSDP"},
    "bucket": {"1": "1 MiB buckets", "5": "5 MiB buckets", "25": "25 MiB buckets", "100": "100 MiB buckets",
               "500": "500 MiB buckets"},
    "micro": {"2": "2 micro-batches", "4": "4 micro-batches", "8": "8 micro-batches", "16": "16 micro-batches"},
}
CLUSTER_KEYS = ["bucket", "micro", "layout"]
KEYS = ["model", "batch", "network", "gpu", "overlap", "precision", "topology", "sharding"]
FP32_BYTES = 4
CUSTOM = "custom"  # the id of the reader's own model, batch or network, in the controls and the URL
SHAPE = ["layers", "d_model", "ffn", "vocab"]  # a custom model's optional layer shape, all or none
