"""Releases of what the project imports or what people write: an `import-despite` output and a
folder of hand-written task folders, each released with one `safeforge publish` command; their
licence and citations follow each task's own origin; the SPOC files of a release."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import leaks
from tests_paths import REPO, SPOC_EXAMPLES

from safeforge.cli.main import main
from safeforge.spoc import check_folder

DESPITE_FIXTURES = REPO / "tests" / "fixtures" / "despite"
# DESPITE names a task by the source record it was made from (`normbank_14564`): our fixtures,
# renamed so, stand for DESPITE tasks made from a NormBank and a NEISS record (and one mismatch)
AS_DESPITE_TASKS = {
    "normbank_14564": "kitchen_stove_child",
    "neiss_2888": "elderly_care_water_bottle",
    "neiss_11125": "bathroom_wet_floor_mismatch",
}


@pytest.fixture(scope="module")
def despite_import(tmp_path_factory) -> Path:
    """The output of `safeforge import-despite` on three DESPITE-style task folders."""
    root = tmp_path_factory.mktemp("despite")
    for task_id, fixture in AS_DESPITE_TASKS.items():
        folder = Path(shutil.copytree(DESPITE_FIXTURES / fixture, root / "downloaded" / task_id))
        metadata = json.loads((folder / "metadata.json").read_text())
        (folder / "metadata.json").write_text(json.dumps({**metadata, "task_id": task_id}))
    assert main(["import-despite", str(root / "downloaded"), "--out", str(root / "imported")]) == 1  # 1: a mismatch
    return root / "imported"


def _card(release: Path) -> str:
    return (release / "README.md").read_text()


def test_an_import_despite_output_is_released_with_the_licence_and_citations_of_its_records(despite_import, tmp_path, capsys):
    import datasets

    out = tmp_path / "release"
    assert main(["publish", str(despite_import), "--version", "v1", "--out", str(out)]) == 0

    captured = capsys.readouterr()
    assert "left out: neiss_11125 (despite import 'imported'): mismatch: DESPITE safe plan: scores 1, not 2" in captured.err
    assert "release v1 (cc-by-sa-4.0): 2 task(s)" in captured.out
    rows = {r["task_id"]: r for r in datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]}
    assert {t: (r["made_by"], r["source"], r["llm_endpoint"]) for t, r in rows.items()} == {
        "neiss_2888": ("despite", "neiss", "none"),
        "normbank_14564": ("despite", "normbank", "none"),
    }
    card = _card(out)
    assert "license: cc-by-sa-4.0" in card  # made from a NormBank record: share-alike
    assert "2 imported from DESPITE; none of them went through Label Studio review" in card
    assert "DESPITE import `imported`: 2 imported, 1 mismatch" in card
    assert "LLM cost: not applicable" in card
    bibtex = card[card.index("```bibtex") :]
    assert all(key in bibtex for key in ("@article{zhang2026despite", "@inproceedings{kim2026spoc", "ziems2023normbank", "cpsc_neiss"))
    assert "shridhar2020alfred" not in bibtex and "puig2018virtualhome" not in bibtex
    licences = card[card.index("## Licence") :]
    assert "- `despite`: MIT (DESPITE's tasks, https://github.com/taozhang1004/DESPITE)" in licences
    assert "- `normbank`: CC BY-SA 4.0" in licences and "- `neiss`: public domain" in licences
    info = json.loads((out / "release.json").read_text())
    assert info["datasets"] == ["despite", "neiss", "normbank"]
    assert list(info["inputs"][0]["left_out"]) == ["neiss_11125"] and info["inputs"][0]["states"] == {"imported": 2, "mismatch": 1}
    assert leaks(out, tmp_path, despite_import) == []

    refused = main(["publish", str(despite_import), "--version", "v2", "--out", str(tmp_path / "mit"), "--license", "mit"])
    assert (
        refused == 2
        and "licence mit contradicts the licence of the datasets the tasks are derived from: normbank" in capsys.readouterr().err
    )


@pytest.mark.parametrize("wished", ["cc0-1.0", "unlicense"])
def test_despite_neiss_tasks_keep_despites_mit_notice(tmp_path, capsys, wished):
    """DESPITE's tasks are MIT even where their record (NEISS) is public domain: a licence that drops
    the notice is refused, naming DESPITE; one that keeps it is released as asked."""
    import datasets

    downloaded = Path(shutil.copytree(DESPITE_FIXTURES / AS_DESPITE_TASKS["neiss_2888"], tmp_path / "downloaded" / "neiss_2888"))
    metadata = json.loads((downloaded / "metadata.json").read_text())
    (downloaded / "metadata.json").write_text(json.dumps({**metadata, "task_id": "neiss_2888"}))
    assert main(["import-despite", str(tmp_path / "downloaded"), "--out", str(tmp_path / "imported")]) == 0
    capsys.readouterr()

    refused = main(["publish", str(tmp_path / "imported"), "--version", "v1", "--out", str(tmp_path / "refused"), "--license", wished])
    err = capsys.readouterr().err
    assert refused == 2 and f"licence {wished} contradicts the licence of the datasets the tasks are derived from: despite (MIT" in err
    assert "allows mit, apache-2.0, bsd-2-clause" in err and "neiss" not in err.split("contradicts")[1].split("; every")[0]
    assert not (tmp_path / "refused").exists()

    out = tmp_path / "release"
    assert main(["publish", str(tmp_path / "imported"), "--version", "v1", "--out", str(out), "--license", "apache-2.0"]) == 0
    card = _card(out)
    assert "license: apache-2.0" in card and "released under `apache-2.0`, which the licence of every dataset" in card
    assert "- `neiss`: public domain (a work of the US government: CPSC NEISS injury reports) (allows any licence)" in card
    assert "- `despite`: MIT (DESPITE's tasks, https://github.com/taozhang1004/DESPITE) (allows mit, apache-2.0," in card
    assert [r["task_id"] for r in datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]] == ["neiss_2888"]


def test_hand_written_tasks_are_released_with_their_spoc_files_which_spoc_export_reproduces(tmp_path, capsys):
    out = tmp_path / "release"
    assert main(["publish", str(SPOC_EXAMPLES), "--version", "v1", "--out", str(out)]) == 0
    assert "release v1 (mit): 8 task(s), 0 duplicate(s) left out, 8 SPOC file(s)" in capsys.readouterr().out

    files = sorted(p.name for p in (out / "spoc").glob("*.json"))
    assert "8 of the release's 8 tasks export" in (out / "spoc" / "README.md").read_text()
    assert len(files) == 8 and files[0] == "Drop_CloseWhileTransport_CellPhone_Box_00000.json"
    assert check_folder(out / "spoc") == []  # SPOC's reading rules
    info = json.loads((out / "release.json").read_text())
    assert sorted(t["spoc_file"] for t in info["tasks"]) == files
    assert info["spoc"] == {"folder": "spoc", "files": 8, "not_exported": 0}
    assert {f"spoc/{name}" for name in files} <= set(info["files"])
    card = _card(out)
    assert "8 of the 8 tasks have a SPOC goal-condition file in `spoc/`" in card
    assert "8 written by hand; none of them went through Label Studio review" in card
    assert "- `handwritten`: written for this release: its licence applies" in card

    assert main(["spoc", "export", str(out), "--out", str(tmp_path / "exported")]) == 0
    exported = tmp_path / "exported"
    assert sorted(p.name for p in exported.iterdir()) == files
    for name in files:
        assert (exported / name).read_bytes() == (out / "spoc" / name).read_bytes(), name
    assert leaks(out, tmp_path) == []
