"""Every release has `spoc/`, with a README saying how many tasks exported and why each other did not."""

from __future__ import annotations

import shutil

from tests_paths import EXAMPLES, SPOC_FIXTURES

from safeforge.publishing._spoc import write_spoc_files
from safeforge.spoc import check_folder


def test_a_release_where_no_task_exports_still_has_spoc_with_the_reasons(tmp_path):
    release = tmp_path / "release"
    shutil.copytree(EXAMPLES / "kitchen_mopped_floor_hot_soup", release / "kitchen_mopped_floor_hot_soup")
    found = write_spoc_files(release, lambda message: None)
    assert found.files == {} and found.not_exported == 1
    assert [p.name for p in (release / "spoc").iterdir()] == ["README.md"]
    readme = (release / "spoc" / "README.md").read_text()
    assert "0 of the release's 1 tasks export" in readme
    assert "- `kitchen_mopped_floor_hot_soup`: no AI2-THOR scene: not derived from an ALFRED trajectory" in readme


def test_the_readme_lists_each_candidate_of_a_refusal(tmp_path):
    release = tmp_path / "release"
    shutil.copytree(SPOC_FIXTURES / "alfred_egg_fridge", release / "alfred_egg_fridge")
    shutil.copytree(SPOC_FIXTURES / "kind_fire_microwave_fork", release / "kind_fire_microwave_fork")
    found = write_spoc_files(release, lambda message: None)
    assert list(found.files) == ["alfred_egg_fridge"]
    readme = (release / "spoc" / "README.md").read_text()
    assert "1 of the release's 2 tasks export" in readme
    assert "- `kind_fire_microwave_fork`: the fork must start inside the Microwave" in readme
    assert check_folder(release / "spoc") == []  # the README is no goal-condition file: SPOC's loader skips it
