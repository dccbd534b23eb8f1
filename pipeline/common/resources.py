"""Files that ship inside the installed packages (prompts, templates, samples, replayed responses).

Everything the code reads at run time is package data, found through `importlib.resources`, so an
installed Safeforge works from any folder and needs nothing beside it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def package_path(package: str, *parts: str) -> Path:
    """The real path of a file or folder shipped inside `package` (installed as plain files)."""
    found = resources.files(package).joinpath(*parts)
    path = Path(str(found))
    if not isinstance(found, Path) and not path.exists():
        raise FileNotFoundError(f"{package}/{'/'.join(parts)} is not installed as a plain file")
    return path
