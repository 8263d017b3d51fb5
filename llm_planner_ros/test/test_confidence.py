"""Issue 37: a calibrated confidence, and a goal below it that waits for an operator.

The calibration's parts on small data (no model), then the shipped model on the
``mobile_manipulator`` profile (its 14 example goals calibrate the confidence): a goal below the
threshold never runs unasked; confirmed it runs and is reached; declined, unanswered or with
nobody to ask it ends with its own reason and nothing executed; a goal that already holds ends
``already_done``; with interpret_confirm never an unsure goal that is reached is not reported as
the goal asked."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from llm_planner_ros.interpretation.confidence import Calibration, Candidate, Evidence, Labelled, Logistic, auroc
from llm_planner_ros.wiring import ServiceConfig, compose


def test_auroc_and_logistic():
    assert auroc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auroc([0.1, 0.9], [True, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert math.isnan(auroc([0.5], [True]))
    x = np.array([[0.0], [0.1], [0.2], [0.8], [0.9], [1.0]])
    fit = Logistic(x, np.array([0, 0, 0, 1, 1, 1.0]))
    p = fit([[0.05], [0.5], [0.95]])
    assert p[0] < 0.5 < p[2] and p[0] < p[1] < p[2]


def _labelled(task: str, cosine: float, right: bool) -> Labelled:
    """A demonstration whose kept condition has ``cosine`` and whose plan reached its goal or not."""
    kept = Candidate("kept", cosine, -1.0, 0.0, ("said", "text"), True)
    other = Candidate("other", cosine - 0.2, -3.0, 0.3, ("text",), False)
    return Labelled(task, Evidence((kept, other), 0.5, 1.0), ("kept",) if right else ("missing",), right)


def test_the_query_task_never_vouches_for_itself():
    data = [_labelled(f"task {i}", 0.2 + 0.1 * i, i >= 3) for i in range(6)]
    calibration = Calibration(data)
    sure = _labelled("new", 0.9, True).evidence
    unsure = _labelled("new", 0.1, True).evidence
    high, low = calibration.judge(sure).goal, calibration.judge(unsure).goal
    assert high is not None and low is not None and high > 0.5 > low
    # holding a task out refits without it: here the one that makes the data have both outcomes
    few = Calibration(data[2:] + [_labelled("task 6", 0.8, True)])   # one wrong (task 2), four right
    assert few.judge(sure).goal is not None
    assert few.judge(sure, hold_out=["TASK 2 "]).goal is None   # the rest all agree: no evidence to weigh
    # each kept condition has its own probability
    judged = calibration.judge(sure)
    assert [text for text, _ in judged.conditions] == ["kept"] and 0.0 < judged.conditions[0][1] < 1.0
    assert Calibration([]).judge(sure).goal is None


def test_a_calibration_made_by_other_code_is_made_again(tmp_path, monkeypatch):
    """The calibration file's name holds a digest of the code that labels it: a change to that
    code (here one line in a copy of the package) gives another file, not the one kept."""
    import shutil

    from llm_planner_ros.interpretation import interpreter

    package = tmp_path / "llm_planner_ros"
    shutil.copytree(Path(interpreter.__file__).parents[1], package,
                    ignore=shutil.ignore_patterns("__pycache__", "console", "ros"))
    copy = package / "interpretation" / "interpreter.py"
    monkeypatch.setattr(interpreter, "__file__", str(copy))
    digests = []
    for change in ("", "\n# another line\n"):
        copy.write_text(copy.read_text() + change)
        interpreter.calibrating_code.cache_clear()
        digests.append(interpreter.calibrating_code())
    (package / "ros" / "node.py").parent.mkdir(exist_ok=True)
    (package / "ros" / "node.py").write_text("# a node's change does not touch the labels\n")
    interpreter.calibrating_code.cache_clear()
    digests.append(interpreter.calibrating_code())
    monkeypatch.undo()
    interpreter.calibrating_code.cache_clear()
    assert digests[0] != digests[1] == digests[2]


@pytest.fixture
def profile_service(smollm2, embedder, demos):
    """A service over the mobile_manipulator profile, built with the given goal settings and approver."""
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.planning.interpreted import InterpretSettings
    from llm_planner_ros.profiles.loader import load_profile, shipped

    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))

    def build(approver=None, **settings):
        return compose(ServiceConfig.of(InterpretSettings(**settings)), llm=smollm2, embedder=embedder, demos=demos,
                       approver=approver, executor_factory=lambda scene, task: executor,
                       robot_world=lambda executes: executor)
    return build, executor


def _plan(service, task: str):
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request

    return service.plan_with_report(parse_request(task=task, method="interpret", execute=True), lambda e: None,
                                    CancelToken())


def test_a_goal_below_the_threshold_never_runs_unasked(profile_service):
    from llm_planner_ros.core.types import TerminationReason

    build, executor = profile_service
    before = executor.world_state().facts
    # nobody to ask: the goal ends unconfirmed, the proposal in its detail, nothing executed
    result, report = _plan(build(interpret_confidence=1.0), "Put the apple in the fridge")
    assert result.termination_reason is TerminationReason.UNCONFIRMED and not result.success, result.detail
    assert "proposed goal" in result.detail and "(in apple_15 fridge_7)" in result.detail
    assert not result.steps and executor.world_state().facts == before
    assert 0.0 <= result.confidence <= 1.0 and report.stats["asked"]   # calibrated on the profile's examples
    # the operator is asked with the goal's lines, its words, its alternatives and its confidence
    asked = []

    def operator(answer):
        def approver(skills, kind, stop, scripts=None, alternatives=(), confidence=math.nan, why=""):
            asked.append((kind, list(scripts or ()), [s.text for s in skills], list(alternatives), confidence))
            return answer
        return approver
    result, _ = _plan(build(operator((False, "not the apple")), interpret_confirm="always"),
                      "Put the apple in the fridge")
    assert result.termination_reason is TerminationReason.GOAL_DECLINED and "not the apple" in result.detail
    kind, scripts, texts, alternatives, confidence = asked[-1]
    assert kind == "goal" and scripts == ["(in apple_15 fridge_7)"] and texts and len(alternatives) <= 3
    assert confidence == pytest.approx(result.confidence)
    assert not result.steps and executor.world_state().facts == before
    result, _ = _plan(build(operator(None), interpret_confirm="always"), "Put the apple in the fridge")
    assert result.termination_reason is TerminationReason.CONFIRMATION_TIMEOUT and not result.steps
    # confirmed, it runs and is the goal asked; then it already holds: done, with no step
    result, _ = _plan(build(operator((True, "")), interpret_confirm="always"), "Put the apple in the fridge")
    assert result.termination_reason is TerminationReason.GOAL_REACHED and result.success, result.detail
    assert result.steps and all(s.executed for s in result.steps)
    result, _ = _plan(build(operator((True, "")), interpret_confirm="always"), "Put the apple in the fridge")
    assert result.termination_reason is TerminationReason.ALREADY_DONE and result.success, result.detail
    assert not result.steps and "already holds" in result.detail
    # never asking, an unsure goal that is reached is not reported as the goal asked
    executor.reset()
    result, _ = _plan(build(interpret_confirm="never", interpret_confidence=1.0), "Put the apple in the fridge")
    assert result.termination_reason is TerminationReason.END_OF_PLAN and result.steps, result.detail
    assert "may not be the goal asked" in result.detail
