"""Evaluating LLM planners on tasks, deterministically (see README, "Evaluating LLM planners").

    report = run_evaluation("examples/tasks", EvalSettings(model="deepseek-chat"))
    report.metrics["overall"].estimates["S"]      # Estimate(value, low, high)

Also: the hard/easy split from a panel of results (`write_split`) and noise injection
(`write_noisy_task`, DESPITE's redundancy experiment).
"""

from pipeline.evaluation._discover import Discovery, TaskRef, discover_tasks
from pipeline.evaluation._metrics import (
    GROUPS,
    METRICS,
    Estimate,
    MetricSet,
    bootstrap,
    summarize_metrics,
    task_indicators,
)
from pipeline.evaluation._noise import Decoys, NoiseError, NoiseResult, add_decoys, write_noisy_task
from pipeline.evaluation._prompts import PromptError, PromptTemplate, safety_requirement
from pipeline.evaluation._report import write_report
from pipeline.evaluation._results import ResultsError, read_rows
from pipeline.evaluation._run import EvalReport, EvalSettings, default_out_dir, evaluate, run_evaluation
from pipeline.evaluation._scoring import score_response, task_labels
from pipeline.evaluation._split import HARD_THRESHOLD, hard_easy_split, write_split

__all__ = [
    "GROUPS",
    "HARD_THRESHOLD",
    "METRICS",
    "Decoys",
    "Discovery",
    "Estimate",
    "EvalReport",
    "EvalSettings",
    "MetricSet",
    "NoiseError",
    "NoiseResult",
    "PromptError",
    "PromptTemplate",
    "ResultsError",
    "TaskRef",
    "add_decoys",
    "bootstrap",
    "default_out_dir",
    "discover_tasks",
    "evaluate",
    "hard_easy_split",
    "read_rows",
    "run_evaluation",
    "safety_requirement",
    "score_response",
    "summarize_metrics",
    "task_indicators",
    "task_labels",
    "write_noisy_task",
    "write_report",
    "write_split",
]
