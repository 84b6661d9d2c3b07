"""Stage 2, run the plate: its module loaded and its hooks called under a time limit, its figures and words made."""
