"""The agreement plot (PNG, matplotlib without a display): Cohen's kappa of every pair of annotators
as a matrix (shared tasks in each cell), and each annotator's agreement with the final decisions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from safeforge.review._agreement import Agreement


def agreement_plot(result: Agreement, path: str | Path, alias: Callable[[str], str] = str) -> Path | None:
    """Write the plot to `path`; None (nothing written) when no annotator has voted."""
    if not result.annotators:
        return None
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    names = [a.annotator for a in result.annotators]
    labels = [alias(n) for n in names]
    size = max(3.5, 0.6 * len(names) + 2.0)
    figure, (matrix_axes, bar_axes) = plt.subplots(1, 2, figsize=(max(10.0, 2 * size + 2.0), size + 0.5), dpi=100)
    kappas = [[float("nan")] * len(names) for _ in names]
    notes = [[""] * len(names) for _ in names]
    for pair in result.pairs:
        i, j = names.index(pair.annotators[0]), names.index(pair.annotators[1])
        text = f"{'n/a' if pair.cohen_kappa is None else f'{pair.cohen_kappa:.2f}'}\n({pair.tasks})"
        for a, b in ((i, j), (j, i)):
            kappas[a][b] = float("nan") if pair.cohen_kappa is None else pair.cohen_kappa
            notes[a][b] = text
    image = matrix_axes.imshow(kappas, vmin=-1, vmax=1, cmap="RdYlGn")
    matrix_axes.set_xticks(range(len(names)), labels, rotation=45, ha="right")
    matrix_axes.set_yticks(range(len(names)), labels)
    for i in range(len(names)):
        for j in range(len(names)):
            matrix_axes.text(j, i, notes[i][j] or ("—" if i == j else ""), ha="center", va="center", fontsize=8)
    alpha = "n/a" if result.krippendorff_alpha is None else f"{result.krippendorff_alpha:.3f}"
    matrix_axes.set_title(f"Cohen's kappa (shared tasks)\nKrippendorff's alpha {alpha} over {result.tasks} task(s)")
    figure.colorbar(image, ax=matrix_axes, fraction=0.046)
    shares = [a.percent_with_final or 0.0 for a in result.annotators]
    bars = bar_axes.barh(labels[::-1], shares[::-1], color="#4c72b0")
    bar_axes.bar_label(bars, labels=[_with_final_label(a) for a in result.annotators[::-1]], padding=2, fontsize=8)
    bar_axes.set_xlim(0, 130)
    bar_axes.set_xlabel("% of decided tasks")
    bar_axes.set_title("Votes that agree with\nthe final decision")
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, format="png", metadata={"Software": None})  # no version stamp: reproducible
    plt.close(figure)
    return path


def _with_final_label(row) -> str:
    return "no decided task" if row.percent_with_final is None else f"{row.agreed_with_final}/{row.decided}"
