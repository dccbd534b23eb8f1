"""Lazy re-exports for package `__init__` modules (PEP 562).

A package names its public objects and the modules that own them; a name's module is imported on
first access, so importing a package (or one light module inside it) never drags in the heavy
modules next to it (Unified Planning, pandas, the Label Studio SDK, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for `package`, exporting each name from its owning module
    (a module path relative to `package`, e.g. ``{"Task": ".folder"}``)."""

    def __getattr__(name: str) -> object:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(module, package), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
