"""The dataset card: README.md with YAML metadata (license, tags, configs) and the release's
numbers, plots, layout and the licences of the sources the tasks come from."""

from __future__ import annotations

import yaml

from safeforge.publishing._archive import ARCHIVE
from safeforge.publishing._dataset import DATA_FILE
from safeforge.publishing._stats import COUNTED, ReleaseStats
from safeforge.sources.registry import SOURCES

# Licences of the records tasks are derived from: every registered source's, and two origins that
# are not sources (tasks imported from DESPITE, hand-written tasks).
OTHER_LICENSES = {"despite": "MIT (DESPITE, lennittus/DESPITE)", "handwritten": "this release's licence"}
SHARE_ALIKE_SOURCES = tuple(name for name, spec in SOURCES.items() if spec.licence.share_alike)


def source_licence(source: str) -> str:
    spec = SOURCES.get(source)
    if spec is not None:
        return spec.licence.name + (": share-alike applies to derived tasks" if spec.licence.share_alike else "")
    return OTHER_LICENSES.get(source, "unknown: check the source before reuse")


DESPITE_CITATION = """@misc{despite,
  title = {Using large language models for embodied planning introduces systematic safety risks},
  note = {DESPITE: Deterministic Evaluation of Safe Planning In embodied Task Execution},
  howpublished = {\\url{https://github.com/taozhang1004/DESPITE}}
}"""
SPOC_CITATION = """@misc{spoc,
  title = {{SPOC}: Safety-aware planning under partial observability and physical constraints},
  howpublished = {\\url{https://github.com/khm159/SPOC}}
}"""


def citations(sources) -> list[str]:
    """BibTeX entries: DESPITE, SPOC, then every registered source the release draws on."""
    return [DESPITE_CITATION, SPOC_CITATION, *(SOURCES[s].citation.strip() for s in sorted(sources) if s in SOURCES)]


TAGS = ["safety", "planning", "pddl", "embodied-ai", "robotics", "llm-evaluation", "despite"]


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


def front_matter(license_id: str, version: str, tasks: int) -> dict:
    return {
        "license": license_id,
        "pretty_name": f"Safeforge safety-aware planning tasks {version}",
        "language": ["en"],
        "tags": TAGS,
        "size_categories": [_size_category(tasks)],
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}],
    }


def _table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def render_card(
    *,
    version: str,
    license_id: str,
    repo_id: str | None,
    stats: ReleaseStats,
    runs: list[str],
    plots: list[str],
    replayed: int = 0,
    review_section: str = "",
) -> str:
    """The README.md text; `review_section` is the runs' review in Markdown (`safeforge.review.review_report`)."""
    meta = yaml.safe_dump(front_matter(license_id, version, stats.tasks), sort_keys=False, allow_unicode=True)
    load_from = repo_id or "path/to/this/folder"
    revision = f', revision="{version}"' if repo_id else ""
    parts = [
        f"---\n{meta}---\n",
        f"# Safeforge safety-aware planning tasks, release {version}\n",
        f"{stats.tasks} safety-augmented embodied planning tasks in the DESPITE format, each accepted "
        "by human review and re-validated before release (structural danger checks, a safe and an "
        "unsafe reference plan from real planners, and the recorded reference plans scored again: "
        f"safe 2, unsafe 1). Built from the runs {', '.join(runs)}; "
        f"{stats.duplicates} duplicate task(s) with the same content hash were left out.\n",
        f'```python\nfrom datasets import load_dataset\ntasks = load_dataset("{load_from}"{revision})["train"]\n```\n',
        "## Files\n",
        f"- `{DATA_FILE}`: one row per task (ids, source, danger formalization, safety-augmented "
        "and basic PDDL, reference plans and their lengths, safety effort, review summary, "
        "provenance, and `metadata_json` with metadata.json whole).\n"
        f"- `{ARCHIVE}`: the task folders in the DESPITE layout, `<task_id>/domain.pddl`, "
        "`problem.pddl`, `metadata.json`, plus `safety_domain.pddl` and `safety_problem.pddl` "
        "(the source of truth; the basic PDDL is derived from them).\n"
        "- `release.json`: version, runs, counts and the sha256 of every file and task.\n"
        "- `plots/`: the figures below.\n",
        "## Tasks\n",
    ]
    for column, label in COUNTED:
        counts = stats.counts[column]
        parts.append(f"Per {label}:\n\n" + _table((label, "tasks"), list(counts.items())) + "\n")
    lengths = stats.to_dict()
    parts.append(
        "Safe reference plan length: "
        + ", ".join(f"{k} {v}" for k, v in lengths["safe_plan_length"].items())
        + ". Safety effort (safe minus unsafe "
        "plan length): " + ", ".join(f"{k} {v}" for k, v in lengths["safety_effort"].items()) + ".\n"
    )
    parts.append("## How the tasks were selected\n")
    parts.append(
        _table(
            ("stage", "decided", "passed", "acceptance rate"),
            [
                (name, s["decided"], s["passed"], "n/a" if s["rate"] is None else f"{100 * s['rate']:.1f}%")
                for name, s in stats.stages.items()
            ],
        )
        + "\n"
    )
    if review_section:
        parts += ["## Human review\n", review_section + "\n"]
    if replayed:
        parts.append(
            f"**{replayed} of the {stats.tasks} tasks were generated from hand-written responses served by Safeforge's "
            "replay server, not by a language model.** The model names their provenance records are those the "
            "replay files claim, and their LLM cost is not a real cost.\n"
        )
    parts.append(
        f"LLM cost: {_money(stats.llm_cost_usd)} in total, {_money(stats.cost_per_accepted_task)} per accepted task ({stats.cost_basis}).\n"
    )
    if plots:
        parts.append("## Plots\n")
        parts += [f"![{name}]({name})\n" for name in plots]
    parts.append("## Citation\n")
    parts.append(
        "If you use these tasks, please cite DESPITE and SPOC, whose formats they follow, and the datasets "
        "the tasks are derived from:\n\n```bibtex\n" + "\n\n".join(citations(stats.counts["source"])) + "\n```\n"
    )
    parts.append("## Licence\n")
    sources = sorted(stats.counts["source"])
    parts.append(
        f"The tasks are released under `{license_id}`. They are derived from records of these "
        "sources, whose licences apply to the source material:\n\n" + "\n".join(f"- `{s}`: {source_licence(s)}" for s in sources) + "\n"
    )
    return "\n".join(parts)
