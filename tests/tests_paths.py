"""Paths to the repository's data, importable from test modules (the one place tests name them)."""

from pathlib import Path

from safeforge.sources.paths import sample_path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"
SPOC_EXAMPLES = REPO / "examples" / "spoc"  # one task per SPOC template
SAMPLES = sample_path()
TEMPLATE = REPO / "pipeline" / "templates" / "new_task"
SPOC_FIXTURES = REPO / "tests" / "fixtures" / "spoc"  # ALFRED-style tasks that export to SPOC
SPOC_DATASET = REPO / "tests" / "fixtures" / "spoc_dataset" / "dataset"  # SPOC's own 25 files (Apache-2.0)
