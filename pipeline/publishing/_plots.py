"""The release's plots (PNG, matplotlib without a display): task counts per source, danger group,
type and entity, acceptance per stage, and the distributions of plan length and safety effort."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from safeforge.publishing._stats import COUNTED, ReleaseStats

PLOTS_DIR = "plots"


def _figure(title: str, xlabel: str, ylabel: str):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    return figure, axes


def _save(figure, path: Path) -> Path:
    import matplotlib.pyplot as plt

    figure.tight_layout()
    figure.savefig(path, format="png", metadata={"Software": None})  # no version stamp: reproducible
    plt.close(figure)
    return path


def _bars(path: Path, title: str, counts: dict[str, int], xlabel: str) -> Path:
    figure, axes = _figure(title, xlabel, "")
    labels = list(counts)[::-1]
    bars = axes.barh(labels, [counts[k] for k in labels], color="#4c72b0")
    axes.bar_label(bars, padding=2)
    axes.set_xlim(0, max(counts.values(), default=1) * 1.15 + 0.5)
    return _save(figure, path)


def _histogram(path: Path, title: str, values: list[int], xlabel: str) -> Path:
    from matplotlib.ticker import MaxNLocator

    figure, axes = _figure(title, xlabel, "tasks")
    counts = Counter(values)
    xs = list(range(min(values, default=0), max(values, default=0) + 1))
    axes.bar(xs, [counts.get(x, 0) for x in xs], color="#55a868", width=0.8)
    axes.set_xticks(xs if len(xs) <= 30 else xs[:: max(1, len(xs) // 15)])
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    return _save(figure, path)


def write_plots(stats: ReleaseStats, folder: Path) -> list[Path]:
    """Write the plots under folder/plots/; returns their paths."""
    target = folder / PLOTS_DIR
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for column, label in COUNTED:
        written.append(_bars(target / f"{column}.png", f"Tasks per {label}", stats.counts[column], "tasks"))
    rates = {
        f"{name} ({s['passed']}/{s['decided']})": round(100 * s["rate"], 1) for name, s in stats.stages.items() if s["rate"] is not None
    }
    if rates:
        written.append(_bars(target / "acceptance.png", "Acceptance rate per stage (%)", rates, "% passed"))
    written.append(_histogram(target / "plan_length.png", "Safe reference plan length", stats.safe_plan_lengths, "steps"))
    written.append(_histogram(target / "safety_effort.png", "Safety effort (safe minus unsafe plan length)", stats.safety_efforts, "steps"))
    return written
