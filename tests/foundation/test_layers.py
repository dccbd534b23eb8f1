"""The layers of the code, as the design draws them: each module imports only its own layer or
layers below it (function-level imports included), packages import each other without cycles and
only through their public faces, the library never imports the test doubles, and the wheel installs
one name, `safeforge`, holding every package folder."""

from __future__ import annotations

import ast
import importlib
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest
from tests_paths import REPO

# the repository's folders and the names they are installed under
FOLDERS = {
    "pipeline": "safeforge",
    "sources": "safeforge.sources",
    "review": "safeforge.review",
    "flows": "safeforge.flows",
    "prompts": "safeforge.prompts",
}

# lowest first; a module may import its own layer and the layers before it
LAYERS = [
    ["safeforge.common"],
    ["safeforge.pddl", "safeforge.lexicon"],
    ["safeforge.validation"],
    ["safeforge.planning"],
    ["safeforge.task"],
    ["safeforge.settings", "safeforge.llm", "safeforge.runs", "safeforge.prompts"],
    ["safeforge.sources"],
    [
        "safeforge.generation",
        "safeforge.evaluation",
        "safeforge.publishing",
        "safeforge.spoc",
        "safeforge.despite_import",
        "safeforge.review",
    ],
    ["safeforge.flows"],
    ["safeforge.cli", "safeforge.services", "safeforge.workbench"],
]
OLD_NAMES = ("pipeline", "sources", "review", "flows", "prompts")  # the folders, never imported by these names


def module_name(path: Path) -> str:
    folder, *rest = path.relative_to(REPO).with_suffix("").parts
    if rest and rest[-1] == "__init__":
        rest = rest[:-1]
    return ".".join([FOLDERS[folder], *rest])


def unit(module: str) -> str | None:
    """The layer entry a module belongs to (longest matching prefix)."""
    matches = [name for layer in LAYERS for name in layer if module == name or module.startswith(name + ".")]
    return max(matches, key=len) if matches else None


def layer_of(name: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


def library_files() -> list[Path]:
    return [path for folder in FOLDERS for path in sorted((REPO / folder).rglob("*.py")) if "standin" not in path.parts]


def imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, file:line) for every import of our packages and the tests."""
    found = []
    for path in library_files():
        module = module_name(path)
        is_init = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level:
                parts = module.split(".")
                base = parts[: len(parts) - node.level + is_init]
                targets = [".".join(base + ([node.module] if node.module else []))]
                targets += [f"{targets[0]}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target.split(".")[0] in ("safeforge", "tests", *OLD_NAMES):
                    found.append((module, target, f"{path.relative_to(REPO)}:{node.lineno}"))
    return found


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each node's way back to itself in a graph of imports ("a -> b -> a"), if it has one."""

    def way_back(start, node, seen):
        for nxt in graph[node]:
            if nxt == start:
                return [node, nxt]
            if nxt not in seen:
                seen.add(nxt)
                rest = way_back(start, nxt, seen)
                if rest:
                    return [node, *rest]
        return None

    return [" -> ".join(c) for start in sorted(graph) if (c := way_back(start, start, set()))]


def test_every_module_belongs_to_a_layer():
    missing = {m for m, _, _ in imports() if unit(m) is None}
    assert not missing


def test_nothing_imports_the_folder_names():
    """The folders are installed as `safeforge...`; an import of `pipeline` or `sources` would find
    another distribution of that name (or nothing) once installed."""
    assert not [f"{where}: {target}" for _, target, where in imports() if target.split(".")[0] in OLD_NAMES]


def test_imports_go_down_the_layers_only():
    wrong = []
    for module, target, where in imports():
        source, dest = unit(module), unit(target)
        if dest is not None and layer_of(dest) > layer_of(source):
            wrong.append(f"{where}: {module} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_packages_use_each_others_public_faces_only():
    """A package's `_`-modules are its own: others import what its `__init__` exports."""
    wrong = []
    for module, target, where in imports():
        source, dest = unit(module), unit(target)
        if dest is None or source == dest:
            continue
        inside = target.removeprefix(dest).lstrip(".").split(".")
        if any(part.startswith("_") and not part.startswith("__") for part in inside[:-1] or inside):
            wrong.append(f"{where}: {module} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_packages_import_each_other_without_cycles():
    graph = defaultdict(set)
    for module, target, _ in imports():
        source, dest = unit(module), unit(target)
        if dest is not None and source != dest:
            graph[source].add(dest)

    assert not cycles(graph)


def test_the_library_never_imports_the_test_doubles():
    assert not [where for _, target, where in imports() if target.split(".")[0] == "tests"]


def test_the_wheel_lists_every_package_folder():
    """pyproject.toml names each package (the folders are mapped, not discovered): a folder left out
    would be missing from the wheel."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["package-dir"] == {name: folder for folder, name in FOLDERS.items()}
    folders = {module_name(init) for folder in FOLDERS for init in (REPO / folder).rglob("__init__.py")}
    assert set(config["packages"]) == folders


def test_every_package_declares_its_public_names():
    """A package's `__all__` names exactly its lazy exports (its `if TYPE_CHECKING:` imports), and
    each name in it loads at run time."""
    for init in [path for path in library_files() if path.name == "__init__.py"]:
        package = importlib.import_module(module_name(init))
        public = getattr(package, "__all__", [])
        if "lazy_exports(__name__)" in init.read_text(encoding="utf-8"):
            assert public, init
            assert sorted(public) == dir(package), init
        for name in public:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"


def test_lazy_exports_refuses_an_all_that_differs(tmp_path, monkeypatch):
    (tmp_path / "lazy_package").mkdir()
    (tmp_path / "lazy_package" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from safeforge.common.lazy import lazy_exports\n"
        "if TYPE_CHECKING:\n"
        "    from .things import Thing, other\n"
        "__all__ = ['Thing', 'extra']\n"
        "__getattr__, __dir__ = lazy_exports(__name__)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"lazy_package: .*only in __all__: \['extra'\], only imported: \['other'\]"):
        importlib.import_module("lazy_package")


def test_modules_import_each_other_without_cycles():
    """Within a package too, one module depends on another one way (a package's `__init__`, which
    gathers its modules' names, aside)."""
    modules = {module_name(path) for path in library_files() if path.name != "__init__.py"}
    graph = defaultdict(set)
    for module, target, _ in imports():
        imported = max((m for m in modules if target == m or target.startswith(m + ".")), key=len, default=None)
        if module in modules and imported is not None and imported != module:
            graph[module].add(imported)

    assert not cycles(graph)
