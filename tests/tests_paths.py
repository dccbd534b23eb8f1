"""Paths to the bundled data, importable from test modules."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"
SHARED_SOURCES = REPO.parent / "shared" / "sources"
TEMPLATE = REPO / "pipeline" / "templates" / "new_task"
