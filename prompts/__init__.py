"""The prompt templates, shipped as package data: one Markdown file per stage (see `safeforge.generation`
and `safeforge.evaluation` for how they are read; `SAFEFORGE_PROMPTS` points at another folder)."""
