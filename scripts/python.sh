# Sourced by the setup scripts. `pick_python V...` prints the interpreter to use: SAFEFORGE_PYTHON
# when set (it must be one of the versions V), else the first of python3.V... on PATH, else
# python3 when it is one of them. A clear message names the supported versions otherwise.
pick_python() {
  local candidate version
  if [ -n "${SAFEFORGE_PYTHON:-}" ]; then
    if ! command -v "$SAFEFORGE_PYTHON" >/dev/null 2>&1; then
      echo "setup: SAFEFORGE_PYTHON=$SAFEFORGE_PYTHON is not an interpreter on PATH" >&2
      return 1
    fi
    version=$("$SAFEFORGE_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    case " $* " in *" $version "*) echo "$SAFEFORGE_PYTHON"; return 0 ;; esac
    echo "setup: SAFEFORGE_PYTHON=$SAFEFORGE_PYTHON is Python $version; supported: $*" >&2
    return 1
  fi
  for version in "$@"; do
    candidate="python$version"
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'pass' >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  if command -v python3 >/dev/null 2>&1; then
    version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    case " $* " in *" $version "*) echo python3; return 0 ;; esac
  fi
  echo "setup: no supported Python found; Safeforge needs Python $(echo "$*" | sed 's/ /, /g')." >&2
  echo "setup: install one (e.g. apt-get install python3.11-venv) or set SAFEFORGE_PYTHON to its path" >&2
  return 1
}
