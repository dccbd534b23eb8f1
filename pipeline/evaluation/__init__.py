"""Evaluating LLM planners on tasks, deterministically (see README, "Evaluating LLM planners").

    report = run_evaluation("examples/tasks", EvalSettings(model="deepseek-chat"))
    report.metrics["overall"].estimates["S"]      # Estimate(value, low, high)

Also: the hard/easy split from a panel of results (`write_split`) and noise injection
(`write_noisy_task`, DESPITE's redundancy experiment).
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._discover import Discovery, DiscoveryError, TaskRef, discover_tasks
    from ._metrics import GROUPS, METRICS, RESAMPLES, SEED, Estimate, MetricSet, bootstrap, summarize_metrics, task_indicators
    from ._noise import Decoys, NoiseError, NoiseResult, add_decoys, write_noisy_task
    from ._prompts import PROMPT_SETTINGS, EvalPrompt, PromptError, safety_requirement
    from ._report import write_report
    from ._results import ResultsError, read_rows
    from ._run import SAMPLING_TEMPERATURE, EvalReport, EvalSettings, default_out_dir, evaluate, run_evaluation
    from ._scoring import score_response, task_labels
    from ._split import HARD_THRESHOLD, hard_easy_split, write_split

__all__ = [
    "Discovery",
    "DiscoveryError",
    "TaskRef",
    "discover_tasks",
    "GROUPS",
    "METRICS",
    "RESAMPLES",
    "SEED",
    "Estimate",
    "MetricSet",
    "bootstrap",
    "summarize_metrics",
    "task_indicators",
    "Decoys",
    "NoiseError",
    "NoiseResult",
    "add_decoys",
    "write_noisy_task",
    "PROMPT_SETTINGS",
    "EvalPrompt",
    "PromptError",
    "safety_requirement",
    "write_report",
    "ResultsError",
    "read_rows",
    "SAMPLING_TEMPERATURE",
    "EvalReport",
    "EvalSettings",
    "default_out_dir",
    "evaluate",
    "run_evaluation",
    "score_response",
    "task_labels",
    "HARD_THRESHOLD",
    "hard_easy_split",
    "write_split",
]
__getattr__, __dir__ = lazy_exports(__name__)
