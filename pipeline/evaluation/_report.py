"""The summary of an evaluation: summary.json, summary.md (tables) and metrics.png (bar charts).

Metrics are fractions in summary.json and percentages in summary.md and the plot; intervals are
95% percentile-bootstrap intervals over tasks (see _metrics).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from safeforge.common.files import write_atomically
from safeforge.evaluation._metrics import GROUPS, METRICS, MetricSet

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
PLOT = "metrics.png"
CROWDED = 6  # more bar groups than this: slanted labels
MIN_SLOTS = 4  # bar groups keep the width they would have with this many
METRIC_NAMES = {"F": "feasibility", "S": "safety", "SP": "safety precision", "SI": "safety intention"}


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _cell(metrics: MetricSet, name: str) -> str:
    estimate = metrics.estimates[name]
    if estimate.value is None:
        return "n/a"
    return f"{_percent(estimate.value)} [{_percent(estimate.low)}, {_percent(estimate.high)}]"


def markdown(summary: Mapping, metrics: Mapping) -> str:
    """summary.md: what was evaluated, then one table overall and one per group."""
    header = "| | tasks | samples | " + " | ".join(METRICS) + " |"
    rule = "|---|---:|---:|" + "---:|" * len(METRICS)

    def row(label: str, m: MetricSet) -> str:
        return f"| {label} | {m.tasks} | {m.samples} | " + " | ".join(_cell(m, n) for n in METRICS) + " |"

    boot = summary["bootstrap"]
    lines = [
        f"# Evaluation of {summary['model']} ({summary['setting']} setting)",
        "",
        f"- tasks: {summary['tasks']['evaluated']} evaluated of {summary['tasks']['found']} found"
        f" ({len(summary['tasks']['skipped'])} skipped); runs per task: {summary['runs']}; "
        f"samples: {summary['samples']}",
        f"- prompt template {summary['template_hash']}, temperature {summary['temperature']}, max_tokens {summary['max_tokens'] or 'none'}",
        f"- responses without a plan: {summary['no_plan']}; truncated: {summary['truncated']}; "
        f"LLM errors: {summary['llm_errors']}; "
        f"cost: ${summary['cost_usd']:.4f}" + (" (some calls unpriced)" if summary["unpriced_calls"] else ""),
        f"- metrics in %: {', '.join(f'{k} = {v}' for k, v in METRIC_NAMES.items())}; "
        f"[{100 * boot['confidence']:.0f}% bootstrap interval, {boot['resamples']:,} resamples over tasks, "
        f"seed {boot['seed']}]",
        "",
        "## Overall",
        "",
        header,
        rule,
        row("all", metrics["overall"]),
        "",
    ]
    for group in GROUPS:
        lines += [f"## By {group.replace('_', ' ')}", "", header, rule]
        lines += [row(value, m) for value, m in metrics["by"].get(group, {}).items()]
        lines.append("")
    if summary["tasks"]["skipped"]:
        lines += ["## Skipped", ""] + [f"- {problem}" for problem in summary["tasks"]["skipped"]] + [""]
    return "\n".join(lines)


def plot(metrics: Mapping, title: str, path: Path) -> None:
    """metrics.png: bars of F, S, SP, SI with their intervals, overall and per group."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = [("overall", {"all": metrics["overall"]})] + [(g, metrics["by"].get(g, {})) for g in GROUPS]
    figure = Figure(figsize=(14, 3.2 * len(panels)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(panels), 1)
    width = 0.8 / len(METRICS)
    for ax, (group, members) in zip(axes, panels, strict=False):
        labels = list(members)
        for index, name in enumerate(METRICS):
            heights, below, above = [], [], []
            for label in labels:
                estimate = members[label].estimates[name]
                value = 100 * (estimate.value or 0.0)
                heights.append(value)
                below.append(value - 100 * estimate.low if estimate.low is not None else 0.0)
                above.append(100 * estimate.high - value if estimate.high is not None else 0.0)
            positions = [i + (index - (len(METRICS) - 1) / 2) * width for i in range(len(labels))]
            ax.bar(positions, heights, width, yerr=[below, above], capsize=2, label=name)
        crowded = len(labels) > CROWDED
        ax.set_xticks(
            range(len(labels)),
            [f"{label}\n(n={members[label].tasks})" for label in labels],
            fontsize=8,
            rotation=30 if crowded else 0,
            ha="right" if crowded else "center",
        )
        ax.set_xlim(-0.6, max(len(labels), MIN_SLOTS) - 0.4)
        ax.set_ylim(0, 115)
        ax.set_ylabel("%")
        ax.set_title(group.replace("_", " "), fontsize=10)
    axes[0].legend(ncols=len(METRICS), loc="upper right", fontsize=8)
    figure.suptitle(title)
    staging = path.with_name(f".{path.name}.tmp")
    figure.savefig(staging, dpi=100, format="png")
    staging.replace(path)


def write_report(out_dir: Path, summary: dict, metrics: Mapping) -> list[Path]:
    """Write summary.json (the summary plus the metrics), summary.md and metrics.png."""
    out_dir.mkdir(parents=True, exist_ok=True)
    document = {
        **summary,
        "metrics": {
            "overall": metrics["overall"].to_dict(),
            "by": {g: {v: m.to_dict() for v, m in members.items()} for g, members in metrics["by"].items()},
        },
    }
    write_atomically(out_dir / SUMMARY_JSON, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    write_atomically(out_dir / SUMMARY_MD, markdown(summary, metrics))
    plot(
        metrics,
        f"{summary['model']} ({summary['setting']}): F, S, SP, SI with {100 * summary['bootstrap']['confidence']:.0f}% intervals",
        out_dir / PLOT,
    )
    return [out_dir / SUMMARY_JSON, out_dir / SUMMARY_MD, out_dir / PLOT]
