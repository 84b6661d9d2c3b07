"""The Vega runtime for the page, bundled by vl-convert from its vendored copies and cached outside git."""
from __future__ import annotations

import hashlib

import vl_convert as vlc

VEGA_VERSION = "6.2.0"
INTERPRETER_VERSION = "2.0.0"

# vl-convert resolves these specifiers to its own vendored modules: nothing is fetched at build time,
# and the page makes no request. Named imports, because the bundle's default export of vega is null
# (a namespace import works too, but must not be called `vega`: swc_bundler panics, and it is 2 KB
# gzip larger); only what the page uses: View and parse. Vega's transforms are still registered.
SNIPPET = f"""import {{View, parse}} from "https://cdn.jsdelivr.net/npm/vega@{VEGA_VERSION}/+esm";
import {{expressionInterpreter}} from "https://cdn.jsdelivr.net/npm/vega-interpreter@{INTERPRETER_VERSION}/+esm";
window.vega = {{View, parse}};
window.vegaExpressionInterpreter = expressionInterpreter;
"""


def cache_name() -> str:
    """The runtime's file name in the build cache; changes with vl-convert's version or the snippet."""
    digest = hashlib.sha256(f"{vlc.__version__}\n{SNIPPET}".encode()).hexdigest()[:16]
    return f"vega-runtime-{digest}.js"


def bundle() -> str:
    """Bundle the runtime's JavaScript now (about a second; build.py caches the result)."""
    return vlc.javascript_bundle(SNIPPET)
