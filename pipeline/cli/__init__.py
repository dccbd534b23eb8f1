"""The `safeforge` command line: `main` dispatches to one module per command group.

task, sources, llm, generate, import_despite, evaluate, runs, services, publish, spoc, review.
"""

from safeforge.cli.main import main

__all__ = ["main"]
