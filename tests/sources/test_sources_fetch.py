"""`safeforge sources fetch`: full data over HTTP from a local server serving archives made here —
verified, resumable, atomic — and read by default afterwards."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from tests_paths import SAMPLES

from safeforge.cli.main import main
from safeforge.sources import iter_records
from safeforge.sources.paths import MANIFEST
from safeforge.sources.registry import default_location
from tests.doubles.file_server import Files, serving

HOLDOUT = (SAMPLES / "neiss" / "holdout_labeled.csv").read_bytes()


@pytest.fixture
def data(tmp_path, monkeypatch):
    """An empty data folder of this test."""
    folder = tmp_path / "data"
    monkeypatch.setenv("SAFEFORGE_DATA", str(folder))
    return folder


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def catalog(tmp_path: Path, source: str, *entries: dict) -> Path:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({source: list(entries)}))
    return path


def year_file(year: int) -> bytes:
    """The sample's rows with the case numbers of another year (so records differ by year)."""
    lines = HOLDOUT.decode("utf-8").splitlines(keepends=True)
    return (lines[0] + "".join(line.replace(",1", f",{year % 100}1", 1) for line in lines[1:6])).encode()


def test_several_neiss_years_are_fetched_verified_and_read_by_default(tmp_path, data, capsys):
    files = Files({f"/neiss{y}.tsv": year_file(y) for y in (2022, 2023)})
    with serving(files) as url:
        entries = [
            {"key": str(y), "url": f"{url}/neiss{y}.tsv", "file": f"neiss{y}.tsv", "sha256": sha(files.content[f"/neiss{y}.tsv"])}
            for y in (2022, 2023)
        ]
        code = main(
            ["sources", "fetch", "neiss", "--year", "2022", "--year", "2023", "--catalog", str(catalog(tmp_path, "neiss", *entries))]
        )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "neiss 2022: installed at" in out and "pinned sha256 verified" in out
    assert "neiss now reads the full data (fetched) (neiss@2022+2023) by default" in out
    assert sorted(json.loads((data / "neiss" / MANIFEST).read_text())) == ["2022", "2023"]
    location = default_location("neiss")
    assert (location.kind, location.path) == ("full", data / "neiss" / ".")
    records = list(iter_records("neiss"))
    assert len(records) == 10
    assert records[0].origin == "neiss@2022+2023/neiss2022.tsv:row 1"
    assert records[-1].origin == "neiss@2022+2023/neiss2023.tsv:row 5"
    assert main(["sources", "list", "--json"]) == 0
    listing = {row["name"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert listing["neiss"]["in_use"] == "full" and listing["normbank"]["in_use"] == "sample"


def test_an_interrupted_download_resumes_where_it_stopped(tmp_path, data, capsys):
    body = os.urandom(3_000_000)
    files = Files({"/big.tsv": body}, cut_after={"/big.tsv": 1_000_000})
    with serving(files) as url:
        cat = catalog(
            tmp_path, "neiss", {"key": "2023", "url": f"{url}/big.tsv", "file": "neiss2023.tsv", "sha256": sha(body), "size": len(body)}
        )
        assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 1
        err = capsys.readouterr().err
        assert f"neiss 2023: cannot download {url}/big.tsv" in err and "run the same command again to resume" in err
        part = data / "neiss" / ".downloads" / "neiss2023.tsv.part"
        assert part.stat().st_size == 1_000_000
        assert default_location("neiss").kind == "sample"  # nothing half-done is ever read
        assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 0
    assert files.requests[-1] == ("/big.tsv", "bytes=1000000-")
    assert (data / "neiss" / "neiss2023.tsv").read_bytes() == body
    assert not part.exists()


def test_a_wrong_checksum_discards_the_file_and_names_source_and_url(tmp_path, data, capsys):
    files = Files({"/neiss2023.tsv": year_file(2023)})
    with serving(files) as url:
        cat = catalog(tmp_path, "neiss", {"key": "2023", "url": f"{url}/neiss2023.tsv", "file": "neiss2023.tsv", "sha256": "0" * 64})
        assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 1
    err = capsys.readouterr().err
    assert f"error: neiss 2023 from {url}/neiss2023.tsv: sha256 " in err
    assert "does not match the pinned's 0000" in err and "the file was discarded" in err
    assert not list((data / "neiss").rglob("neiss2023.tsv*")) and not (data / "neiss" / MANIFEST).exists()


def test_without_a_published_checksum_the_first_download_is_recorded_and_later_ones_must_match(tmp_path, data, capsys):
    files = Files({"/neiss2023.tsv": year_file(2023)})
    with serving(files) as url:
        cat = catalog(tmp_path, "neiss", {"key": "2023", "url": f"{url}/neiss2023.tsv", "file": "neiss2023.tsv", "sha256": None})
        assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 0
        assert "sha256 recorded (no published checksum)" in capsys.readouterr().out
        assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 0  # already there: nothing sent
        assert "already there" in capsys.readouterr().out and len(files.requests) == 1
        (data / "neiss" / "neiss2023.tsv").unlink()
        files.content["/neiss2023.tsv"] = year_file(2024)  # the publisher's file changed under the same name
        assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 1
    assert "does not match the first download's" in capsys.readouterr().err


def test_offline_fetch_says_so_and_unknown_years_list_the_valid_ones(tmp_path, data, capsys):
    cat = catalog(tmp_path, "neiss", {"key": "2023", "url": "http://127.0.0.1:9/neiss2023.tsv", "file": "neiss2023.tsv", "sha256": None})
    assert main(["sources", "fetch", "neiss", "--catalog", str(cat)]) == 1
    assert "error: neiss 2023: cannot download http://127.0.0.1:9/neiss2023.tsv (ConnectError" in capsys.readouterr().err
    assert main(["sources", "fetch", "neiss", "--year", "1987"]) == 2
    assert "no NEISS data for year(s) 1987 (available: 1999-2023)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["sources", "fetch", "imdb"])
    assert stopped.value.code == 2


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _tar_gz(folder: Path, arcname: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=arcname)
    return buffer.getvalue()


def test_archives_are_unpacked_into_place_and_their_records_read(tmp_path, data, capsys):
    root = "programs_processed_precond_nograb_morepreconds"
    sample = SAMPLES / "virtualhome" / root
    pairs = {
        f"{root}/{p.relative_to(sample)}": p.read_bytes()
        for p in sorted(sample.rglob("*"))
        if p.is_file() and "results_intentions_march-13-18" in str(p)
    }
    archives = {
        "/vh.zip": _zip(pairs),
        "/bddl.tar.gz": _tar_gz(SAMPLES / "bddl" / "activity_definitions", "bddl-3.6.0/bddl/activity_definitions"),
    }
    with serving(Files(dict(archives))) as url:
        vh = catalog(
            tmp_path,
            "virtualhome",
            {"key": "v", "url": f"{url}/vh.zip", "file": "vh.zip", "sha256": sha(archives["/vh.zip"]), "unpack": "zip"},
        )
        assert main(["sources", "fetch", "virtualhome", "--catalog", str(vh)]) == 0
        bddl = catalog(
            tmp_path,
            "bddl",
            {
                "key": "3.6.0",
                "url": f"{url}/bddl.tar.gz",
                "file": "bddl.tar.gz",
                "sha256": sha(archives["/bddl.tar.gz"]),
                "unpack": "tar.gz",
            },
        )
        assert main(["sources", "fetch", "bddl", "--catalog", str(bddl)]) == 0
    assert len(list(iter_records("virtualhome"))) == 16
    assert {r.origin.split("/")[0] for r in iter_records("virtualhome")} == {"virtualhome@v"}
    assert len(list(iter_records("bddl"))) == 49
    assert not (data / "virtualhome" / ".downloads" / "vh.zip.part").exists()  # the archive is not kept


def test_a_file_downloaded_by_hand_is_installed_with_from(tmp_path, data, capsys):
    own = tmp_path / "Downloads" / "NormBank.csv"
    own.parent.mkdir()
    own.write_bytes((SAMPLES / "normbank" / "NormBank.csv").read_bytes())
    assert main(["sources", "fetch", "normbank", "--from", str(own)]) == 0
    assert default_location("normbank").kind == "full"
    assert next(iter(iter_records("normbank"))).origin == "normbank@NormBank.csv/NormBank.csv:row 1"


def test_the_installed_bddl_package_gives_all_1016_activities(tmp_path, data):
    site = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), "bddl==3.6.0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", "sources", "show", "bddl", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert len(records) == 1016
    assert all(r["origin"].startswith("bddl@bddl-3.6.0/") for r in records)
