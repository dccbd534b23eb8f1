# Sourced by the setup and test scripts.
#   find_python V   prints an interpreter of Python V that runs: python3.V on PATH, else one
#                   installed by pyenv ($PYENV_ROOT/versions/V.*), else nothing (status 1).
#   pick_python V...  prints the interpreter to use: SAFEFORGE_PYTHON when set (it must be one of
#                   the versions V), else the first version found; a clear message otherwise.
find_python() {
  local candidate
  for candidate in "python$1" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/"python$1"; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'pass' >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

pick_python() {
  local version
  if [ -n "${SAFEFORGE_PYTHON:-}" ]; then
    version=$("$SAFEFORGE_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || {
      echo "setup: SAFEFORGE_PYTHON=$SAFEFORGE_PYTHON does not run" >&2
      return 1
    }
    case " $* " in *" $version "*) echo "$SAFEFORGE_PYTHON"; return 0 ;; esac
    echo "setup: SAFEFORGE_PYTHON=$SAFEFORGE_PYTHON is Python $version; supported: $*" >&2
    return 1
  fi
  for version in "$@"; do
    find_python "$version" && return 0
  done
  echo "setup: no supported Python found; Safeforge needs Python $(echo "$*" | sed 's/ /, /g')." >&2
  echo "setup: install one (e.g. apt-get install python3.11-venv) or set SAFEFORGE_PYTHON to its path" >&2
  return 1
}
