"""The package's build step: Vega's npm packages and esbuild installed beside generator/node/'s scripts."""
from __future__ import annotations

import sys
from pathlib import Path

from setuptools.command.build_py import build_py as _build_py

ROOT = Path(__file__).resolve().parent.parent


class build_py(_build_py):
    """setuptools' build_py, then `npm ci` of generator/node/'s lockfile beside its scripts: in the source tree for an
    editable install, in the wheel otherwise. After `pip install` a build then needs no network, and a page is the
    same on every machine; an install that cannot reach npm fails, saying why."""

    def run(self) -> None:
        super().run()
        if str(ROOT) not in sys.path:  # the build backend loads this file alone, not its package
            sys.path.insert(0, str(ROOT))
        from generator.page import runtime
        target = runtime.NODE_SOURCES if self.editable_mode else Path(self.build_lib) / "generator" / "node"
        try:
            runtime.install_packaged(target)
        except runtime.Unavailable as error:
            raise SystemExit(f"plate: the page's Vega runtime is made from npm packages that `pip install` puts "
                             f"beside the engine, and {error}") from None
