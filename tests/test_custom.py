"""The reader's own run (issue 10): free inputs checked as the content schema checks the same fields, in Python
and in the page alike; bad values get an inline message and leave the figures alone; a custom run's numbers and
words equal XIV.4's plate/model.py's; the URL reproduces it; the Sharding control and the memory figure."""
import json

import pytest
from numpy.testing import assert_allclose

from generator.source import content, schema
from generator.page import notation, render
from xiv4 import Selection

from conftest import CONTENT, current, plates, spec_selection, wait_until
from xiv4 import custom, facts, xpage, xwords

# The acceptance case of issue 10: a 13B model, a 2,000,000-token batch, 25 GB/s, 38% MFU.
ACCEPTANCE = {"params": "13,000,000,000", "tokens": "2000000", "gbps": "25"}
ACCEPTANCE_MFU = 38  # percent, on the slider
BAD = ["0", "-5", "abc", "NaN", "1e400", "100000000000000000000", ""]
SNAPSHOT = """() => ({
  figures: [...document.querySelectorAll('.chart')].map((c) => c.innerHTML),
  readout: [...document.querySelectorAll('#readout p')].map((p) => p.textContent),
  tables: Object.fromEntries([...document.querySelectorAll('[data-table]')].map((t) => [t.dataset.table,
    [...t.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent))])),
  describe: Object.fromEntries([...document.querySelectorAll('[data-describe]')].map((d) => [d.dataset.describe,
    d.textContent])),
  captions: [...document.querySelectorAll('figcaption [data-selection]')].map((c) => c.textContent),
  shown: document.documentElement.dataset.shown, own: document.documentElement.dataset.ownShown,
})"""


@pytest.fixture(scope="module")
def atlas():
    return facts.Atlas(content.load(CONTENT).presets)


# --- Python: the checks are the schema's -------------------------------------------------------------------

def test_each_free_input_is_checked_as_the_schema_checks_its_field():
    kinds = {"params": "count", "tokens": "count", "gbps": "positive", "mfu": "fraction"}
    for field, kind in kinds.items():
        got = custom.FIELDS[field][2]  # the schema's kind, read from content.py's tables (bounded or not)
        assert (got.kind if isinstance(got, schema.Range) else got) == kind
    for text in BAD + ["1.5", "13e9", "2e-3", "inf"]:
        value = custom.parse(text)
        for field in ("params", "tokens", "gbps"):
            got, message = custom.check(field, text)
            why = schema._check(custom.FIELDS[field][2], value)
            assert (message is None) == (why is None), (field, text)
            if message:
                assert message.startswith(why.rsplit(", got ", 1)[0]) and message.endswith(json.dumps(text))


def test_good_values_parse_as_toml_would():
    assert custom.check("params", "13,000,000,000") == (13_000_000_000, None)
    assert custom.check("params", "13_000_000_000") == (13_000_000_000, None)
    assert custom.check("gbps", "25") == (25, None) and custom.check("gbps", "12.5") == (12.5, None)
    assert custom.check("mfu", "0.38") == (0.38, None)
    assert custom.check("mfu", "0.9")[1] == 'must be from 20% to 70%, the slider\'s range, got "0.9"'
    assert custom.check("mfu", "0.2") == (0.2, None) and custom.check("mfu", "0.7") == (0.7, None)  # its ends are in it
    assert "2^53" in custom.check("params", str(2**53 + 1))[1]
    assert "without a decimal point or exponent" in custom.check("params", "13e9")[1]


def test_layer_shape_is_all_or_none_and_leaves_room_beside_the_embeddings():
    assert custom.shape_problem({"params": 8e9}) is None
    assert custom.shape_problem({"params": 8e9, "layers": 32})[0] == "d_model"
    shape = {"layers": 32, "d_model": 4096, "ffn": 14336, "vocab": 128256}
    assert custom.shape_problem({"params": 8_030_261_248, **shape}) is None
    assert custom.shape_problem({"params": 1_000_000_000, **shape})[0] == "params"


def test_values_that_overflow_the_model_together_are_refused(atlas):
    sel = Selection("custom", content.load(CONTENT).plate.default.batch, "custom")
    assert custom.check("gbps", "1e300")[1].startswith("must be from 0.001 to 1,000,000 GB/s")  # the schema's bounds
    # Within every field's bounds nothing overflows; the guard stays for values that reach the model another way.
    f = custom.own_facts(atlas, sel, {"params": 8_000_000_000, "gbps": 1e300})
    assert custom.model_problem(f) == custom.TOO_FAR
    assert custom.model_problem(custom.own_facts(atlas, sel, {"params": 8_000_000_000, "gbps": 25})) is None


def test_own_facts_of_a_preset_equal_the_atlas(atlas):
    """A custom run with a preset's own values is that preset: the same numbers and texts."""
    p = atlas.presets
    sel = Selection("custom", "custom", "custom", sharding="zero1")
    network = next(n for n in p.networks.values() if not n.nvlink)  # a custom link has a speed of its own
    d = content.load(CONTENT).plate.default
    m = p.models[d.model]
    f = custom.own_facts(atlas, sel, {"params": m.params, "tokens": p.batches[d.batch].tokens,
                                      "gbps": network.link_gbytes_per_s})
    ref = atlas.facts(Selection(d.model, d.batch, network.id, sharding="zero1"))
    assert len(f.points) == len(ref.points)
    for a, b in zip(f.points, ref.points):
        assert a == b
    assert xwords.readout_paragraphs(f)[0] == xwords.readout_paragraphs(ref)[0]
    assert (f.smallest_fitting_replicas, f.smallest_fitting_on_grid) == \
        (ref.smallest_fitting_replicas, ref.smallest_fitting_on_grid)


def test_zero1_fits_the_spec_selection_from_3_replicas(atlas):
    """MODEL.md: Llama 3 8B's states fit an H100 (80 × 10⁹ B) under ZeRO-1 from 3 replicas, 4 as a power of two."""
    f = atlas.facts(spec_selection(atlas.presets, sharding="zero1"))
    assert (f.smallest_fitting_replicas, f.smallest_fitting_on_grid) == (3, 4)
    assert "from 3 replicas (4 on the figures' powers of two)" in xwords.readout_paragraphs(f)[2]


# --- the page --------------------------------------------------------------------------------------------


def _python(atlas, sel: Selection, values: dict):
    return custom.own_facts(atlas, sel, values)


def _fill_acceptance(page):
    page.get_by_label("Model", exact=True).select_option(value="custom")
    page.get_by_label("Global batch", exact=True).select_option(value="custom")
    page.get_by_label("Network", exact=True).select_option(value="custom")
    for field, text in ACCEPTANCE.items():
        page.fill(f"#own-{field}", text)
        page.dispatch_event(f"#own-{field}", "change")
    for shape in custom.SHAPE:  # the layer shape is optional: leave it out
        page.fill(f"#own-{shape}", "")
        page.dispatch_event(f"#own-{shape}", "change")
    page.eval_on_selector("#own-mfu", "(el, v) => { el.value = String(v); "
                          "el.dispatchEvent(new Event('input', {bubbles: true})); "
                          "el.dispatchEvent(new Event('change', {bubbles: true})); }", ACCEPTANCE_MFU)


def _same_as_python(got: dict, f, seq_len: int):
    assert got["readout"] == xwords.readout_paragraphs(f, plates())
    for fid, rows in got["tables"].items():
        assert rows == [list(r) for r in xwords.table_rows(f, fid)], fid
    for fid, text in got["describe"].items():
        assert text == xwords.describe(f, fid), fid
    assert all(c == f.caption for c in got["captions"])


@pytest.mark.browser
def test_acceptance_custom_run_equals_python_and_survives_a_reload(site, open_page, atlas):
    watched = open_page(site)
    page = watched.page
    before = page.evaluate(SNAPSHOT)
    _fill_acceptance(page)
    wait_until(page, "document.documentElement.dataset.drawn.includes('mfu=0.38')")
    current(page)  # what waits out of sight too
    wait_until(page, "document.documentElement.dataset.ownShown.includes('mfu=0.38')")
    got = page.evaluate(SNAPSHOT)
    assert got["shown"] == f"custom|custom|custom|{atlas.presets.workshop.gpu}|step|bf16|flat|none"
    values = {"params": 13_000_000_000, "tokens": 2_000_000, "gbps": 25, "mfu": 0.38}
    f = _python(atlas, Selection("custom", "custom", "custom"), values)
    _same_as_python(got, f, atlas.presets.workshop.seq_len)
    # n* from MODEL.md's formula on the workshop's GPU (201 and 256 on an H100 SXM)
    n_star = 1 + 1.5 * 2_000_000 * 25e9 / (atlas.presets.gpu.peak_tflops * 1e12 * 0.38)
    past = next(2**k for k in range(64) if 2**k > n_star)
    assert f"n* ≈ {notation.num(n_star)} replicas; {notation.num(past)} is the first power of two" in got["readout"][0]
    assert all(a != b for a, b in zip(got["figures"], before["figures"])), "a figure did not redraw"
    # The numbers the live views draw are the model's, to 1e-9.
    points = page.evaluate("() => window.plate.factsOf(window.plate.selection()).points")
    for name in ("compute_s", "allreduce_s", "comm_s", "step_s", "efficiency", "states_bytes"):
        assert_allclose([p[name] for p in points], getattr(f.grid, name), rtol=1e-9, err_msg=name)
    drawn = page.evaluate("() => window.plate.views[0].data('grid')")
    assert_allclose([r["comm_s"] for r in drawn], f.grid.comm_s, rtol=1e-9)
    # The link reproduces the run after a reload.
    wait_until(page, "location.hash.includes('mfu=0.38')")  # the URL is written after the redraw's paint
    url = page.url
    assert "params=13000000000" in url and "tokens=2000000" in url and "gbps=25" in url and "mfu=0.38" in url
    page.reload()
    wait_until(page, "document.documentElement.dataset.ready")
    again = page.evaluate(SNAPSHOT)
    _same_as_python(again, f, atlas.presets.workshop.seq_len)
    assert page.input_value("#own-params") == "13000000000" and page.input_value("#own-mfu") == "38"
    assert page.get_by_label("Model", exact=True).input_value() == "custom"
    assert watched.outside_requests(site) == []
    assert watched.problems() == []  # no CSP violation, no error: offline, under the page's strict CSP


@pytest.mark.browser
@pytest.mark.parametrize("field, control", [("params", "Model"), ("tokens", "Global batch"),
                                            ("gbps", "Network")])
def test_bad_values_get_an_inline_message_and_the_figures_stay(site, open_page, field, control):
    watched = open_page(site)
    page = watched.page
    page.get_by_label(control, exact=True).select_option(value="custom")
    current(page)  # what waits out of sight too
    wait_until(page, "document.documentElement.dataset.shown.includes('custom')")
    good = page.evaluate(SNAPSHOT)
    for text in BAD:
        page.fill(f"#own-{field}", text)
        page.dispatch_event(f"#own-{field}", "change")
        page.wait_for_timeout(50)
        box = page.locator(f"#own-{field}-error")
        assert box.is_visible(), text
        assert box.text_content() == (custom.check(field, text)[1] or custom.TOO_FAR)
        assert page.get_attribute(f"#own-{field}", "aria-invalid") == "true"
        assert page.get_attribute(f"#own-{field}", "aria-describedby") == f"own-{field}-error"
        assert page.evaluate(SNAPSHOT) == good, f"the figures moved for {text!r}"
    # A good value clears the message and draws again.
    page.fill(f"#own-{field}", {"params": "13000000000", "tokens": "2000000", "gbps": "25"}[field])
    page.dispatch_event(f"#own-{field}", "change")
    wait_until(page, f"document.documentElement.dataset.ownShown.includes('{field}=')")
    assert not page.locator(f"#own-{field}-error").is_visible()
    assert page.get_attribute(f"#own-{field}", "aria-invalid") is None
    assert watched.problems() == []


@pytest.mark.browser
def test_the_page_checks_every_text_as_python_does(site, open_page):
    """Each text, named by the link for its field with its control on Custom…: the page's message is custom.check's,
    its value the one Python reads, and its whole answer (PAGE's own, compiled) Python's."""
    from xiv4 import PLATE
    page = open_page(site).page
    texts = BAD + ["13,000,000,000", "1_000", "1.5", "13e9", "2e-3", "inf", "-inf", "+7", " 42 ", "0.0", "1,0",
                   str(2**53), str(2**53 + 1), "9" * 30, "0.38", "0.2", "0.7", "0.71", "1", "1e-320", "<b>x</b>"]
    data = json.loads(page.locator("#plate-data").text_content())
    typed = page.evaluate("() => Object.fromEntries([...document.querySelectorAll('[id^=own-]')]"
                          ".filter((e) => e.tagName === 'INPUT').map((e) => [e.name, e.value]))")
    assert set(typed) == set(custom.FIELDS)
    cases = []
    for field, (control, _, _) in custom.FIELDS.items():
        sel = {**data["default"], **({control: custom.CUSTOM} if control in data["default"] else {})}
        cases += [[sel, typed, {field: t}] for t in texts]
    got = page.evaluate("(cases) => cases.map(([s, t, l]) => window.plate.ownRead(s, t, l))", cases)
    for (sel, _, linked), answer in zip(cases, got):
        [(field, text)] = linked.items()
        assert answer == PLATE.page_own.own(sel, typed, linked, data), (field, text)
        py_value, py_message = custom.check(field, text)
        if py_message is not None and not (field in custom.SHAPE and text.strip() == ""):  # optional: left out
            assert answer["messages"][field] == py_message, (field, text)
        elif answer["selection"] is not None and field in answer["selection"]:
            assert answer["selection"][field] == float(py_value), (field, text)  # a double either way


@pytest.mark.browser
def test_a_bad_value_in_the_url_is_shown_and_the_default_drawn(site, open_page):
    watched = open_page(site, hash="#model=custom&params=abc&mfu=NaN")
    page = watched.page
    c = content.load(CONTENT)
    default = facts.Atlas(c.presets).complete(c.plate.default)
    assert page.evaluate("document.documentElement.dataset.shown") == xpage.selection_key(default)
    assert page.locator("#own-params-error").text_content() == custom.check("params", "abc")[1]
    assert page.locator("#own-mfu-error").text_content() == custom.check("mfu", "NaN")[1]
    assert watched.problems() == []


@pytest.mark.browser
def test_sharding_control_memory_readout_and_zero3_traffic(site, open_page, atlas):
    watched = open_page(site)
    page = watched.page
    d = content.load(CONTENT).plate.default
    base = Selection(d.model, d.batch, d.network)
    page.get_by_label("Sharding", exact=True).select_option(label="ZeRO-1")
    current(page)  # what waits out of sight too
    wait_until(page, "document.documentElement.dataset.shown.endsWith('|zero1')")
    got = page.evaluate(SNAPSHOT)
    f = atlas.facts(Selection(d.model, d.batch, d.network, sharding="zero1"))
    assert got["readout"] == xwords.readout_paragraphs(f, plates())  # the page's memory readout is Python's
    assert "10⁹" not in got["readout"][2]  # what GB means is said once, in the prose
    fits = [row[2] for row in got["tables"]["fig-memory"]]
    first = f.smallest_fitting_on_grid  # the first power of two whose states fit, if any does
    assert (fits.index("yes") if "yes" in fits else None) == \
        (None if first is None else [p.replicas for p in f.points].index(first))
    assert all("ZeRO-1" in c for c in got["captions"])
    wait_until(page, "location.hash.includes('sharding=zero1')")  # the URL is written after the redraw's paint
    page.reload()  # the link keeps the sharding
    wait_until(page, "document.documentElement.dataset.ready")
    assert page.evaluate("document.documentElement.dataset.shown").endswith("|zero1")
    assert page.evaluate(SNAPSHOT)["readout"] == got["readout"]
    # ZeRO-3: 1.5 × the all-reduce time in the time figure and the efficiency figure's data.
    page.get_by_label("Sharding", exact=True).select_option(label="ZeRO-3 / FSDP")
    current(page)  # what waits out of sight too
    wait_until(page, "document.documentElement.dataset.shown.endsWith('|zero3')")
    plain = atlas.facts(base)
    drawn = page.evaluate("() => window.plate.views.map((v) => { try { return v.data('grid'); } catch (e) "
                          "{ return null; } })")
    for rows in (d for d in drawn if d):
        assert_allclose([r["comm_s"] for r in rows], [1.5 * p.allreduce_s for p in plain.points], rtol=1e-12)
    z3 = atlas.facts(Selection(d.model, d.batch, d.network, sharding="zero3"))
    assert_allclose([p.efficiency for p in z3.points],
                    [p.compute_s / max(p.compute_s, 1.5 * p.allreduce_s) for p in plain.points], rtol=1e-12)
    assert [r["efficiency"] for r in drawn[1]] == pytest.approx([p.efficiency for p in z3.points], rel=1e-12)
    assert watched.problems() == []


def test_prose_gives_the_default_s_sharding_numbers_from_the_model(site, atlas):
    """The plate's paragraph on sharding: every number is the model's for the default selection."""
    import re
    c = content.load(CONTENT)
    text = re.sub(r"<[^>]+>", "", (site / "index.html").read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", text).replace("’", "'")
    d = atlas.complete(c.plate.default)
    z1, z3 = (atlas.facts(Selection(d.model, d.batch, d.network, sharding=s)) for s in ("zero1", "zero3"))
    plain = atlas.facts(d)
    if z1.smallest_fitting_replicas and z1.smallest_fitting_replicas > 1:  # else the prose leaves ZeRO-1 out
        assert f"(ZeRO-1) fits them from {notation.num(z1.smallest_fitting_replicas)} replicas" in text
    else:
        assert "(ZeRO-1) fits them from" not in text
    if z3.smallest_fitting_replicas > 1:  # one GPU holds them unsharded: nothing to fit
        assert f"(ZeRO-3) fits them from {notation.num(z3.smallest_fitting_replicas)} but" in text
    factor = z3.at(2).comm_s / z3.at(2).allreduce_s
    b = c.presets.workshop.bytes_per_grad
    assert abs(factor - (2 + 2 + b) / (2 * b)) < 1e-12  # two BF16 gathers and a reduce-scatter, against 2·b·N
    assert f"{notation.sig(factor)} times the bytes with BF16 gradients: n* ≈ {notation.num(z3.continuous_crossing)} whether" in text
    if "sharding" in c.plate.plates:
        assert f"(plate {c.plate.plates['sharding']})" in text


from test_accessibility import AXE_RUN, WCAG, axe_js  # noqa: E402,F401  (the fixture installs axe-core once)

OPEN_ALL = "#model=custom&params=abc&batch=custom&tokens=2000000&network=custom&gbps=25&mfu=0.38"


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violation_with_the_free_inputs_open_and_a_message_shown(site, open_page, axe_js, scheme):
    page = open_page(site, hash=OPEN_ALL, bypass_csp=True, color_scheme=scheme).page
    assert page.locator("#own-params-error").is_visible() and page.locator("#own-gbps").is_visible()
    page.add_script_tag(content=axe_js)
    assert page.evaluate(AXE_RUN, WCAG) == []


@pytest.mark.browser
def test_free_inputs_fit_a_360px_phone_and_take_a_thumb(site, open_page):
    page = open_page(site, hash=OPEN_ALL, viewport={"width": 360, "height": 740}, is_mobile=True,
                     has_touch=True).page
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    for field in custom.FIELDS:
        box = page.locator(f"#own-{field}").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360 and box["height"] >= 44, field
    box = page.locator("#own-params-error").bounding_box()
    assert box["x"] + box["width"] <= 360
