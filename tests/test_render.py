"""The page: JSON safe inside <script> and the CSP's hashes of the inline script and style."""
import json
import re

from generator import render


def test_script_json_cannot_close_its_element():
    text = str(render.script_json({"a": "</script><!-- \u2028\u2029 &"}))
    assert "</" not in text and "<!--" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028\u2029 &"}


def test_csp_hashes_match_the_inline_scripts_and_style(site):
    import base64
    import hashlib
    page = (site / "index.html").read_text()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "unsafe-eval" not in csp and "unsafe-inline" not in csp
    def digest(code):
        return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"
    for code in re.findall(r'<script type="module">(.*?)</script>', page, re.S):
        assert digest(code) in csp
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert digest(style) in csp
