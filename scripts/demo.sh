#!/usr/bin/env bash
# The main job, offline, on a fresh machine: set everything up, start the local services (Prefect
# server, replay LLM server, the process serving the deployments, Label Studio), run
# `prefect deployment run generate/neiss --watch` on the bundled NEISS sample with the replayed
# (hand-written, not a model's) LLM responses, then on two household records of the sample's
# other file (a knife, a cabinet door: their tasks are generated for an AI2-THOR kitchen and the
# run ends with their SPOC files), send the checked tasks to Label Studio, and say where
# everything is. Safe to run again: the run resumes (no new LLM call). Stop everything with
# `.venv/bin/safeforge services stop`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

# the flow runs each record as a Prefect task run (to be seen in the UI) unless told otherwise
SAFEFORGE_EXECUTOR=${SAFEFORGE_EXECUTOR:-prefect} safeforge services start
eval "$(safeforge services env)"

RUN=${SAFEFORGE_DEMO_RUN:-neiss-demo}
prefect deployment run generate/neiss --watch --param run_name="$RUN"
prefect deployment run generate/neiss --watch --param run_name="$RUN" \
  --param path="$PWD/sources/samples/neiss/neiss_2014_2023_code_replaced_100_samples.csv" \
  --param filters='{"products": [464, 4056]}'
prefect deployment run review-push/checked --watch --param run_name="$RUN"
echo
safeforge runs show "$RUN"
echo
safeforge services where "$RUN"
