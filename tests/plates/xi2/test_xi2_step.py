"""Figure 2's step is plate XIV.4's: the same numbers as XIV.4's own model for the same model, GPU, network, batch
and layout on n replicas (one implementation, platelib's, imported), and a change to platelib's step formula moves
XI.2's numbers with XIV.4's."""
from __future__ import annotations

import dataclasses
import functools
import importlib

import numpy as np
import pytest

import platelib.compute
from generator.source import content
from xi2_support import XIV4_FOLDER, facts, presets, submodule
from xiv4 import facts as xiv4_facts
from xiv4 import model as xiv4_model
from xiv4 import Selection as Xiv4Selection

pf = submodule("page_facts")


@functools.cache
def xiv4_presets():
    return content.load(XIV4_FOLDER).presets


def xiv4_steps(sel: dict, f: dict) -> dict[str, np.ndarray]:
    """XIV.4's step time by its own model (facts.inputs, model.evaluate) for XI.2's selection, both ways."""
    p = xiv4_presets()
    inputs = xiv4_facts.inputs(p, Xiv4Selection(model=sel["model"], batch=sel["batch"], network=sel["network"],
                                                 gpu=sel["gpu"], layout=sel["layout"]))
    replicas = np.asarray(f["replicas"], np.float64)
    fixed = xiv4_model.evaluate(inputs, replicas).step_s
    per = [float(xiv4_model.evaluate(dataclasses.replace(inputs, batch_tokens=n * f["per_replica"]["tokens"]),
                                     [n]).step_s[0]) for n in f["replicas"]]
    return {"per_replica": np.asarray(per), "global": np.asarray(fixed)}


def selections():
    p = presets()
    return [dict(model=m, gpu=g, network=n, batch=b, per_replica=q)
            for m in p["models"] for g in p["gpus"] for n in p["networks"] for b in p["batches"]
            for q in list(p["per_replica"])[:2]]


@pytest.mark.parametrize("choice", selections(), ids=lambda c: "-".join(c.values()))
def test_figure_2s_step_is_xiv4s_for_the_same_selection(choice):
    f = facts(**choice)
    expected = xiv4_steps({**f["selection"]}, f)
    for way in f["ways"]:
        np.testing.assert_allclose(way["step_s"], expected[way["way"]], rtol=1e-15, atol=0)
        np.testing.assert_allclose(way["time_s"], np.asarray(way["steps"]) * expected[way["way"]], rtol=1e-15)


def test_xi2_follows_a_change_to_xiv4s_step_formula(monkeypatch):
    """platelib's step_seconds, XIV.4's step, changed (communication counted twice): XI.2's numbers follow it."""
    from platelib.collectives import allreduce_seconds
    from platelib.compute import compute_seconds
    before = facts()
    original = platelib.compute.step_seconds

    def changed(compute, comm, backward_only, forward_comm=0.0):
        return original(compute, 2 * comm, backward_only, forward_comm)

    monkeypatch.setattr(platelib.compute, "step_seconds", changed)
    try:
        importlib.reload(pf)  # page_facts binds platelib's names when imported, as a fresh build imports them
        after = facts()
        p, sel = presets(), after["selection"]
        m, gpu, net = p["models"][sel["model"]], p["gpus"][sel["gpu"]], p["networks"][sel["network"]]
        link = (gpu["nvlink_gbytes_per_s"] if net["nvlink"] else net["link_gbytes_per_s"]) * 1e9
        w = p["workshop"]
        for way, old in zip(after["ways"], before["ways"]):
            for n, batch, step in zip(after["replicas"], way["batch"], way["step_s"]):
                compute = compute_seconds(m["params"], batch, n, gpu["peak_tflops"] * 1e12, w["mfu"])
                comm = allreduce_seconds(m["params"], w["bytes_per_grad"], link, gpu["nvlink_gbytes_per_s"] * 1e9,
                                         n, False)
                assert step == pytest.approx(float(max(compute, 2 * comm)), rel=1e-12)
            assert any(a > b for a, b in zip(way["step_s"], old["step_s"]))  # the change shows in XI.2's numbers
            assert all(a >= b for a, b in zip(way["time_s"], old["time_s"]))
    finally:
        monkeypatch.undo()
        importlib.reload(pf)
    assert facts()["ways"][0]["step_s"] == before["ways"][0]["step_s"]
