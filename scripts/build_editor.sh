#!/usr/bin/env bash
# Rebuild the workbench's editor, pipeline/workbench/static/editor.js (CodeMirror 6 and our PDDL
# mode, pipeline/workbench/editor/src/), and editor.LICENSE.txt beside it, from the npm registry at
# the versions package-lock.json pins. The built files are committed: installing Safeforge and CI
# need no npm; run this only after changing the editor's source or its dependencies.
set -euo pipefail
cd "$(dirname "$0")/../pipeline/workbench/editor"
npm ci --no-audit --no-fund
npm run build
{
  echo "The workbench's editor (editor.js) bundles these packages from the npm registry, under their licences:"
  for package in $(node -e 'const lock = require("./package-lock.json"); for (const [path, info] of Object.entries(lock.packages)) if (path && !info.dev) console.log(path)'); do
    name=${package#node_modules/}
    version=$(node -p "require('./$package/package.json').version")
    echo
    echo "== $name $version =="
    cat "$package"/LICENSE* 2>/dev/null || node -p "'License: ' + require('./$package/package.json').license"
  done
} > ../static/editor.LICENSE.txt
echo "built $(du -k ../static/editor.js | cut -f1) KB: pipeline/workbench/static/editor.js and editor.LICENSE.txt"
