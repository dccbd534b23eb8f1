#!/usr/bin/env bash
# Set up Safeforge on a fresh machine: Java 17 for ENHSP, Chromium for the review interface's
# layout test and screenshot, PostgreSQL for a team's review server and WordNet for the generation
# rules (each if missing), and the
# project in .venv with the tested, pinned dependency set (constraints.txt). Safe to run again.
# The project is installed in setuptools' strict editable mode: `safeforge` is a tree of links to the
# repository's files (build/__editable__.*), which editors, pyright and mypy read like any installed
# package; a module added since needs this script run again (the test run says so).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {  # apt_install PACKAGE: with sudo when not root
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1"
}
if ! command -v java >/dev/null 2>&1; then
  echo "setup: java not found; installing OpenJDK 17 (ENHSP needs it)"
  apt_install openjdk-17-jre-headless
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: chromium not found; installing it (tests/review/test_review_layout.py and scripts/screenshot_review.py drive it headless)"
    apt_install chromium
  else
    echo "setup: chromium not found and no apt-get to install it with; the review layout test will be skipped"
  fi
fi

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && ! command -v postgres >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: PostgreSQL not found; installing it (a team's Label Studio runs on it: review server start --database postgresql)"
    apt_install postgresql
  else
    echo "setup: PostgreSQL not found and no apt-get to install it with; review servers will use SQLite only"
  fi
fi

if [ -z "${SAFEFORGE_WORDNET:-}" ] && [ ! -f /usr/share/wordnet/index.noun ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: WordNet not found; installing Debian's wordnet-base (the generation rules read meaning with it)"
    apt_install wordnet-base
  else
    echo "setup: WordNet not found and no apt-get to install it with: set SAFEFORGE_WORDNET to a folder of WordNet 3.0 database files" >&2
  fi
fi

# shellcheck source=scripts/python.sh
. scripts/python.sh
if [ ! -x .venv/bin/python ]; then
  PY=$(pick_python 3.11 3.12 3.13)
  echo "setup: creating .venv with $($PY --version) ($(command -v "$PY")); supported: Python 3.11, 3.12, 3.13"
  "$PY" -m venv .venv
else
  echo "setup: using .venv ($(.venv/bin/python --version))"
fi
log=.venv/setup.log
echo "setup: installing Safeforge and its pinned dependencies into .venv (log: $log)"
if ! { .venv/bin/python -m pip install --upgrade pip \
       && .venv/bin/python -m pip install -c constraints.txt -e ".[dev,docs]" --config-settings editable_mode=strict; } >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "setup: pip install failed; full log in $log" >&2
  exit 1
fi
# Bytecode for every module now (an editable install leaves it to the first run): a command's first
# start is then as fast as its next (docs/benchmarks.md, "Command line").
.venv/bin/python -c "import compileall, pathlib, safeforge; compileall.compile_dir(pathlib.Path(safeforge.__file__).parent, quiet=1)" >>"$log"
bash scripts/setup_labelstudio.sh  # the Label Studio server for review, in its own .venv-labelstudio
echo "setup: done. Activate with: source .venv/bin/activate"
