"""Whether a strict editable install (scripts/setup.sh) still mirrors the checkout: its tree of links
is made at install time, so a module added since is missing from it and one removed leaves a dead link."""

from __future__ import annotations

import tomllib
from pathlib import Path


def folders_in_tree(pyproject: Path) -> dict[str, str]:
    """Each repository folder and where the install nests it ("pipeline": "", "sources": "sources")."""
    mapping = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    return {folder: name.removeprefix("safeforge").lstrip(".").replace(".", "/") for name, folder in mapping.items()}


def stale_entries(repo: Path, tree: Path, folders: dict[str, str]) -> list[str]:
    """Modules of the checkout the tree does not link, and links of the tree whose file is gone."""
    unlinked = [
        str(path.relative_to(repo))
        for folder, nested in folders.items()
        for path in sorted((repo / folder).rglob("*.py"))
        if "__pycache__" not in path.parts and not (tree / nested / path.relative_to(repo / folder)).exists()
    ]
    dead = [f"{link.relative_to(tree)} (removed)" for link in sorted(tree.rglob("*")) if link.is_symlink() and not link.exists()]
    return unlinked + dead
