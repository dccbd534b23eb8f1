"""Meaning read with WordNet (`safeforge.lexicon`): what a type names, what an action's verb does, how a
name splits into words, and where the database comes from (a clear error when there is none; the
reader's own folder made once and read back)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from busy_machine import HANG_S

from safeforge.lexicon import WORDNET_ENV, LexiconUnavailable, answer_words, database_folder, name_words, type_kind, verb_kind

TYPES = {
    # things, whatever their modifier says (issue #50: area_rug and room_heater were read as places)
    "area_rug": "thing",
    "runner_rug": "thing",
    "place_mat": "thing",
    "floor": "thing",
    "table": "thing",
    "knife": "thing",
    "stove": "thing",
    "window": "thing",
    "room_heater": "device",
    "kitchen_timer": "device",
    "heater": "device",
    # places
    "room": "place",
    "kitchen": "place",
    "location": "place",
    "zone": "place",
    "waypoint": "place",
    "position": "place",
    # times
    "minute": "time",
    "interval": "time",
    "moment": "time",
    # people and the robot
    "child": "person",
    "person": "person",
    "robot": "robot",
}


@pytest.mark.parametrize("type_name, kind", TYPES.items())
def test_what_a_type_names(type_name, kind):
    reading = type_kind(type_name)
    assert reading.kind == kind, reading.evidence
    assert f"`{reading.word}`" in reading.evidence


VERBS = {
    # acting on something: a correct mitigation's verb (issue #50: dry, flatten, turn and press were read as waiting)
    "dry_floor": "acts",
    "flatten_edge": "acts",
    "turn_to_wall": "acts",
    "press_crossing_button": "acts",
    "push_on_level_path": "acts",
    "cover_pot": "acts",
    "pick_up": "acts",
    "go_to": "acts",  # go, not WordNet's go_to (attend)
    "close_door": "acts",
    "unplug": "acts",
    "hold_position": "being",  # a verb of being (WordNet's verb.stative)
    "keep": "being",
    "double_check_floor": "checks",  # WordNet's double-check
    "stand_by": "waits",
    # letting time pass
    "wait": "waits",
    "wait_for_end": "waits",
    "let_dry": "waits",
    "pause": "waits",
    "rest": "waits",
    "idle": "waits",
    "stay": "waits",
    # neutral messages
    "notify": "tells",
    "announce": "tells",
    "tell": "tells",
    "warn_child": "tells",
    "remind": "tells",
    "beep": "tells",
    # checks
    "measure_temperature": "checks",
    "verify_id": "checks",
    "check_stove": "checks",
    "authorize": "checks",
    "inspect": "checks",
    "monitor": "checks",
    # asking a person to act
    "ask_to_leave": "asks",
    "ask_consent": "asks",
    "request_consent": "asks",
}


@pytest.mark.parametrize("action, kind", VERBS.items())
def test_what_an_actions_verb_does(action, kind):
    reading = verb_kind(action)
    assert reading.kind == kind, reading.evidence


def test_each_reading_names_its_evidence():
    assert verb_kind("let_dry").evidence.startswith("`let` (let.v.01: make it possible through a specific action or lack of action")
    assert type_kind("area_rug").evidence.startswith("`rug` (rug.n.01: floor covering")
    assert type_kind("minute").evidence.endswith("is a kind of time_unit: a time")


@pytest.mark.parametrize(
    "name, words",
    [
        ("surge_protector", ["surge_protector"]),  # WordNet's compound kept whole
        ("place_mat_2", ["place_mat"]),
        ("carefullift", ["careful", "lift"]),  # two words written together
        ("mudguard", ["mudguard"]),  # a word WordNet knows is not split
        ("museum_guard", ["museum", "guard"]),
        ("robot-at", ["robot", "at"]),
        ("x1", ["x"]),
    ],
)
def test_a_name_splits_into_wordnets_words(name, words):
    assert name_words(name) == words


def _without_wordnet(tmp_path) -> dict[str, str]:
    return {**os.environ, WORDNET_ENV: str(tmp_path / "nothing-here")}


def test_no_database_is_a_clear_error_saying_how_to_install_one(tmp_path, monkeypatch):
    monkeypatch.setenv(WORDNET_ENV, str(tmp_path / "nothing-here"))
    with pytest.raises(LexiconUnavailable) as raised:
        database_folder()
    message = str(raised.value)
    assert str(tmp_path / "nothing-here") in message and "apt-get install wordnet-base" in message and "data.noun" in message


def test_a_named_folder_is_prepared_once_and_read_back_in_another_process(tmp_path):
    """A folder named by SAFEFORGE_WORDNET is copied into the cache with the lexicographer table and the
    reader's lemma index; a second process reads that index back and reads words alike."""
    source = database_folder()
    named = tmp_path / "wordnet"
    named.mkdir()
    for entry in source.iterdir():
        if entry.is_file():
            (named / entry.name).symlink_to(entry)  # our copy is made of its files, not of its links
    env = {**os.environ, WORDNET_ENV: str(named), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    probe = "from safeforge.lexicon import type_kind; print(type_kind('area_rug').kind)"
    first = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    (prepared,) = (tmp_path / "cache" / "safeforge").iterdir()
    assert {"lexnames", "safeforge_lemma_index.pickle", "data.noun"} <= {p.name for p in prepared.iterdir()}
    assert not any(p.is_symlink() for p in prepared.iterdir())
    index_time = (prepared / "safeforge_lemma_index.pickle").stat().st_mtime_ns
    second = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert first.stdout == second.stdout == "thing\n"
    assert (prepared / "safeforge_lemma_index.pickle").stat().st_mtime_ns == index_time  # read, not made again


def test_a_check_without_wordnet_fails_naming_the_remedy(tmp_path):
    probe = "from safeforge.task.rules import answer_words_in; answer_words_in('safe_spot')"
    env = {**_without_wordnet(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert done.returncode != 0 and "LexiconUnavailable" in done.stderr and "wordnet-base" in done.stderr


def test_readings_from_many_threads_at_once_agree_with_one_process_reading_alone(tmp_path):
    """NLTK's reader shares its files between threads; generation checks records in threads. Words never
    read before in this process, read by eight threads at once, give what a fresh process reading them
    one by one gives."""
    import json
    import threading

    words = [f"{a}_{b}" for a in ("unhurried", "wipe", "benign", "ladle", "softly", "rug", "secure", "kettle")
             for b in ("shelf", "gently", "tray", "spill", "idle", "warn", "lamp", "cloth")]  # fmt: skip
    probe = (
        "import json, sys; from safeforge.lexicon import answer_words, type_kind, verb_kind; "
        "print(json.dumps([[r.evidence for r in answer_words(w)] + [type_kind(w).kind, verb_kind(w).kind] for w in sys.argv[1:]]))"
    )
    alone = json.loads(subprocess.run([sys.executable, "-c", probe, *words], capture_output=True, text=True, check=True).stdout)
    results: dict[int, list] = {}
    start = threading.Barrier(8)

    def read(index: int) -> None:
        start.wait()
        results[index] = [[r.evidence for r in answer_words(w)] + [type_kind(w).kind, verb_kind(w).kind] for w in words[index::8]]

    threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_S)
    together = [results[i % 8][i // 8] for i in range(len(words))]
    assert together == alone
