"""The docs stay true to the code: generated parts match their generators, the README stays short
and names nothing outside the repository."""

from __future__ import annotations

import re
import subprocess
import sys

from tests_paths import REPO

from safeforge.cli.config import variables_markdown


def test_the_configuration_table_is_the_settings_models():
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- generated: safeforge config --markdown -->\n(.*)<!-- /generated -->", page, re.S)
    assert found, "docs/configuration.md lost its generated table markers"
    assert found.group(1) == variables_markdown(), "regenerate it: safeforge config --markdown"


def test_every_setting_is_in_the_table_and_config_prints_it():
    done = subprocess.run([sys.executable, "-m", "safeforge.cli", "config", "--json"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    table = variables_markdown()
    variables = [line.split('"variable": "')[1].split('"')[0] for line in done.stdout.splitlines()]
    assert variables and all(f"`{v}" in table for v in variables)


SHELF = "/".join(("..", "shared"))  # the team's reference shelf; spelled so this file does not name it either


def test_the_readme_is_short_and_self_contained():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert SHELF not in readme and SHELF.removeprefix("../") + "/sources" not in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / link).exists(), f"README links to a missing page: {link}"


def test_nothing_tracked_names_the_reference_shelf_beside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=REPO).stdout.split()
    offenders = [
        name
        for name in tracked
        if (REPO / name).is_file()
        and name.endswith((".py", ".md", ".sh", ".txt", ".toml", ".yml"))
        and SHELF in (REPO / name).read_text(encoding="utf-8", errors="replace")
    ]
    assert offenders == []


def test_a_secret_set_to_nothing_is_an_error_not_the_demo_default():
    done = subprocess.run([sys.executable, "-m", "safeforge.cli", "config"], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**__import__("os").environ, "LABEL_STUDIO_API_KEY": ""})  # fmt: skip
    assert done.returncode == 2
    assert "LABEL_STUDIO_API_KEY is set but empty" in done.stderr and "Traceback" not in done.stderr
