"""Legitimate content edits, as authors make them, on a copy of a content folder. Every id, name, short name,
label and spelling an edit adds is one the content does not already hold, so an author who has made the same
addition already (a natural choice) does not get "the table is written twice"."""
from __future__ import annotations

import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# Real figures: Mistral 7B and Qwen2.5 7B from their configs; MI300X from AMD's datasheet (dense BF16, 192 GB HBM3,
# Infinity Fabric 896 GB/s both ways), given no `source` and no NVLink domain since both are optional.
MISTRAL = {"name": "Mistral 7B", "params": 7_241_732_096, "layers": 32, "d_model": 4096, "ffn": 14336,
           "vocab": 32000}
QWEN = {"name": "Qwen2.5 7B", "params": 7_615_616_512, "layers": 28, "d_model": 3584, "ffn": 18944,
        "vocab": 152064}
MI300X = {"name": "MI300X", "peak_tflops": 1307, "memory_gb": 192, "nvlink_gbytes_per_s": 448,
          "interconnect": "Infinity Fabric"}
IB_200 = {"name": "200 Gb/s InfiniBand", "short": "200 Gb/s", "link_gbytes_per_s": 25}
IB_800 = {"name": "800 Gb/s InfiniBand", "short": "800 Gb/s", "link_gbytes_per_s": 100}
FABRIC = {"name": "Infinity Fabric", "short": "Infinity Fabric", "nvlink": True}
BATCH_2M = {"name": "2M tokens", "tokens": 2_097_152}
TERM = {"name": "Gradient bucketing", "definition": "Gathering many small gradients into larger buffers that are "
        "all-reduced as soon as each fills."}
SOURCE = {"authors": "Goyal et al.", "title": "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour",
          "venue": "arXiv:1706.02677, 2017", "url": "https://arxiv.org/abs/1706.02677", "label": "arXiv:1706.02677"}
# The presets MODEL.md names (the spec's own ids, as content/presets.toml spells them).
SPEC_PRESETS = {"models": ["llama3-8b", "llama3-70b", "llama3-405b"], "batches": ["1M", "4M"],
                "networks": ["ib-400", "nvlink"], "gpus": ["h100-sxm", "a100-sxm", "h200-sxm", "b200", "gb200-nvl72"]}
SCENARIO_KEY = {"models": "model", "batches": "batch", "networks": "network", "gpus": "gpu"}
FILES = {"selections": "presets.toml", "terms": "terms.toml", "sources": "sources.toml"}
CATALOGUE = "series.toml"  # the series catalogue beside a plate's folder (platelib.catalogue), when it has one


@dataclass
class Edit:
    """An edited content folder and what the edit did to it, by table ("models", "terms", ...)."""

    root: Path
    added: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    default: dict[str, str] = field(default_factory=dict)  # the keys of [default] the edit changed


def _catalogue_files(root: Path) -> list[Path]:
    """Where the content's presets are written: the series catalogue beside the folder, if any, then presets.toml."""
    beside = root.parent / CATALOGUE
    return [p for p in (beside, root / "presets.toml") if p.is_file()]


def _file_of(root: Path, table: str) -> Path:
    """The file a table's entries are added to or removed from: its own file (terms, sources, a plate's selections),
    else the first presets file that holds the table (the series catalogue, as an author edits the series'), else
    the catalogue."""
    if table in FILES:
        return root / FILES[table]
    files = _catalogue_files(root)
    for path in files:
        if table in tomllib.loads(path.read_text(encoding="utf-8")):
            return path
    return files[0]


def _tables(root: Path) -> dict[str, dict]:
    """Every table of the content's TOML files: {"models": {id: {...}}, ..., "terms": ..., "sources": ...}; the
    series catalogue's under presets.toml's, an entry of the latter replacing the former's."""
    tables: dict[str, dict] = {}
    for path in [*_catalogue_files(root), root / "terms.toml", root / "sources.toml"]:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for k, v in data.items():
            if isinstance(v, dict) and k not in ("workshop", "site"):
                tables[k] = {**tables.get(k, {}), **v}
    return tables


def copy_content(content: Path, dest: Path) -> None:
    """content copied to dest, with the series catalogue beside it when content has one (tests/conftest.py's
    copy_plate)."""
    from conftest import copy_plate
    copy_plate(content, dest)


def _free(wanted: str, taken, sep: str = "-") -> str:
    """wanted, or wanted with a number after it, whichever the content does not hold (ignoring case)."""
    taken = {str(t).casefold() for t in taken}
    candidate, n = wanted, 2
    while candidate.casefold() in taken:
        candidate, n = f"{wanted}{sep}{n}", n + 1
    return candidate


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:_}"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def add(edit: Edit, table: str, wanted_id: str, values: dict) -> str:
    """Append [table.id] to its file with an id, and a name, short name or label, that the content does not hold."""
    tables = _tables(edit.root)
    entries = tables.get(table, {})
    ident = _free(wanted_id, entries)
    values = dict(values)
    for key in ("name", "short", "label"):
        if key in values:
            values[key] = _free(values[key], [e.get(key) for e in entries.values()], " ")
    if table == "terms":  # a spelling may belong to one term only
        spellings = [s for t in entries.values() for s in (t.get("name"), *t.get("matches", []))]
        values["name"] = _free(values["name"], spellings, " ")
    lines = [f"\n[{table}.{ident}]"] + [f"{k} = {_toml(v)}" for k, v in values.items()]
    with open(_file_of(edit.root, table), "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    edit.added.setdefault(table, []).append(ident)
    return ident


def remove(edit: Edit, table: str, ident: str) -> None:
    """Delete [table.id] from its file, header to the next table (the comments above the next table stay)."""
    path = next(p for p in ([edit.root / FILES[table]] if table in FILES else _catalogue_files(edit.root))
                if any(line.strip() == f"[{table}.{ident}]" for line in p.read_text(encoding="utf-8").splitlines()))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == f"[{table}.{ident}]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    while end > start + 1 and lines[end - 1].lstrip().startswith("#"):  # a comment heading the next table
        end -= 1
    path.write_text("".join(lines[:start] + lines[end:]), encoding="utf-8")
    edit.removed.setdefault(table, []).append(ident)


def _front_and_prose(edit: Edit) -> tuple[str, str]:
    text = (edit.root / "plate.md").read_text(encoding="utf-8")
    _, front, prose = text.split("---\n", 2)
    return front, prose


def _write_plate(edit: Edit, front: str, prose: str) -> None:
    (edit.root / "plate.md").write_text(f"---\n{front}---\n{prose}", encoding="utf-8")


def set_default(edit: Edit, **choice: str) -> None:
    """Point [default] in plate.md's front matter at other presets or choices: set_default(model="qwen25-7b",
    sharding="zero3"); a key [default] does not hold yet is added as its first line."""
    front, prose = _front_and_prose(edit)
    head, table = re.split(r"(?m)^\[default\]\s*$", front, maxsplit=1)
    table, rest = re.split(r"(?m)^(?=\[)", table, maxsplit=1) if re.search(r"(?m)^\[", table) else (table, "")
    for key, ident in choice.items():  # in [default] only: a later table ([plates]) may hold the same key
        table, count = re.subn(rf'(?m)^{key}\s*=\s*"[^"]*"', f'{key} = {_toml(ident)}', table, count=1)
        if count == 0:
            table = f"\n{key} = {_toml(ident)}" + table
        edit.default[key] = ident
    _write_plate(edit, head + "[default]" + table + rest, prose)


def set_workshop(edit: Edit, **values: str) -> None:
    """Change text values of the [workshop] (the catalogue's, or presets.toml's): set_workshop(edit, gpu="mi300x")."""
    path = _file_of(edit.root, "workshop")
    text = path.read_text(encoding="utf-8")
    head, table = re.split(r"(?m)^\[workshop\]\s*$", text, maxsplit=1)
    for key, value in values.items():
        table, count = re.subn(rf'(?m)^{key}\s*=\s*"[^"]*"', f'{key} = "{value}"', table, count=1)
        assert count == 1, f"{path.name}'s [workshop] has no {key}"
    path.write_text(head + "[workshop]" + table, encoding="utf-8")


def cite_in_prose(edit: Edit, term_name: str, source_id: str) -> None:
    """A sentence at the end of the prose that uses the new term and cites the new source."""
    front, prose = _front_and_prose(edit)
    _write_plate(edit, front, prose.rstrip("\n") + f"\n\n{term_name} is older than these models "
                 f'{{{{ cite("{source_id}") }}}}.\n')


def additions(content: Path, dest: Path) -> Edit:
    """Additions only: a model, a network, a GPU without a source, a term and a source (cited)."""
    copy_content(content, dest)
    edit = Edit(dest)
    add(edit, "models", "mistral-7b", MISTRAL)
    add(edit, "networks", "ib-200", IB_200)
    add(edit, "gpus", "mi300x", MI300X)
    term = add(edit, "terms", "bucketing", TERM)
    source = add(edit, "sources", "goyal2017", SOURCE)
    cite_in_prose(edit, _tables(dest)["terms"][term]["name"], source)
    return edit


def new_default(content: Path, dest: Path) -> Edit:
    """Qwen2.5 7B and an 800 Gb/s network added and made the default; MI300X added without a source."""
    copy_content(content, dest)
    edit = Edit(dest)
    model = add(edit, "models", "qwen25-7b", QWEN)
    network = add(edit, "networks", "ib-800", IB_800)
    add(edit, "gpus", "mi300x", MI300X)
    set_default(edit, model=model, network=network)
    return edit


def _adapt_prose(edit: Edit, replacements: dict[str, dict[str, str]], names: dict[str, str]) -> None:
    """The prose edited as an author removing presets would: scenario(kind="old") points at a preset that stays,
    models["old"].name becomes the name as text, and a sentence citing only a removed source goes."""
    front, prose = _front_and_prose(edit)
    for table, pairs in replacements.items():
        for old, new in pairs.items():
            prose = re.sub(rf'\b{SCENARIO_KEY[table]}="{re.escape(old)}"', f'{SCENARIO_KEY[table]}="{new}"', prose)
            prose = re.sub(rf'\{{\{{\s*{table}\["{re.escape(old)}"\]\.name\s*\}}\}}', names[old], prose)
    for source in edit.removed.get("sources", []):
        prose = re.sub(rf'(?<=[.}}] )[^.{{}}]*\{{\{{\s*cite\("{re.escape(source)}"\)\s*\}}\}}\.\s*', "", prose)
    _write_plate(edit, front, prose)
    left = [ident for ids in edit.removed.values() for ident in ids if f'"{ident}"' in prose]
    assert not left, f"the prose still names removed presets or sources: {left}"


def spec_removed(content: Path, dest: Path) -> Edit:
    """The spec's presets removed but one model: the batches, networks and GPUs the spec names give way to
    others (a 2M batch, a 200 Gb/s network, Infinity Fabric, MI300X as the workshop's GPU), the sources of the
    removed GPUs go with them, and the default and the prose follow."""
    copy_content(content, dest)
    edit = Edit(dest)
    tables = _tables(dest)
    kept = next(m for m in SPEC_PRESETS["models"] if m in tables.get("models", {}))
    names = {ident: entry["name"] for entries in tables.values() for ident, entry in entries.items()
             if isinstance(entry, dict) and "name" in entry}
    # The GPU's own link may leave its name to the workshop GPU's interconnect (platelib.catalogue).
    workshop = tomllib.loads(_file_of(dest, "workshop").read_text(encoding="utf-8")).get("workshop", {})
    workshop_gpu = tables.get("gpus", {}).get(workshop.get("gpu"), {})
    names.update({ident: workshop_gpu.get("interconnect", "NVLink") for ident, entry in tables.get("networks", {}).items()
                  if ident not in names and (entry.get("interconnect") or entry.get("nvlink"))})
    batch = add(edit, "batches", "2M", BATCH_2M)
    network = add(edit, "networks", "ib-200", IB_200)
    fabric = add(edit, "networks", "fabric", FABRIC)
    gpu = add(edit, "gpus", "mi300x", MI300X)
    replacements: dict[str, dict[str, str]] = {}
    for table, ids in SPEC_PRESETS.items():
        for ident in ids:
            if ident in tables.get(table, {}) and not (table == "models" and ident == kept):
                remove(edit, table, ident)
    # Every model but the kept one goes too: the folder holds one model.
    for ident in list(_tables(dest).get("models", {})):
        if ident != kept:
            remove(edit, "models", ident)
    _follow_removals(edit)
    for ident in edit.removed.get("gpus", []):
        source = tables["gpus"][ident].get("source")
        if source and source in _tables(dest).get("sources", {}):
            remove(edit, "sources", source)
    set_workshop(edit, gpu=gpu)
    nvlink = {i for i, n in tables.get("networks", {}).items() if n.get("interconnect") or n.get("nvlink")}
    replacements["networks"] = {i: fabric if i in nvlink else network for i in edit.removed.get("networks", [])}
    replacements["batches"] = {i: batch for i in edit.removed.get("batches", [])}
    replacements["gpus"] = {i: gpu for i in edit.removed.get("gpus", [])}
    replacements["models"] = {i: kept for i in edit.removed.get("models", [])}
    _adapt_prose(edit, replacements, names)
    set_default(edit, model=kept, batch=batch, network=network)
    return edit


def _follow_removals(edit: Edit) -> None:
    """What names a removed preset goes with it, as an author would remove it: a published run's selection
    (presets.toml's [selections]) and the measured runs that name it, and the measured collectives on a removed GPU
    or network (measured.toml)."""
    for ident, chosen in list(_tables(edit.root).get("selections", {}).items()):
        if any(chosen.get(SCENARIO_KEY[t]) in ids for t, ids in edit.removed.items() if t in SCENARIO_KEY):
            remove(edit, "selections", ident)
            _drop_measured(edit.root / "measured.toml", "runs", "selection", [ident])
    for table in ("gpus", "networks"):
        _drop_measured(edit.root / "measured.toml", "collectives", SCENARIO_KEY[table], edit.removed.get(table, []))


def _drop_measured(path: Path, kind: str, key: str, ids: list[str]) -> None:
    """measured.toml's [[kind]] blocks whose key names one of ids, deleted (nothing when the file does not exist)."""
    if not path.exists():
        return
    blocks = re.split(r"(?m)^(?=\[\[)", path.read_text(encoding="utf-8"))
    named = lambda b: any(re.search(rf'(?m)^{key}\s*=\s*"{re.escape(i)}"', b) for i in ids)  # noqa: E731
    path.write_text("".join(b for b in blocks if not (b.startswith(f"[[{kind}]]") and named(b))), encoding="utf-8")


def one_removed(content: Path, dest: Path) -> Edit:
    """One preset removed: the largest model that is not the default (the prose names it as text instead)."""
    copy_content(content, dest)
    edit = Edit(dest)
    models = _tables(dest)["models"]
    default = tomllib.loads(_front_and_prose(edit)[0])["default"]["model"]
    others = sorted((m for m in models if m != default), key=lambda m: models[m]["params"])
    if len(others) > 1:  # the page keeps a choice of model
        remove(edit, "models", others[-1])
        _follow_removals(edit)
        _adapt_prose(edit, {"models": {others[-1]: others[0]}}, {others[-1]: models[others[-1]]["name"]})
    return edit


EDITS = {"additions": additions, "new-default": new_default, "spec-removed": spec_removed,
         "one-removed": one_removed}


def edited_copy(content: Path, dest: Path, kind: str = "additions") -> Edit:
    """content copied to dest with one of the EDITS made to it."""
    return EDITS[kind](content, dest)
