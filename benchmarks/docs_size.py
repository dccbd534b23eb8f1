"""The size of the docs a newcomer reads (README.md and docs/*.md, code blocks included): bytes, words
and the reading time at 230 words a minute, per page and in all. The figure is kept in
docs/benchmarks.md (near 110 KB), not held by a test.

Usage: .venv/bin/python benchmarks/docs_size.py
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 230


def main() -> int:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    total_bytes = total_words = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        words = len(re.findall(r"\w+", text))
        total_bytes, total_words = total_bytes + len(text.encode()), total_words + words
        print(f"{page.relative_to(REPO).as_posix():28} {len(text.encode()) / 1000:6.1f} KB {words:6,} words")
    minutes = total_words / WORDS_PER_MINUTE
    print(f"{'all ' + str(len(pages)) + ' pages':28} {total_bytes / 1000:6.1f} KB {total_words:6,} words, {minutes:.0f} min of reading")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
