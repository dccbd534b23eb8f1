"""The task folders as one reproducible tar.gz, in the DESPITE layout:
`<task_id>/{domain.pddl, problem.pddl, metadata.json}` plus our `safety_domain.pddl` and
`safety_problem.pddl`. The basic PDDL is derived again from the safety PDDL, never copied.
Entries are sorted, with fixed times and owners, so the same tasks give the same bytes."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from safeforge.publishing._revalidate import ReleasedTask
from safeforge.task.files import BASIC_DOMAIN, BASIC_PROBLEM, METADATA, SAFETY_DOMAIN, SAFETY_PROBLEM

ARCHIVE = "tasks.tar.gz"


def _files(released: ReleasedTask) -> dict[str, str]:
    task = released.task
    return {
        BASIC_DOMAIN: released.basic_domain,
        BASIC_PROBLEM: released.basic_problem,
        METADATA: task.metadata.to_json(),
        SAFETY_DOMAIN: task.safety_domain,
        SAFETY_PROBLEM: task.safety_problem,
    }


def _add(archive: tarfile.TarFile, name: str, data: bytes | None) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    if data is None:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        archive.addfile(info)
    else:
        info.size, info.mode = len(data), 0o644
        archive.addfile(info, io.BytesIO(data))


def write_archive(tasks: list[ReleasedTask], folder: Path) -> Path:
    path = folder / ARCHIVE
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for released in sorted(tasks, key=lambda r: r.accepted.task_id):
            task_id = released.accepted.task_id
            _add(archive, task_id, None)
            for name, text in sorted(_files(released).items()):
                _add(archive, f"{task_id}/{name}", text.encode("utf-8"))
    return path
