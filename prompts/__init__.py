"""The prompt templates, shipped as package data: one Markdown file per stage (see `pipeline.generation`
and `pipeline.evaluation` for how they are read; `SAFEFORGE_PROMPTS` points at another folder)."""
