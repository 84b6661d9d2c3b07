"""A legitimate content edit, as an author would make it: a fourth model, a third network, a term and a source."""
import shutil
from pathlib import Path

MODEL = """
[models.mistral-7b]
name = "Mistral 7B"
params = 7_241_732_096
layers = 32
d_model = 4096
ffn = 14336
vocab = 32000
"""
NETWORK = """
[networks.ib-200]
name = "200 Gb/s InfiniBand"
short = "200 Gb/s"
link_gbytes_per_s = 25
"""
TERM = """
[terms.bucketing]
name = "bucketing"
definition = "Gathering many small gradients into larger buffers that are all-reduced as soon as each fills."
"""
SOURCE = """
[sources.goyal2017]
authors = "Goyal et al."
title = "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour"
venue = "arXiv:1706.02677, 2017"
url = "https://arxiv.org/abs/1706.02677"
label = "arXiv:1706.02677"
"""
CITED_AFTER = '{{ cite("mccandlish2018") }}'


def edited_copy(content: Path, dest: Path) -> Path:
    """content copied to dest with the four additions (the new source cited where the prose cites another)."""
    shutil.copytree(content, dest)
    for name, extra in (("presets.toml", MODEL + NETWORK), ("terms.toml", TERM), ("sources.toml", SOURCE)):
        with open(dest / name, "a", encoding="utf-8") as f:
            f.write(extra)
    plate = dest / "plate.md"
    text = plate.read_text(encoding="utf-8")
    assert CITED_AFTER in text
    plate.write_text(text.replace(CITED_AFTER, CITED_AFTER + ' {{ cite("goyal2017") }}', 1), encoding="utf-8")
    return dest
