#!/usr/bin/env bash
# mypy over the installed name: build/typecheck/safeforge is a tree of links to pipeline/'s entries
# and to sources/, review/, flows/ and prompts/ (how the wheel nests them), made afresh each run.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=build/typecheck/safeforge
rm -rf build/typecheck && mkdir -p "$tree"
for entry in pipeline/*; do ln -s "$PWD/$entry" "$tree/$(basename "$entry")"; done
for folder in sources review flows prompts; do ln -s "$PWD/$folder" "$tree/$folder"; done
exec .venv/bin/mypy "$@"
