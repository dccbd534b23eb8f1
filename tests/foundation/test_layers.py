"""The layers of the code, as the design draws them: each module imports only its own layer or
layers below it (function-level imports included), packages import each other without cycles,
and the library never imports the test doubles."""

from __future__ import annotations

import ast
from collections import defaultdict

from tests_paths import REPO

# lowest first; a module may import its own layer and the layers before it
LAYERS = [
    ["pipeline.common"],
    ["pipeline.pddl"],
    ["pipeline.validation"],
    ["pipeline.planning"],
    ["pipeline.task"],
    ["pipeline.settings", "pipeline.llm", "pipeline.runs", "prompts"],
    ["sources"],
    ["pipeline.generation", "pipeline.evaluation", "pipeline.publishing", "pipeline.spoc", "pipeline.despite_import", "review"],
    ["flows"],
    ["pipeline.cli", "pipeline.services"],
]
PACKAGES = ("pipeline", "sources", "review", "flows", "prompts")


def unit(module: str) -> str | None:
    """The layer entry a module belongs to (longest matching prefix)."""
    matches = [name for layer in LAYERS for name in layer if module == name or module.startswith(name + ".")]
    return max(matches, key=len) if matches else None


def layer_of(name: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


def imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, file:line) for every import of our packages."""
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets = []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level:
                    base = module.split(".")[: len(module.split(".")) - node.level + (parts[-1] == "__init__")]
                    targets = [".".join(base + ([node.module] if node.module else []))]
                elif isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                for target in targets:
                    if target.split(".")[0] in (*PACKAGES, "tests"):
                        found.append((module, target, f"{path.relative_to(REPO)}:{node.lineno}"))
    return found


def test_every_module_belongs_to_a_layer():
    missing = {m for m, _, _ in imports() if unit(m) is None}
    assert not missing


def test_imports_go_down_the_layers_only():
    wrong = []
    for module, target, where in imports():
        source, dest = unit(module), unit(target)
        if dest is not None and layer_of(dest) > layer_of(source):
            wrong.append(f"{where}: {module} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_packages_import_each_other_without_cycles():
    graph = defaultdict(set)
    for module, target, _ in imports():
        source, dest = unit(module), unit(target)
        if dest is not None and source != dest:
            graph[source].add(dest)

    def cycle_from(start, node, seen):
        for nxt in graph[node]:
            if nxt == start:
                return [node, nxt]
            if nxt not in seen:
                seen.add(nxt)
                rest = cycle_from(start, nxt, seen)
                if rest:
                    return [node, *rest]
        return None

    cycles = [c for start in list(graph) if (c := cycle_from(start, start, set()))]
    assert not cycles, cycles


def test_the_library_never_imports_the_test_doubles():
    assert not [where for _, target, where in imports() if target.split(".")[0] == "tests"]


def test_every_lazily_exported_name_resolves():
    """A package's public names are its `if TYPE_CHECKING:` imports; each must load at run time."""
    import importlib

    for init in sorted([*REPO.glob("pipeline/*/__init__.py"), REPO / "sources" / "__init__.py", REPO / "review" / "__init__.py"]):
        if "lazy_exports(__name__)" not in init.read_text(encoding="utf-8"):
            continue
        package = importlib.import_module(".".join(init.relative_to(REPO).parent.parts))
        names = dir(package)
        assert names, init
        for name in names:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
