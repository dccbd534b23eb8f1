"""A check process: `python -m safeforge.workbench._check_process READ_FD WRITE_FD [--cross-check]`,
started by `safeforge.workbench._checker`, one check at a time (with `--cross-check` it loads
Unified Planning first, so loading it is not counted in a check's time).

It reads a request (a task's texts and metadata) from READ_FD and writes to WRITE_FD what it is
doing (`("stage", words)`) and then `("done", report, answer)`: the check's report (None when the
text cannot be read at all) and the JSON answer the page shows (diagnostics and sections). The
checks run here, not in the server, so the server never waits on one; a check no longer wanted is
ended by ending this process: its planner workers see their input close and kill their solves.
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing.connection import Connection
from pathlib import Path

from safeforge.common.limits import limits_in, use_limits
from safeforge.pddl.errors import PDDLError
from safeforge.task import Task, TaskError
from safeforge.workbench._analysis import analyse, answer, run_check


def serve(requests: Connection, answers: Connection) -> None:
    """Answer requests until the server closes its end."""
    while True:
        try:
            request = requests.recv()
        except EOFError:
            return
        task = Task(Path(request["path"]), request["safety_domain"], request["safety_problem"], request["metadata"])
        answers.send(("stage", "checking: reading the text, its structure, then the planners look for the reference plans"))
        try:
            report = run_check(task, request["time_limit"], request["cross_check"])  # reading included, within the limit
        except (PDDLError, TaskError):
            report = None
        answers.send(("stage", "tracing the plans and the SPOC file"))
        analysis = analyse(task, saved=request["saved"], report=report, with_spoc=True)
        answers.send(("done", report, answer(analysis)))


def main() -> None:
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))  # unwinds: the planner pool closes
    use_limits(limits_in(os.environ))
    if "--cross-check" in sys.argv:
        import safeforge.pddl.up_io  # noqa: F401
    serve(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False))


if __name__ == "__main__":
    main()
