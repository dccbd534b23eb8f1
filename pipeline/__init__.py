"""Safeforge's library. Import from the module that owns a thing (importing this package stays
cheap: Unified Planning is loaded only by the modules that need it).

- task: the task folder (`Task`, `TaskError`); task_check: `check_task`; danger: structural checks;
  transforms: basic / safe / unsafe problems; planning: reference plans under hard time limits;
  validator: scores and safety intention (`Validator`, `Verdict`); plan_text: reading plans from text;
  simulator: the fast executor; pddl / sexpr: reading and writing PDDL.
- run_ledger: a run's folder and record states; llm: the LLM client, cache, ledger, replay server;
  generation, evaluation, publishing, spoc, despite_import: the pipeline stages; cli: `safeforge`.
"""
