#!/usr/bin/env bash
# Set everything up, check lint, formatting, types and the docs, then run the whole test suite: the
# tests of behaviour first, then the timing tests (promises that are a time, each measured against
# a baseline of the same run) as a step of their own, where a failure is rerun once and named.
# With --with-other-pythons (what .ci/run does), scripts/test_pythons.sh runs the core suites on the
# other supported Pythons beside the tests of behaviour, and before the timing tests. Other
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
others=""
if [ "${1:-}" = "--with-other-pythons" ]; then
  others=yes
  shift
fi
bash scripts/setup.sh
echo "test: ruff (lint and format), mypy, docs (mkdocs --strict)"
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
.venv/bin/mypy
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"

run_pytest() {  # run_pytest ARGS...: pytest, where "no test selected" (exit 5) is no failure
  local status=0
  .venv/bin/python -m pytest "$@" || status=$?
  [ "$status" -eq 5 ] && { echo "test: no test selected"; status=0; }
  return "$status"
}
if [ -n "$others" ]; then
  bash scripts/test_pythons.sh --install-only  # before the suite: an install rebuilds the tree of links it imports from
  log=.venv/other-pythons.log
  echo "test: the core suites on the other Pythons, beside the suite (log: $log)"
  bash scripts/test_pythons.sh --no-install "$@" >"$log" 2>&1 &
  others=$!
fi
echo "test: the suite, timing tests apart"
status=0
run_pytest -m "not timing" --durations=25 "$@" || status=$?  # the slowest, to keep the suite within its budget
if [ -n "$others" ]; then
  other_status=0
  wait "$others" || other_status=$?
  echo "test: the other Pythons' core suites (exit $other_status):"
  cat "$log"
  [ "$other_status" -ne 0 ] && status=$other_status
fi
[ "$status" -ne 0 ] && exit "$status"
echo "test: the timing tests (a failure is rerun once; -rR names each rerun)"
run_pytest -m timing --reruns 1 -rR "$@"
