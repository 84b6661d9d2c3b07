"""The page: JSON safe inside <script> and the CSP's hashes of the inline script and style."""
import json
import re

from generator.page import render
from xiv4 import xpresets, xwords


def test_script_json_cannot_close_its_element():
    text = str(render.script_json({"a": "</script><!-- \u2028\u2029 &"}))
    assert "</" not in text and "<!--" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028\u2029 &"}


def scripts_of(page: str) -> list[tuple[dict, str]]:
    """Each <script> element of the page: its attributes and its text, as an HTML parser reads them."""
    from html.parser import HTMLParser

    class Scripts(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=False)
            self.found, self.open = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "script":
                self.open = (dict(attrs), [])

        def handle_data(self, data):
            if self.open is not None:
                self.open[1].append(data)

        def handle_endtag(self, tag):
            if tag == "script" and self.open is not None:
                self.found.append((self.open[0], "".join(self.open[1])))
                self.open = None

    parser = Scripts()
    parser.feed(page)
    parser.close()
    return parser.found


def test_csp_hashes_match_the_inline_scripts_and_style(site):
    import base64
    import hashlib
    page = (site / "index.html").read_text()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "unsafe-eval" not in csp and "unsafe-inline" not in csp
    def digest(code):
        return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"
    # Every script the browser would run (all but JSON and inert text), read as the browser reads the page; one
    # at least: a loop over nothing would pass whatever the page held.
    scripts = [code for attrs, code in scripts_of(page) if attrs.get("type") not in ("application/json", "text/plain")]
    assert scripts
    for code in scripts:
        assert digest(code) in csp
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert digest(style) in csp


def test_readouts_and_descriptions_agree_with_model_md_for_every_selection():
    """Every readout's and description's numbers, against the formulas of MODEL.md computed in the test."""
    from conftest import CONTENT
    from generator.source import content
    from xiv4 import facts
    from spec_model import check_descriptions, check_readout, expected
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    workshop = [s for s in atlas.selections  # MODEL.md's workshop: every option at its first value
                if atlas.complete(s) == atlas.complete(xpresets.Selection(s.model, s.batch, s.network))]
    assert len(workshop) == len(c.presets.models) * len(c.presets.batches) * len(c.presets.networks)
    for sel in workshop:
        f = atlas.facts(sel)
        check_readout(xwords.readout(f), expected(c.presets, sel), c.presets)
        check_descriptions({fid: xwords.describe(f, fid)
                            for fid in ("fig-time", "fig-efficiency")}, expected(c.presets, sel))


def quiet_selection(c, atlas):
    """A selection of the content's presets (workshop options) whose all-reduce never catches up on the grid."""
    import pytest
    from generator.source import content
    for sel in (xpresets.Selection(m, b, n) for m in c.presets.models for b in c.presets.batches
                for n in c.presets.networks):
        if atlas.facts(sel).crossing_replicas is None:
            return sel
    pytest.skip("every selection of the content crosses on the grid")


def test_a_selection_that_never_crosses_quotes_its_largest_replica_count():
    """Where the all-reduce stays hidden (Llama 3 8B over NVLink at 16M tokens in the shipped content), the readout
    quotes the all-reduce and the efficiency at the largest replica count, as MODEL.md's formulas give them."""
    from conftest import CONTENT
    from generator.source import content
    from xiv4 import facts
    from generator.page.notation import percent, seconds
    from spec_model import expected
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    sel = quiet_selection(c, atlas)
    e = expected(c.presets, sel)
    last = e.replicas[-1]
    assert e.crossing is None
    assert (f"where communication takes {seconds(e.allreduce_s[last])}; efficiency still "
            f"{percent(e.efficiency[last])}") in xwords.readout(atlas.facts(sel))


def test_the_independent_checks_catch_planted_mistakes():
    """The checks above can fail: a wrong quoted time, and an all-reduce that 'rises from none'."""
    import pytest
    from conftest import CONTENT
    from generator.source import content
    from xiv4 import facts
    from spec_model import check_descriptions, check_readout, expected
    c = content.load(CONTENT)
    atlas = facts.Atlas(c.presets)
    quiet = quiet_selection(c, atlas)
    f = atlas.facts(quiet)
    readout = xwords.readout(f)
    planted = re.sub(r"(communication takes )([\d.]+)( s)", lambda m: f"{m[1]}{float(m[2]) * 0.9:.3g}{m[3]}", readout)
    assert planted != readout  # the mistake was planted
    with pytest.raises(AssertionError):
        check_readout(planted, expected(c.presets, quiet), c.presets)
    sel = c.plate.default
    f = atlas.facts(sel)
    words = {fid: xwords.describe(f, fid) for fid in ("fig-time", "fig-efficiency")}
    words["fig-time"] = re.sub(r"takes [\d.]+ s on 2 replicas", "rises from none on 2 replicas", words["fig-time"])
    assert "rises from none" in words["fig-time"]  # the mistake was planted
    with pytest.raises(AssertionError):
        check_descriptions(words, expected(c.presets, sel))
