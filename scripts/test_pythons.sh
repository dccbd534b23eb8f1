#!/usr/bin/env bash
# The core suites (everything without the Prefect and Label Studio servers) on each other supported
# Python the machine has, each in its own .venv-py3.X. scripts/test.sh runs the whole suite on .venv's
# Python; .ci/run runs both. `--install-only` installs and stops; `--no-install` runs the suites on
# what is installed (scripts/test.sh --with-other-pythons installs first: every install rebuilds the
# checkout's tree of links, build/__editable__.*, which a suite running beside it imports from).
# Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/python.sh
. scripts/python.sh
install=yes run=yes
case "${1:-}" in
  --install-only) run=""; shift ;;
  --no-install) install=""; shift ;;
esac
CORE=(tests/foundation tests/sources tests/llm tests/generation tests/evaluation tests/spoc)
main=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
for version in 3.11 3.12 3.13; do
  [ "$version" = "$main" ] && continue
  if ! python=$(find_python "$version"); then
    echo "test: Python $version is not on this machine; its core suites are skipped"
    continue
  fi
  venv=.venv-py$version
  if [ -n "$install" ]; then
    echo "test: Python $version ($python): installing the pinned set into $venv (log: $venv/setup.log)"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    if ! { "$venv/bin/python" -m pip install --upgrade pip \
           && "$venv/bin/python" -m pip install -c constraints.txt -e ".[dev]" --config-settings editable_mode=strict; } >"$venv/setup.log" 2>&1; then
      tail -n 40 "$venv/setup.log"
      echo "test: Python $version: pip install failed; full log in $venv/setup.log" >&2
      exit 1
    fi
  fi
  if [ -n "$run" ]; then
    echo "test: Python $version: core suites"
    "$venv/bin/python" -m pytest -p no:cacheprovider -m "not timing" "${CORE[@]}" "$@"
  fi
done
