"""Safeforge's library. Import from the module that owns a thing (importing this package stays
cheap: Unified Planning is loaded only by the modules that need it).

- common: shared pieces (errors, package data, lazy re-exports); settings: `Settings`, the environment.
- pddl: reading, checking and transforming PDDL; validation: plans scored and simulated;
  planning: reference plans under hard time limits; task: the task folder and its checks.
- llm: the LLM client, cache, ledger, replay server; runs: a run's folder and record states.
- generation, evaluation, publishing, spoc, despite_import: the pipeline stages (with
  `safeforge.sources`, `.review`, `.flows`, `.prompts`); workbench: the authoring page;
  services: the local Prefect services; cli: `safeforge`.
"""
