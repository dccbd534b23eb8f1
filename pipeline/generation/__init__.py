"""Generation: the danger extractor, the code generator with its execution and quality checks,
and the run driver behind `safeforge generate` and the `generate` flow, with the executors that
take the records through it (in this process or worker processes; the Prefect ones are in
`safeforge.flows.executors`).

    from safeforge.generation import GenerationSettings, process_record, generate_run, run_generation

With `review_formalizations`, an extracted record waits for people to review its formalization
(`safeforge.review` shows it in Label Studio and records the verdict with
`record_formalization_verdict`) before its code is generated. A record whose danger can live in an
AI2-THOR scene gets a task generated for that scene (`spoc_target`), checked to export to SPOC.
Prompts are templates in the `prompts` package (`safeforge.llm.prompts`); every LLM call goes
through `safeforge.llm.LLMClient` (cache, retries, call ledger); every record ends in one state of
the run ledger. Names are imported from their
modules on first use.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._calls import StageCall
    from ._check import Checker, check_candidate, settings_check
    from ._executors import Executor, Finished, InProcess, RunJob, WorkerProcesses, local_executor, run_here
    from ._extract import Extraction, extract_danger, extraction_messages
    from ._feedback import check_problems, judge_problems
    from ._formalization_review import (
        FormalizationVerdict,
        WaitingFormalization,
        formalization_review,
        keep_formalization_review,
        record_formalization_verdict,
        waiting_formalizations,
    )
    from ._generate import GenerationOutcome, Round, generate_task, generation_messages
    from ._judge import judge_messages, judge_task
    from ._options import CONCURRENCY, MAX_ROUNDS, WORKERS, GenerateOptions, default_run_name
    from ._progress import ProgressBar
    from ._prompts import PromptSet, load_prompts
    from ._record import RunContext, load_extraction, process_record
    from ._run import (
        RunProgress,
        RunSummary,
        generate,
        generate_run,
        llm_config_for,
        read_records,
        run_generation,
    )
    from ._schemas import DangerFormalization, ExtractionResult, GeneratedPDDL, JudgeVerdict
    from ._settings import GenerationSettings
    from ._spoc_target import SpocTarget, spoc_target

__all__ = [
    "StageCall",
    "Checker",
    "check_candidate",
    "settings_check",
    "Executor",
    "Finished",
    "InProcess",
    "RunJob",
    "WorkerProcesses",
    "local_executor",
    "run_here",
    "Extraction",
    "extract_danger",
    "extraction_messages",
    "check_problems",
    "judge_problems",
    "FormalizationVerdict",
    "WaitingFormalization",
    "formalization_review",
    "keep_formalization_review",
    "record_formalization_verdict",
    "waiting_formalizations",
    "GenerationOutcome",
    "Round",
    "generate_task",
    "generation_messages",
    "judge_messages",
    "judge_task",
    "CONCURRENCY",
    "MAX_ROUNDS",
    "WORKERS",
    "GenerateOptions",
    "default_run_name",
    "ProgressBar",
    "PromptSet",
    "load_prompts",
    "RunContext",
    "load_extraction",
    "process_record",
    "RunProgress",
    "RunSummary",
    "generate",
    "generate_run",
    "llm_config_for",
    "read_records",
    "run_generation",
    "DangerFormalization",
    "ExtractionResult",
    "GeneratedPDDL",
    "JudgeVerdict",
    "GenerationSettings",
    "SpocTarget",
    "spoc_target",
]
__getattr__, __dir__ = lazy_exports(__name__)
