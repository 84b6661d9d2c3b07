"""Units the plates share: decimal and binary bytes."""

GB = 1e9  # decimal gigabytes, as GPU memory and link speeds are quoted
GIB = 2**30  # the binary unit a GPU's HBM is built in: 80 GiB is 85.9 × 10⁹ B
MIB = 2**20  # the binary mebibyte DDP's bucket limits are given in
