"""What the page computes for a selection, written once: the page runs these functions compiled to JavaScript, the
build runs them as they are (docs/plates.md, "Python the page runs"). Replace the model y = rate × n and its words
with the plate's own."""
from generator.api import num, sig


def counts(most):
    """n = 1, 2, 4, … most."""
    found = []
    n = 1
    while n <= most:
        found.append(n)
        n = n * 2
    return found


def facts(selection, presets):
    """One selection's facts, as plain data: the rate chosen and y = rate × n at every n."""
    rate = presets["rates"][selection["rate"]]
    points = [{"n": n, "y": n * rate["per_step"]} for n in counts(presets["settings"]["steps"])]
    return {"selection": {"rate": selection["rate"]}, "rate": rate, "points": points, "last": points[-1]["y"],
            "caption": rate["name"]}


def datasets(f):
    """The rows of every dataset the figures read: here the line's."""
    return {"line": [{"n": p["n"], "y": p["y"]} for p in f["points"]]}


def readout(f, W):
    """The readout's paragraphs."""
    last = f["points"][-1]
    return ["At " + f["rate"]["name"] + ", y reaches " + sig(last["y"]) + " at n = " + num(last["n"]) + "."]


def title(f, figure_id, W):
    """A figure's point for the selection, the line above it: what a reader should see in it."""
    return "y reaches " + sig(f["points"][-1]["y"]) + " at n = " + num(f["points"][-1]["n"])


def describe(f, figure_id, W):
    """A figure's description, for readers who do not see it."""
    first = f["points"][0]
    last = f["points"][-1]
    return ("y grows from " + sig(first["y"]) + " at n = " + num(first["n"]) + " to " + sig(last["y"])
            + " at n = " + num(last["n"]) + ".")


def table_rows(f, figure_id):
    """A figure's data table: a row per point, its head first."""
    return [[num(p["n"]), sig(p["y"])] for p in f["points"]]


def csv_rows(f):
    """The shown selection's rows of the CSV, in the order of CSV_COLUMNS."""
    return [[f["selection"]["rate"], p["n"], p["y"]] for p in f["points"]]
