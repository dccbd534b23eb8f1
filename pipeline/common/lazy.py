"""Lazy re-exports for package `__init__` modules (PEP 562).

A package lists its public names twice, checked to agree: as the imports of an `if TYPE_CHECKING:`
block (what type checkers and readers see) and in `__all__` (what makes them public to type
checkers). `lazy_exports(__name__)` reads that block and imports a name's module on first access,
so importing a package (or one light module inside it) never drags in the heavy modules next to it
(Unified Planning, pandas, the Label Studio SDK, ...).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path


def lazy_exports(package: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for `package`, exporting every name its `if TYPE_CHECKING:` block
    imports from a module of the package (e.g. `from .folder import Task`). Call it after `__all__`,
    which must name exactly those names (ImportError otherwise)."""
    namespace = vars(sys.modules[package])
    exports = _type_checking_imports(Path(namespace["__file__"]))
    declared = set(namespace.get("__all__", ()))
    if declared != exports.keys():
        raise ImportError(
            f"{package}: __all__ and the TYPE_CHECKING imports differ: only in __all__: {sorted(declared - exports.keys())}, "
            f"only imported: {sorted(exports.keys() - declared)}",
            name=package,
        )

    def __getattr__(name: str) -> object:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(module, package), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__


def _type_checking_imports(init: Path) -> dict[str, str]:
    """name -> relative module, from the `from .module import name` lines under `if TYPE_CHECKING:`."""
    exports: dict[str, str] = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.level == 1 and statement.module:
                    exports.update({alias.name: f".{statement.module}" for alias in statement.names})
    return exports
