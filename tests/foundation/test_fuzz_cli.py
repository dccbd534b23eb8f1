"""Damaged input through the installed command line: task files, metadata, plans files and source
files cut, spliced and sprinkled with bytes, and drawn text for every option and setting that takes
a number. Whatever the damage: no traceback, only the documented exit codes (0 ok, 1 a check
failed, 2 unusable input), within bounded time and memory; a number outside its range is refused
naming the range."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from number_inputs import NUMERIC_OPTIONS, NUMERIC_SETTINGS, variable
from tests_paths import EXAMPLES, REPO, SAMPLES

from safeforge.cli.main import build_parser
from safeforge.settings import Settings, SettingsError

LIMITED = (
    "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)
NOISE = st.binary(min_size=1, max_size=12) | st.sampled_from(
    [b"(", b")", b"((", b"))", b" - ", b"?x", b":action", b"(and", b"\x00", b"\xff\xfe", b"\n", b'"', b"{", b"[" * 200]
)
FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@st.composite
def damaged(draw, original: bytes) -> bytes:
    """`original` with a few cuts, insertions and duplications."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["cut", "insert", "duplicate"]))
        if kind == "cut":
            data[at : at + draw(st.integers(1, 80))] = b""
        elif kind == "insert":
            data[at:at] = draw(NOISE)
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 200))]
    return bytes(data)


def _safeforge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LIMITED, *args], capture_output=True, timeout=120, cwd=REPO)


def _assert_clean(done: subprocess.CompletedProcess) -> None:
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode in (0, 1, 2), stderr[-2000:]
    assert "Traceback" not in stderr and "unexpected failure" not in stderr, stderr[-2000:]


def _task_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "task"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(EXAMPLES / "bathroom_bleach_bucket", folder)
    return folder


BLEACH = EXAMPLES / "bathroom_bleach_bucket"


@FUZZ
@given(
    name=st.sampled_from(["safety_domain.pddl", "safety_problem.pddl", "metadata.json"]),
    data=st.data(),
)
def test_damaged_task_files(tmp_path, name, data):
    folder = _task_copy(tmp_path)
    (folder / name).write_bytes(data.draw(damaged((BLEACH / name).read_bytes())))
    _assert_clean(_safeforge("task", "check", str(folder), "--time-limit", "10"))
    _assert_clean(_safeforge("task", "validate", str(folder), "--plan", "(go_to bathroom utility_closet)"))


@FUZZ
@given(data=st.data())
def test_damaged_plans_files(tmp_path, data):
    plans = BLEACH / "metadata.json"
    text = b"\n".join(line.split(b'": "', 1)[-1].rstrip(b'",') for line in plans.read_bytes().splitlines() if b"(" in line)
    plans_file = tmp_path / "plans.txt"
    plans_file.write_bytes(data.draw(damaged(text)))
    _assert_clean(_safeforge("task", "validate", str(BLEACH), "--plans-file", str(plans_file)))


SOURCE_FILES = {
    "neiss": SAMPLES / "neiss" / "holdout_labeled.csv",
    "normbank": SAMPLES / "normbank" / "NormBank.csv",
}


@FUZZ
@given(source=st.sampled_from(sorted(SOURCE_FILES)), data=st.data())
def test_damaged_source_files(tmp_path, source, data):
    original = SOURCE_FILES[source]
    target = tmp_path / source / original.name
    target.parent.mkdir(exist_ok=True)
    for companion in original.parent.iterdir():  # e.g. NEISS's codebook beside its data
        if companion.is_file() and companion != original and companion.suffix == ".csv":
            shutil.copy(companion, target.parent / companion.name)
    target.write_bytes(data.draw(damaged(original.read_bytes()[:20_000])))
    _assert_clean(_safeforge("sources", "show", source, "--path", str(target), "--limit", "3", "--json"))


# -- numbers: every option and setting that takes one (found by walking them), given drawn text ---------

NUMBER_TEXT = st.one_of(
    st.integers(-(10**40), 10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "-inf", "1e309", "-0", "0x10", "1_000", "\uff11", "\u00bd", "", " 5", "5 ", "9" * 5000, "1e-400"]),
    st.text(max_size=12),
)
ARGUMENT_TEXT = NUMBER_TEXT.filter(lambda text: "\x00" not in text)  # what a command line or environment can carry


@settings(max_examples=200, deadline=None)
@given(option=st.sampled_from(NUMERIC_OPTIONS), text=NUMBER_TEXT)
def test_numeric_options_take_only_numbers_in_their_range(option, text):
    words, action = option
    allowed = action.type.range
    try:
        value = action.type(text)
    except argparse.ArgumentTypeError as refused:  # the command line exits 2, naming the range
        assert allowed.describe() in str(refused)
        with pytest.raises(SystemExit) as exit_:
            build_parser(words).parse_args([*words, f"{action.option_strings[-1]}={text}"])
        assert exit_.value.code == 2
    else:
        assert allowed.holds(value)


@settings(max_examples=200, deadline=None)
@given(setting=st.sampled_from(NUMERIC_SETTINGS), text=NUMBER_TEXT)
def test_numeric_settings_take_only_numbers_in_their_range(setting, text):
    allowed = Settings.range_of(setting)
    try:
        loaded = getattr(Settings.load({variable(setting): text}), setting)
    except SettingsError as exc:
        assert str(exc).startswith(f"{variable(setting)}=")
    else:
        assert not text.strip() or allowed.holds(loaded)  # an empty variable is unset: the default


@FUZZ
@given(setting=st.sampled_from([s for s in NUMERIC_SETTINGS if s.startswith("max_")]), text=ARGUMENT_TEXT, data=st.data())
def test_the_command_with_drawn_limits_and_time_limits_ends_cleanly(tmp_path, setting, text, data):
    """Through the installed command: a drawn input limit (SAFEFORGE_MAX_*) and a drawn --time-limit."""
    folder = _task_copy(tmp_path)
    limit = data.draw(ARGUMENT_TEXT)
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, "task", "check", str(folder), "--time-limit", limit],
        capture_output=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, variable(setting): text},
    )
    _assert_clean(done)
