"""The docs say each fact once: measured figures only in docs/benchmarks.md, settings as table rows
only in docs/configuration.md, and each command's options in a table on one page at most. (Their
size is a figure of docs/benchmarks.md, from benchmarks/docs_size.py, not a test.)"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from tests_paths import REPO

from safeforge.settings import Settings

BENCHMARKS = REPO / "docs" / "benchmarks.md"
CONFIGURATION = REPO / "docs" / "configuration.md"

# A measured figure: a number (1,468; 0.81; a range 0.03–21.6) with a unit of time, speed, size or
# ratio. Limits and defaults carry units too (1 MiB, 60 s), so a page is only held to the figures
# benchmarks.md states, plus the units that only a measurement has (a speed-up, a rate).
NUMBER = r"\d[\d,]*(?:\.\d+)?(?:\s?[–-]\s?\d[\d,]*(?:\.\d+)?)?"
UNIT = r"(?:CPU min|ms|µs|s|min|h|%|×|MB|KB|GiB|tasks/min|checks/min|records/s|plans/s|steps/s)"
FIGURE = re.compile(rf"(?<![\w.]){NUMBER}\s?{UNIT}(?![\w/])")
MEASUREMENT_ONLY = re.compile(rf"(?<![\w.]){NUMBER}\s?(?:×|tasks/min|checks/min|records/s|plans/s|steps/s)(?![\w/])")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def prose(page: Path) -> str:
    """The page without its code blocks (example output is not a claim of speed)."""
    return re.sub(r"^(```|~~~).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)


def table_rows(text: str) -> list[list[str]]:
    rows = [line.strip().strip("|").split("|") for line in text.splitlines() if line.lstrip().startswith("|")]
    return [[cell.strip() for cell in row] for row in rows if not set("".join(row)) <= set("-: ")]


def measured_figures(text: str) -> set[str]:
    """The figures of a page, less its targets (`≤ 2 s`), which may equal a limit stated elsewhere."""
    return {" ".join(m.group().split()) for m in FIGURE.finditer(text) if not re.search(r"[≤≥]\s?$", text[: m.start()])}


def test_figures_live_only_in_benchmarks():
    measured = measured_figures(prose(BENCHMARKS))
    assert len(measured) > 20, "benchmarks.md lost its figures, or FIGURE no longer reads them"
    found = []
    for page in pages():
        if page == BENCHMARKS:
            continue
        for figure in FIGURE.findall(prose(page)):
            if " ".join(figure.split()) in measured or MEASUREMENT_ONLY.fullmatch(figure):
                found.append(f"{page.relative_to(REPO)}: {figure!r}")
    assert not found, "state figures in docs/benchmarks.md and link there:\n" + "\n".join(found)


def test_settings_are_table_rows_only_in_configuration():
    settings = {name for variable, *_ in Settings.variables() for name in re.findall(r"[A-Z][A-Z0-9_]{3,}", variable)}
    found = [
        f"{page.relative_to(REPO)}: {row[0]}"
        for page in pages()
        if page != CONFIGURATION
        for row in table_rows(prose(page))
        if any(name in settings for name in re.findall(r"[A-Z][A-Z0-9_]{3,}", row[0]))
    ]
    assert not found, "a setting's row belongs in the generated table of docs/configuration.md:\n" + "\n".join(found)


def test_an_option_is_in_a_table_on_one_page_at_most():
    homes: dict[str, set[str]] = {}
    for page in pages():
        for row in table_rows(prose(page)):
            for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", row[0]):
                homes.setdefault(option, set()).add(page.relative_to(REPO).as_posix())
    twice = {option: sorted(where) for option, where in homes.items() if len(where) > 1}
    assert not twice, f"an option's table belongs on its command's one reference page: {twice}"


def slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (Python-Markdown's toc slugify)."""
    ascii_text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip().lower())


def test_the_readmes_anchors_lead_somewhere():
    """mkdocs checks the anchors between pages; the README is not one of its pages."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for page, anchor in re.findall(r"\]\((docs/[^)#]+)#([^)]+)\)", readme):
        headings = re.findall(r"^#+ (.+)$", prose(REPO / page), re.M)
        assert anchor in {slug(h) for h in headings}, f"README links to {page}#{anchor}, which has no such heading"
