"""The one writer of task folders: every producer (generation, DESPITE import, eval-noise, `task new`,
`task check`, review, the workbench's edits) writes through these functions.

A new folder is assembled in a staging folder beside its target and renamed into place, so a
reader never sees half a task; a file of an existing folder is replaced atomically and keeps its
permissions.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from safeforge.common.files import umask, write_atomically, write_staged
from safeforge.task.files import BASIC_DOMAIN, BASIC_PROBLEM, METADATA, SAFETY_DOMAIN, SAFETY_PROBLEM
from safeforge.task.metadata import TaskMetadata

TASK_FILES = (SAFETY_DOMAIN, SAFETY_PROBLEM, BASIC_DOMAIN, BASIC_PROBLEM, METADATA)


def write_metadata(folder: Path, metadata: TaskMetadata) -> None:
    """(Re)write a task folder's metadata.json (left as it is when it holds that already)."""
    _replace(Path(folder) / METADATA, metadata.to_json())


def write_basic_pddl(folder: Path, basic: tuple[str, str]) -> None:
    """(Re)write the derived domain.pddl and problem.pddl (each left as it is when unchanged)."""
    _replace(Path(folder) / BASIC_DOMAIN, basic[0])
    _replace(Path(folder) / BASIC_PROBLEM, basic[1])


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` unless the file holds it already: an unchanged file is not touched."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    write_atomically(path, text)


def complete_staged(folder: Path, metadata: TaskMetadata, basic: tuple[str, str]) -> None:
    """Add the derived basic PDDL and the final metadata.json to a folder that no reader sees yet
    (a generation candidate before `install`), in place: no temporary files."""
    write_staged(Path(folder) / BASIC_DOMAIN, basic[0])
    write_staged(Path(folder) / BASIC_PROBLEM, basic[1])
    write_staged(Path(folder) / METADATA, metadata.to_json())


def write_task(
    folder: Path,
    safety_domain: str,
    safety_problem: str,
    metadata: TaskMetadata,
    basic: tuple[str, str] | None = None,
    *,
    replace: bool = False,
) -> Path:
    """A new task folder, assembled beside `folder` and renamed into place in one step.
    FileExistsError when `folder` exists, unless `replace`."""
    folder = Path(folder)
    if folder.exists() and not replace:
        raise FileExistsError(f"{folder} already exists")
    return _assemble(folder, _task_files(safety_domain, safety_problem, metadata, basic), keep_from=None)


def rewrite_task(folder: Path, safety_domain: str, safety_problem: str, metadata: TaskMetadata, basic: tuple[str, str] | None) -> Path:
    """An edit of an existing task folder in one step: its safety PDDL, metadata and derived PDDL
    (left out when `basic` is None) replaced, its other regular files kept, the whole folder
    assembled beside it and renamed into place."""
    return _assemble(Path(folder), _task_files(safety_domain, safety_problem, metadata, basic), keep_from=Path(folder))


def _task_files(safety_domain: str, safety_problem: str, metadata: TaskMetadata, basic: tuple[str, str] | None) -> dict[str, str]:
    files = {SAFETY_DOMAIN: _with_final_newline(safety_domain), SAFETY_PROBLEM: _with_final_newline(safety_problem)}
    if basic is not None:
        files |= {BASIC_DOMAIN: basic[0], BASIC_PROBLEM: basic[1]}
    files[METADATA] = metadata.to_json()
    return files


def _assemble(folder: Path, files: dict[str, str], keep_from: Path | None) -> Path:
    """Write `files` (and the other regular files of `keep_from`) into a staging folder beside
    `folder`, then install it there."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.staging-"))
    try:
        os.chmod(staging, 0o755 & ~umask())
        if keep_from is not None:
            for kept in keep_from.iterdir():
                if kept.name not in TASK_FILES and kept.is_file() and not kept.is_symlink():
                    shutil.copy2(kept, staging / kept.name)
        for name, text in files.items():
            write_staged(staging / name, text)
        install(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def _with_final_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def install(staged: Path, target: Path) -> None:
    """Move a finished folder into place with renames (same file system), replacing an old one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.parent / f".replaced-{target.name}"
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        os.rename(target, old)
    os.rename(staged, target)
    shutil.rmtree(old, ignore_errors=True)
