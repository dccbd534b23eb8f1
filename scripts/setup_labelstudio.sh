#!/usr/bin/env bash
# Install the Label Studio server (review/) into its own virtual environment, .venv-labelstudio/
# (its pins conflict with the project's prefect/openai), and prepare migrated templates that servers
# start from in seconds instead of ~1 minute: a SQLite data dir (.venv-labelstudio/template-data/)
# and, where PostgreSQL is installed and .venv exists, a PostgreSQL cluster for team servers
# (.venv-labelstudio/template-postgresql/). Safe to run again: does nothing when all are in place.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.23.2
VENV=${SAFEFORGE_LABELSTUDIO_VENV:-.venv-labelstudio}
TEMPLATE=$VENV/template-data
log=$VENV/setup.log

fail() {
  [ -f "$log" ] && tail -n 40 "$log"
  echo "setup_labelstudio: $1; full log in $log" >&2
  exit 1
}

installed_version() {
  "$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('label-studio'))" 2>/dev/null || true
}

# shellcheck source=scripts/python.sh
. scripts/python.sh
if [ "$(installed_version)" != "$VERSION" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    PY=$(SAFEFORGE_PYTHON=${SAFEFORGE_LABELSTUDIO_PYTHON:-} pick_python 3.11 3.12)  # the versions its pins are tested on
    echo "setup_labelstudio: creating $VENV with $($PY --version)"
    "$PY" -m venv "$VENV"
  fi
  echo "setup_labelstudio: installing label-studio $VERSION into $VENV (a few minutes; log: $log)"
  if ! { "$VENV/bin/python" -m pip install -c review/labelstudio-constraints.txt --upgrade pip setuptools wheel \
         && "$VENV/bin/python" -m pip install -c review/labelstudio-constraints.txt "label-studio==$VERSION"; } \
         >"$log" 2>&1; then
    fail "pip install failed"
  fi
fi

# The template: a data dir whose database is fully migrated, with no user and no secret key
# (each server copy creates its own admin user and key).
if [ "$(cat "$TEMPLATE/.safeforge-template" 2>/dev/null || true)" != "label-studio $VERSION" ]; then
  echo "setup_labelstudio: migrating a template database (about a minute; log: $log)"
  work=$(mktemp -d "$VENV/template-work.XXXXXX")
  if ! env -i PATH="$PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 \
         LABEL_STUDIO_BASE_DATA_DIR="$PWD/$work" LABEL_STUDIO_LATEST_VERSION_CHECK=false \
         LABEL_STUDIO_COLLECT_ANALYTICS=false LABEL_STUDIO_SENTRY_DSN= LABEL_STUDIO_FRONTEND_SENTRY_DSN= \
         "$VENV/bin/label-studio" version --data-dir "$PWD/$work" >>"$log" 2>&1; then
    rm -rf "$work"
    fail "the database migration failed"
  fi
  [ -f "$work/label_studio.sqlite3" ] || { rm -rf "$work"; fail "the migration wrote no database"; }
  rm -f "$work/.env"
  echo "label-studio $VERSION" >"$work/.safeforge-template"
  rm -rf "$TEMPLATE"
  mv "$work" "$TEMPLATE"
fi
# The PostgreSQL template (Safeforge's own code makes it: it starts the server as the right user).
if [ -x .venv/bin/python ] && { ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1; }; then
  if ! SAFEFORGE_LABELSTUDIO_VENV="$VENV" .venv/bin/python -c \
       "from safeforge.review import prepare_postgres_template; prepare_postgres_template()" >>"$log" 2>&1; then
    fail "making the PostgreSQL template failed"
  fi
fi
echo "setup_labelstudio: label-studio $VERSION ready in $VENV (templates: $TEMPLATE, and $VENV/template-postgresql where PostgreSQL is installed)"
