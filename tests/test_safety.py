"""Safe prose: HTML and script written anywhere in the content never reach the page as live script or handlers."""
from __future__ import annotations

import re
import shutil

import pytest

from generator.source import prose
from generator.site import build

from conftest import FIXTURE

# Each payload sets window.__pwned if it ever runs; none may.
PROSE_ATTACKS = """
<script>window.__pwned = "script"</script>
<img src=x onerror="window.__pwned='img'">
<svg><svg onload="window.__pwned='svg'"></svg></svg>
<a href="javascript:window.__pwned='href'" id="js-link">a link</a> and [a Markdown link](javascript:window.__pwned='md').
<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>
<p onclick="window.__pwned='click'" id="clicky">a paragraph</p>
<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned='mxss'"></style></mglyph></table></mtext></math>
<details open ontoggle="window.__pwned='toggle'">details</details>
<object data="data:text/html,<script>parent.__pwned='object'</script>"></object>
<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example/">
`</script><script>window.__pwned='code'</script>` and {{ "<script>window.__pwned='slot'</script>" }}
<!-- </p><script>window.__pwned='comment'</script> -->
<style>body { display: none }</style>
"""
PAYLOAD = "</script><script>window.__pwned='field'</script><img src=x onerror=\"window.__pwned='field-img'\">"


def hostile_content(tmp_path):
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)

    def edit(name, old, new):
        text = (root / name).read_text()
        assert old in text, f"the fixture no longer contains {old!r}"
        (root / name).write_text(text.replace(old, new, 1))

    toml = PAYLOAD.replace("\\", "\\\\").replace('"', '\\"')
    edit("plate.md", "Workers split the job.", "Workers split the job.\n" + PROSE_ATTACKS)
    edit("plate.md", 'title = "A Small Plate"', f'title = "A Small Plate {toml}"')
    edit("plate.md", 'deck = "', f'deck = "{toml} ')
    edit("plate.md", 'keywords = ["fixture"]', f'keywords = ["fixture", "{toml}"]')
    edit("plate.md", 'takeaway = "', f'takeaway = "{toml} ')
    edit("presets.toml", 'name = "Fast link"', f'name = "Fast link {toml}\\u2028\\u2029"')
    edit("presets.toml", 'name = "Slow link"', f'name = "Slow link <!-- {toml}"')
    edit("terms.toml", 'definition = "One of the machines sharing the job."', f'definition = "One. {toml}"')
    edit("sources.toml", 'title = "A Paper"', f'title = "A Paper {toml}"\nnote = "{toml}"')
    edit("sources.toml", 'authors = "Someone"', f'authors = "Someone {toml}"')
    return root


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    out = tmp / "site"
    build.build(hostile_content(tmp), out)
    return out


def without_csp(site, tmp_path):
    """A copy of the page with its Content-Security-Policy removed, so only the sanitising protects it."""
    bare = tmp_path / "bare"
    shutil.copytree(site, bare)
    page = (bare / "index.html").read_text()
    page, found = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    assert found == 1
    (bare / "index.html").write_text(page)
    return bare


def test_hostile_content_builds_and_its_html_carries_no_script(hostile_site, mini_site):
    page = (hostile_site / "index.html").read_text()
    clean = (mini_site / "index.html").read_text()
    assert page.count("<script") == clean.count("<script")
    outside_scripts = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    assert not re.search(r"<(img|iframe|object|embed|base|math)\b", outside_scripts)
    values_blanked = re.sub(r'="[^"]*"', '=""', outside_scripts)  # escaped payloads inside values are text
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", values_blanked, re.I)
    assert not [h for h in re.findall(r'\b(?:href|src|action|data)="([^"]*)"', outside_scripts)
                if h.lower().startswith(("javascript:", "data:"))]
    assert "&lt;script&gt;window.__pwned" in outside_scripts  # what authors typed in fields shows as text


def test_script_json_escapes_what_could_end_its_element(hostile_site):
    page = (hostile_site / "index.html").read_text()
    for block in re.findall(r"<script\b[^>]*>(.*?)</script>", page, flags=re.S):
        assert "<!--" not in block and "\u2028" not in block and "\u2029" not in block
    assert r"\u003c/script\u003e" in page  # the preset name, kept as data


@pytest.mark.browser
@pytest.mark.parametrize("policy", ["with-csp", "without-csp"])
def test_no_injected_script_runs_in_chromium(policy, hostile_site, mini_site, open_page, tmp_path):
    site = hostile_site if policy == "with-csp" else without_csp(hostile_site, tmp_path)
    watched = open_page(site)
    page = watched.page
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    settle = "() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"  # a frame and a task
    page.wait_for_load_state("load")
    page.evaluate(settle)
    for selector in ("#js-link", "#clicky", "a[href^='#term-']"):
        if page.locator(selector).count():
            page.locator(selector).first.click()
    page.evaluate(settle)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert not dialogs
    found = page.evaluate("""() => {
        const handlers = [];
        for (const el of document.querySelectorAll('*'))
            for (const a of el.attributes)
                if (/^on/i.test(a.name) || /^\\s*(javascript|data):/i.test(a.value) && /^(href|src|action|data|srcdoc)$/i.test(a.name))
                    handlers.push(el.tagName + ' ' + a.name + '=' + a.value);
        return {handlers, scripts: document.scripts.length,
                frames: document.querySelectorAll('iframe, object, embed, base, meta[http-equiv=refresh]').length,
                visible: getComputedStyle(document.body).display};
    }""")
    assert found["handlers"] == []
    assert found["frames"] == 0 and found["visible"] != "none"
    clean = open_page(mini_site).page.evaluate("document.scripts.length")
    assert found["scripts"] == clean
    # The payload typed into fields shows as text, not markup.
    assert "<script>window.__pwned='field'</script>" in page.locator("h1").inner_text()
    assert not [m for t, m in watched.console if t == "pageerror"]


def test_raw_html_is_sanitised_by_the_allow_list():
    out = prose.markdown_to_html(PROSE_ATTACKS)
    for bad in ("<script", "<img", "<iframe", "<svg", "<object", "<math", "<style", "<base", "<meta",
                "onerror", "onload", "onclick", "ontoggle", "javascript:", "srcdoc"):
        assert bad not in out, bad
    assert "a paragraph" in out and "a link" in out
