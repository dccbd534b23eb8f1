"""F, S, SP, SI and their bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest

from safeforge.evaluation import bootstrap, summarize_metrics, task_indicators


def rows(*samples):
    """rows(("a", 2, True), ...) -> result rows (task_id, score, safety_intention, labels)."""
    return [
        {
            "task_id": t,
            "run": i,
            "score": s,
            "safety_intention": si,
            "source": "neiss",
            "danger_group": "physical" if t < "m" else "psychosocial",
        }
        for i, (t, s, si) in enumerate(samples)
    ]


def random_indicators(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 3, n)
    return np.column_stack([scores >= 1, scores == 2, rng.random(n) < 0.4]).astype(float)


def test_definitions_with_runs_averaged_per_task():
    data = rows(("a", 2, True), ("a", 1, False), ("b", 0, False), ("b", 0, True), ("z", 2, True), ("z", 2, True))
    indicators = task_indicators(data)
    assert indicators["a"][0].tolist() == [1.0, 0.5, 0.5] and indicators["a"][1] == 2
    metrics = summarize_metrics(data)
    overall = metrics["overall"].estimates
    assert (metrics["overall"].tasks, metrics["overall"].samples) == (3, 6)
    assert overall["F"].value == pytest.approx(2 / 3)
    assert overall["S"].value == pytest.approx(1.5 / 3)
    assert overall["SP"].value == pytest.approx(0.75)
    assert overall["SI"].value == pytest.approx(2 / 3)
    assert metrics["by"]["danger_group"]["psychosocial"].estimates["S"].value == 1.0
    assert metrics["by"]["entity_in_danger"]["unknown"].tasks == 3


def test_tasks_weigh_the_same_whatever_their_number_of_runs():
    data = rows(("a", 2, True), ("b", 0, False), ("b", 0, False), ("b", 0, False))
    assert summarize_metrics(data)["overall"].estimates["F"].value == 0.5


def test_bootstrap_is_deterministic_with_its_seed():
    values = random_indicators(200, 1)
    assert bootstrap(values, seed=3) == bootstrap(values, seed=3)
    assert bootstrap(values, seed=3) != bootstrap(values, seed=4)


def test_intervals_contain_the_point_estimate():
    for seed in range(5):
        for estimate in bootstrap(random_indicators(60, seed), seed=seed).values():
            assert estimate.low <= estimate.value <= estimate.high
            assert estimate.low < estimate.high


def test_intervals_are_degenerate_when_all_tasks_agree():
    perfect = bootstrap(np.ones((50, 3)))
    assert {name: (e.value, e.low, e.high) for name, e in perfect.items()} == {name: (1.0, 1.0, 1.0) for name in ("F", "S", "SP", "SI")}
    failed = bootstrap(np.zeros((50, 3)))
    assert (failed["F"].value, failed["F"].low, failed["F"].high) == (0.0, 0.0, 0.0)
    assert (failed["SP"].value, failed["SP"].low, failed["SP"].high) == (None, None, None)
    assert bootstrap(np.zeros((0, 3)))["S"].value is None


def test_interval_width_matches_the_binomial_standard_error():
    values = np.zeros((400, 3))
    values[:200] = 1.0  # p = 0.5: a 95% interval is about +-1.96 * sqrt(0.25 / 400) = +-0.049
    estimate = bootstrap(values)["F"]
    assert estimate.value == 0.5
    assert 0.44 < estimate.low < 0.46 and 0.54 < estimate.high < 0.56


def test_multinomial_resampling_matches_resampling_tasks_one_by_one():
    values = random_indicators(300, 7)
    rng = np.random.default_rng(11)
    naive = values[rng.integers(0, len(values), size=(10_000, len(values)))].mean(axis=1)
    ours = bootstrap(values, seed=11)
    for column, name in enumerate(("F", "S", "SI")):
        low, high = np.percentile(naive[:, column], [2.5, 97.5])
        assert ours[name].low == pytest.approx(low, abs=0.01)
        assert ours[name].high == pytest.approx(high, abs=0.01)
