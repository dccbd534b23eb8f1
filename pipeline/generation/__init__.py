"""Generation: the danger extractor, the code generator with its execution and quality checks,
and the run driver behind `safeforge generate` (see README, "Generating tasks").

    from pipeline.generation import GenerationSettings, process_record, generate_run, run_generation

Prompts are files in prompts/ (identified by content hash); every LLM call goes through
`pipeline.llm.LLMClient` (cache, retries, call ledger); every record ends in one state of the
run ledger.
"""
from pipeline.generation._calls import StageCall
from pipeline.generation._check import Checker, check_candidate
from pipeline.generation._extract import Extraction, extract_danger, extraction_messages
from pipeline.generation._feedback import check_problems, judge_problems
from pipeline.generation._generate import GenerationOutcome, Round, generate_task, generation_messages
from pipeline.generation._judge import judge_messages, judge_task
from pipeline.generation._progress import ProgressBar
from pipeline.generation._prompts import PromptError, PromptSet, PromptTemplate, data_block, load_prompt, load_prompts
from pipeline.generation._record import load_extraction, process_record
from pipeline.generation._run import (
    RunProgress,
    RunSummary,
    default_run_name,
    generate_run,
    llm_config_for,
    run_generation,
)
from pipeline.generation._schemas import DangerFormalization, ExtractionResult, GeneratedPDDL, JudgeVerdict
from pipeline.generation._settings import GenerationSettings

__all__ = [
    "Checker", "DangerFormalization", "Extraction", "ExtractionResult", "GeneratedPDDL", "GenerationOutcome",
    "GenerationSettings", "JudgeVerdict", "ProgressBar", "PromptError", "PromptSet", "PromptTemplate", "Round",
    "RunProgress", "RunSummary", "StageCall", "check_candidate", "check_problems", "data_block",
    "default_run_name", "extract_danger", "extraction_messages", "generate_run", "generate_task",
    "generation_messages", "judge_messages", "judge_problems", "judge_task", "llm_config_for",
    "load_extraction", "load_prompt", "load_prompts", "process_record", "run_generation",
]
