#!/usr/bin/env bash
# Set everything up, check lint, formatting, types and the docs, then run the whole test suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "test: ruff (lint and format), mypy, docs (mkdocs --strict)"
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
.venv/bin/mypy
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
exec .venv/bin/python -m pytest --durations=25 "$@"  # the slowest, to keep the suite within its budget
