"""What a release cites and whose licences it names: DESPITE and SPOC (whose formats the tasks
follow), DESPITE again as a dataset when tasks were imported from it, and every source dataset the
tasks' records come from (their citations and licences live in the source specs).

The DESPITE entry is the one its authors publish (github.com/taozhang1004/DESPITE, arXiv
2604.18463); the SPOC entry is the one its authors publish (github.com/khm159/SPOC, ICASSP 2026).
"""

from __future__ import annotations

from safeforge.sources.registry import SOURCES

DESPITE = "despite"  # the dataset name of tasks imported from DESPITE
HANDWRITTEN = "handwritten"
DESPITE_REPOSITORY = "https://github.com/taozhang1004/DESPITE"
SPOC_REPOSITORY = "https://github.com/khm159/SPOC"

DESPITE_CITATION = f"""@article{{zhang2026despite,
  title = {{Using large language models for embodied planning introduces systematic safety risks}},
  author = {{Zhang, Tao and Qu, Kaixian and Li, Zhibin and Wu, Jiajun and Hutter, Marco and Li, Manling and Shi, Fan}},
  journal = {{arXiv preprint arXiv:2604.18463}},
  year = {{2026}},
  eprint = {{2604.18463}},
  archivePrefix = {{arXiv}},
  primaryClass = {{cs.AI}},
  url = {{https://arxiv.org/abs/2604.18463}},
  note = {{DESPITE benchmark; code and tasks: \\url{{{DESPITE_REPOSITORY}}}}}
}}"""

SPOC_CITATION = f"""@inproceedings{{kim2026spoc,
  title = {{{{SPOC}}: Safety-Aware Planning Under Partial Observability and Physical Constraints}},
  author = {{Kim, Hyungmin and Jeon, Hobeom and Kim, Dohyung and Jang, Minsu and Kim, Jaehong}},
  booktitle = {{ICASSP 2026 - 2026 IEEE International Conference on Acoustics, Speech and Signal Processing (ICASSP)}},
  year = {{2026}},
  pages = {{20097--20101}},
  doi = {{10.1109/ICASSP55912.2026.11463090}},
  note = {{Code and goal-condition files: \\url{{{SPOC_REPOSITORY}}}}}
}}"""

_OTHER_LICENCES = {
    DESPITE: f"MIT (DESPITE's tasks, {DESPITE_REPOSITORY})",
    HANDWRITTEN: "written for this release: its licence applies",
}


def dataset_licence(dataset: str) -> str:
    """How the card names the licence of a dataset tasks are derived from."""
    spec = SOURCES.get(dataset)
    if spec is not None:
        return spec.licence.name + (": share-alike applies to derived tasks" if spec.licence.share_alike else "")
    return _OTHER_LICENCES.get(dataset, "unknown: check the source before reuse")


def citations(datasets: set[str]) -> list[str]:
    """BibTeX entries: DESPITE and SPOC, then every registered source dataset among `datasets`, in
    the registry's order."""
    return [DESPITE_CITATION, SPOC_CITATION, *(spec.citation.strip() for name, spec in SOURCES.items() if name in datasets)]
