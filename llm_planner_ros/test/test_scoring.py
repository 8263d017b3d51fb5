"""Ranking and termination maths on fixed numbers."""
from __future__ import annotations

import math

import pytest

from llm_planner_ros.planning import scoring


def test_huang_score():
    assert scoring.huang_score(0.9, -0.5, 0.3) == pytest.approx(0.75)
    assert scoring.huang_score(0.9, math.nan, 0.3) == pytest.approx(0.9)   # no log-probs: C only


def test_raman_score():
    assert scoring.raman_score(0.6, -0.5) == pytest.approx(0.8 * math.exp(-0.5))
    assert scoring.raman_score(-1.0, 0.0) == 0.0
    assert scoring.raman_score(1.0, math.nan) == pytest.approx(1.0)
    assert 0.0 < scoring.raman_score(0.2, -3.0) < 1.0


def test_score_dispatch():
    assert scoring.score("huang", 0.5, -1.0, 0.3) == pytest.approx(0.2)
    assert scoring.score("raman", 0.5, -1.0, 0.3) == pytest.approx(0.75 * math.exp(-1.0))


@pytest.mark.parametrize("text,empty", [("", True), ("   ", True), ("...", True), ("\u3002", True),
                                        ("42", True), (" walk to kitchen", False), ("- A", False)])
def test_empty_samples(text, empty):
    assert scoring.is_empty_sample(text) is empty


def test_more_than_half_empty_terminates():
    assert scoring.mostly_empty(["", "", "a"]) is True
    assert scoring.mostly_empty(["", "a"]) is False      # exactly half is not more than half
    assert scoring.mostly_empty(["a", "b", ""]) is False


def test_best_candidate_prefers_score_then_earlier_sample():
    c = [scoring.Candidate(0, "a", 1, 0.5, -1, 0.2), scoring.Candidate(1, "b", 2, 0.9, -1, 0.6),
         scoring.Candidate(2, "c", 3, 0.9, -1, 0.6)]
    assert scoring.best_candidate(c).sample_index == 1
    assert scoring.best_candidate([]) is None


def test_rank_orders_best_first_with_ties_to_the_earlier_sample():
    c = [scoring.Candidate(2, "c", 3, 0.9, -1, 0.6), scoring.Candidate(0, "a", 1, 0.5, -1, 0.2),
         scoring.Candidate(1, "b", 2, 0.9, -1, 0.6)]
    assert [x.sample_index for x in scoring.rank(c)] == [1, 2, 0]
