#!/usr/bin/env bash
# The main job, offline, on a fresh machine: set everything up, start the local services (Prefect
# server, replay LLM server, the process serving the deployments, Label Studio), run
# `prefect deployment run generate/neiss --watch` on the bundled NEISS sample with the replayed
# (hand-written, not a model's) LLM responses, send the checked tasks to Label Studio, and say
# where everything is. Safe to run again: the run resumes (no new LLM call). Stop everything with
# `.venv/bin/safeforge services stop`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

safeforge services start
eval "$(safeforge services env)"

RUN=${SAFEFORGE_DEMO_RUN:-neiss-demo}
prefect deployment run generate/neiss --watch --param run_name="$RUN"
prefect deployment run review-push/checked --watch --param run_name="$RUN"
echo
safeforge runs show "$RUN"
python - "$RUN" <<'PY'
import re, sys
import httpx
from flows.generate import artifact_key
from pipeline.settings import outputs_dir, prefect_env, prefect_ui_url
from review import ReviewConfig

run = sys.argv[1]
api = prefect_env()["PREFECT_API_URL"]
found = httpx.post(f"{api}/artifacts/filter", json={
    "artifacts": {"key": {"any_": ["review-" + artifact_key(run)]}}}).json()
review = re.search(r"\((http[^)]+)\)", found[0]["data"]).group(1) if found else "(not pushed)"
print(f"""
tasks:          {outputs_dir() / run / 'tasks'}
run summary:    safeforge runs show {run}
Prefect UI:     {prefect_ui_url()}  (flow runs, per-record task runs, the run's artifact)
review project: {review}  (log in as {ReviewConfig.from_env().username}; README, review section)
stop:           .venv/bin/safeforge services stop""")
PY
