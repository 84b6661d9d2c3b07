"""The figures' specs: compiled Vega without data (the page feeds the shown selection's rows); static SVGs."""
import json
import re

import pytest
import vl_convert

from generator.source import content
from generator.plate import charts
from xiv4 import Selection
from generator.page.notation import num

from conftest import CONTENT, covered, spec_selection
from xiv4 import facts, rows_of, xfigures


@pytest.fixture(scope="module")
def made():
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    return atlas, xfigures.figures(atlas, c.plate.default)


def default_facts(atlas):
    """The facts of the content's default selection, which the static figures draw."""
    return atlas.facts(content.load(CONTENT).plate.default)


def test_figures_compiled_to_vega(made):
    _, figures = made
    ids = [f.id for f in figures]
    assert ids[:3] == ["fig-time", "fig-efficiency", "fig-timeline"] and "fig-memory" in ids
    for f in figures:
        assert "$schema" not in f.vega  # dropped: the page never fetches it, and it is 50 bytes per figure
        assert "marks" in f.vega and "data" in f.vega


@pytest.mark.parametrize("chart", ["time_chart", "efficiency_chart", "timeline_chart", "memory_chart"])
def test_every_chart_is_valid_vega_lite(chart, monkeypatch):
    """The build compiles the charts without validating them (to_vega): here each is checked against the schema,
    and what the build compiles is the same spec."""
    import jsonschema
    make = getattr(xfigures, chart)
    built = make() if chart == "timeline_chart" else make(1024)
    validated = built.to_dict()  # raises on a spec Vega-Lite's schema rejects
    compiled = []
    monkeypatch.setattr(vl_convert, "vegalite_to_vega", lambda spec: compiled.append(spec) or {"data": []})
    charts.to_vega(built, "a description")
    assert compiled[0] == {**validated, "description": "a description", "config": charts.theme()}
    with pytest.raises(jsonschema.ValidationError):  # the check can fail
        built.properties(width="wide").to_dict()


def test_specs_carry_no_data_values(made):
    """The grid is embedded once in the page, not in each spec."""
    atlas, figures = made
    atlas_models = atlas.presets.models
    for f in figures:
        named = {d["name"]: d for d in f.vega["data"]}
        fed = {"fig-timeline": {xfigures.TIMELINE_DATA, xfigures.TIMELINE_FACTS},
               "fig-memory": {xfigures.MEMORY_DATA}}.get(f.id, {xfigures.GRID_DATA, xfigures.FACTS_DATA})
        assert fed <= set(named)
        assert all("values" not in named[name] for name in fed)
        others = set(atlas_models) - {content.load(CONTENT).plate.default.model}
        assert not [m for m in others if f'"{m}"' in json.dumps(f.vega)]  # no other selection's data


def test_time_figure_is_log_log_with_both_series(made):
    _, figures = made
    scales = {s["name"]: s for s in figures[0].vega["scales"]}
    assert scales["x"]["type"] == "log" and scales["y"]["type"] == "log"
    text = json.dumps(figures[0].vega)
    assert "compute_s" in text and "comm_s" in text and "window_s" in text


def test_static_svg_shows_the_default_selection(made):
    atlas, figures = made
    f = default_facts(atlas)
    time_svg, efficiency_svg = figures[0].svg, figures[1].svg
    for svg in (time_svg, efficiency_svg):
        assert svg.startswith("<svg") and svg.endswith("</svg>")
        # the rule at the grid's crossing, and n* where the lines meet, each when it lies on the figure
        assert ("first crossed: " + num(f.crossing_replicas) in svg if f.crossing_replicas
                else "first crossed" not in svg)
        assert (f"n* ≈ {num(f.continuous_crossing)}" in svg) == (f.continuous_crossing <= f.max_replicas)
        assert "<?xml" not in svg
    assert ">compute<" in time_svg and ">all-reduce<" in time_svg
    one_sequence = f.batch.tokens / f.workshop.seq_len
    # shaded where a replica gets less than a sequence (the key below the figure names the shading)
    assert bool(re.search(r'class="mark-rect role-mark band_marks"[^>]*><path', time_svg)) == \
        (one_sequence < f.max_replicas)


def test_static_svg_ids_are_made_unique_per_figure(monkeypatch):
    # vl-convert's SVGs of these figures carry no ids today; a clipped mark would bring clipPath ids like these.
    drawn = ('<?xml version="1.0" encoding="utf-8"?>\n<svg><defs><clipPath id="clip1"><rect/></clipPath>'
             '<clipPath id="clip10"><rect/></clipPath></defs><g clip-path="url(#clip1)"/>'
             '<g clip-path="url(#clip10)"/></svg>')
    monkeypatch.setattr(vl_convert, "vega_to_svg", lambda spec: drawn)
    a, b = (charts.static_svg({"data": []}, {}, fid) for fid in ("fig-a", "fig-b"))
    assert re.findall(r'\bid="([^"]+)"', a + b) == ["fig-a-clip1", "fig-a-clip10", "fig-b-clip1", "fig-b-clip10"]
    assert re.findall(r"url\(#([^)]+)\)", a) == ["fig-a-clip1", "fig-a-clip10"]
    assert "<?xml" not in a


def test_every_id_in_the_built_page_is_unique(site):
    ids = re.findall(r'\bid="([^"]+)"', (site / "index.html").read_text())
    assert len(ids) > 20 and len(ids) == len(set(ids))


def test_facts_rows_mark_crossing_and_one_sequence(made):
    atlas, _ = made
    for sel in covered(atlas):  # every two choices of any two controls together, and more at random
        f = atlas.facts(sel)
        row = rows_of(f)["facts"][0]
        assert row["crossing"] == f.crossing_replicas and row["n_star_text"] == "n* ≈ " + num(f.continuous_crossing)
        assert row["one_sequence"] == f.batch.tokens / atlas.presets.workshop.seq_len
        domain = f.gpu.nvlink_domain  # in GPUs; the shading counts replicas of gpus_per_replica GPUs each
        reach = max(1, domain / f.inputs.gpus_per_replica) if f.network.nvlink and domain else None
        assert row["hypothetical_from"] == (reach if reach is not None and reach < f.max_replicas else None)


def test_facts_rows_state_the_spec_claims(made):
    """MODEL.md: Llama 3 8B, 4M tokens, 400 Gb/s first crosses at 1,024 replicas, n* ≈ 708 (707 dropping the 1),
    and gets less than one 8,192-token sequence per replica from 512."""
    atlas, _ = made
    f = atlas.facts(spec_selection(atlas.presets))
    row = rows_of(f)["facts"][0]
    assert row["crossing"] == 1024 and row["one_sequence"] == 512 and row["hypothetical_from"] is None
    assert row["n_star_text"] == "n* ≈ 708"


def test_static_svg_url_references_all_resolve(made):
    """Every url(#id) in a static SVG names an id the SVG holds: renaming ids must rename their uses."""
    _, figures = made
    for f in figures:
        ids = set(re.findall(r'\bid="([^"]+)"', f.svg))
        used = set(re.findall(r"url\(#([^)]+)\)", f.svg))
        assert used <= ids, used - ids


def test_unique_ids_renames_every_reference_with_its_id():
    svg = ('<svg><defs><clipPath id="clip1"><rect/></clipPath><clipPath id="clip10"><rect/></clipPath></defs>'
           '<g clip-path="url(#clip1)"></g><g clip-path="url(#clip10)"></g><use href="#clip1"/></svg>')
    out = charts.unique_ids(svg, "fig-a")
    ids = set(re.findall(r'\bid="([^"]+)"', out))
    used = set(re.findall(r"url\(#([^)]+)\)", out)) | set(re.findall(r'href="#([^"]+)"', out))
    assert ids == {"fig-a-clip1", "fig-a-clip10"} and used == ids
    assert charts.unique_ids("<svg><g/></svg>", "x") == "<svg><g/></svg>"


def test_nvlink_past_its_domain_is_shaded(made):
    atlas, _ = made
    d = content.load(CONTENT).plate.default
    reach = [(n, g) for n in atlas.presets.networks.values() if n.nvlink for g in atlas.presets.gpus.values()
             if g.nvlink_domain and g.nvlink_domain < atlas.presets.workshop.max_replicas]
    flat = [n for n in atlas.presets.networks.values() if not n.nvlink]
    if not reach or not flat:
        pytest.skip(f"{CONTENT} has no NVLink network with a GPU whose domain ends on the grid, or no other network")
    (network, gpu), other = reach[0], flat[0]
    shaded = xfigures.figures(atlas, Selection(d.model, d.batch, network.id, gpu=gpu.id))
    plain = xfigures.figures(atlas, Selection(d.model, d.batch, other.id, gpu=gpu.id))
    for a, b in ((a, b) for a, b in zip(shaded, plain) if xfigures.FACTS_DATA in {d["name"] for d in a.vega["data"]}):
        shading = r'class="mark-rect role-mark hypothetical_marks"[^>]*><path'  # named by the key, not in the plot
        assert re.search(shading, a.svg) and not re.search(shading, b.svg)


def test_the_real_cluster_is_drawn_beside_the_workshop_on_figures_1_and_2(made):
    """Issue 22: the real cluster's line (near-black, dash-dotted) and its direct label, in the static
    SVGs of the time and efficiency figures, fed by the default's own rows."""
    atlas, figures = made
    f = default_facts(atlas)
    rows = rows_of(f)["grid"]
    assert [r["cluster_s"] for r in rows] == f.cluster["comm_s"]
    assert [r["cluster_efficiency"] for r in rows] == f.cluster["efficiency"]
    colour = charts.ink(xfigures.SERIES["real cluster"][0])
    # the key below Figures 1 and 2 names it, beside its dash (page/legend.html.j2); in the plot its words met the rules
    key = (CONTENT / "page" / "legend.html.j2").read_text(encoding="utf-8")
    assert '"--c-cluster", "DDP on a real cluster", dash="8 3 2 3"' in key
    for svg in (figures[0].svg, figures[1].svg):
        assert re.search(rf'<path[^>]*stroke="{colour}"[^>]*stroke-dasharray="8,3,2,3"', svg) or \
            re.search(rf'<path[^>]*stroke-dasharray="8,3,2,3"[^>]*stroke="{colour}"', svg), "no dash-dotted line"
    assert ">real cluster<" not in figures[2].svg  # the timeline is the workshop's step


def test_the_theme_block_is_read_and_its_figure_rules_keyed_by_name(tmp_path):
    """generator/page/theme.py: the first top-level :root block's variables (not a media query's), a figure rule named
    by a variable gets that variable's value, and two figure variables of one value are refused at the line."""
    from generator.page import theme
    css = (':root {\n  --a: #010101;\n  --b: #020202;\n  --sans: x, "Y Z";\n}\n'
           '@media (prefers-color-scheme: dark) { :root { --a: #fefefe; } }\n'
           '.chart [fill="--a"] { fill: var(--a); }\n.chart [stroke="--b"] { stroke: var(--b); }\n')
    t = theme.parse(css, tmp_path / "plate.css")
    assert t.values == {"--a": "#010101", "--b": "#020202", "--sans": 'x, "Y Z"'} and t.lines["--b"] == 3
    assert t.font("--sans") == "x, 'Y Z'"
    assert '.chart [fill="#010101"] { fill: var(--a); }' in t.page_css() and '"--b"' not in t.page_css()
    same = theme.parse(css.replace("#020202", "#010101"), tmp_path / "plate.css")
    with pytest.raises(theme.ThemeError, match=r"plate\.css, line 3: --b has the value of --a"):
        same.page_css()
    with pytest.raises(theme.ThemeError, match="use --c, which the :root block does not set"):
        t["--c"]


def sides_of_n_star(rows: list[dict], n_star: float) -> tuple[float, float] | None:
    """Figure 1's communication line less the time it is drawn against (the backward pass, else compute) at the
    powers of two just below and just above n*; None where n* is not strictly inside the grid."""
    below = [r for r in rows if r["replicas"] < n_star]
    above = [r for r in rows if r["replicas"] > n_star]
    if not below or not above:
        return None
    window = lambda r: r["compute_s"] if r["window_s"] is None else r["window_s"]  # noqa: E731
    return below[-1]["comm_s"] - window(below[-1]), above[0]["comm_s"] - window(above[0])


def test_the_communication_line_meets_the_line_it_hides_behind_at_n_star(made):
    """The legend's n*, "where the two lines meet", in a covering set of preset selections; under ZeRO with the
    backward pass only, the line is the traffic of the backward pass (the all-gather hides behind the forward pass:
    ZeRO-3's for the forward, ZeRO-1/2's of the updated weights, prefetched behind the next one)."""
    atlas, _ = made
    met = []
    for sel in covered(atlas):  # every two choices of any two controls together, and more at random
        f = atlas.facts(sel)
        rows = rows_of(f)["grid"]
        sides = sides_of_n_star(rows, f.continuous_crossing)
        if sides is not None:
            assert sides[0] < 0 < sides[1], (sel, f.continuous_crossing, sides)
            met.append(f.sharding_stage > 0 and f.backward_only)
        if not (f.sharding_stage > 0 and f.backward_only):  # elsewhere the line is all the communication
            assert [r["comm_s"] for r in rows] == [p.comm_s for p in f.points], sel
    assert any(met) and not all(met)
