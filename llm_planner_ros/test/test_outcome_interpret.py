"""How a goal's end says whether it is the goal asked: approval 'plan' confirms an interpreted goal
as an executing goal does, and approves nothing unasked; conditions given up after a confirmation
are not reported reached; a plan-only or fallback end names what the world lacks; an approved
plan's end gets the notes every other goal's does. The gate alone, a fixed interpretation with the
real embedder, planner and simulator, and the real embedded model."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import GoalStatus, TerminationReason
from llm_planner_ros.interpretation.conditions import Condition
from llm_planner_ros.interpretation.confidence import Judgement
from llm_planner_ros.interpretation.interpreter import Interpretation
from llm_planner_ros.planning.interpreted import InterpretSettings
from llm_planner_ros.planning.worlds import load_world
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.safety.gate import ApprovalUnavailable, SafetyGate, SafetySettings
from llm_planner_ros.safety.policy import SkillPolicy
from llm_planner_ros.wiring import ServiceConfig, compose

TV_ON = Condition("The television is on.", ("(on television)",))
FLOOR_OPEN = Condition("The floor is open.", ("(open floor)",))   # no plan reaches it, even alone
TV_PLUGGED = Condition("The television is plugged in.", ("(plugged_in television)",))


class Recording:
    """The simulator, recording what reaches it."""

    def __init__(self):
        self.inner, self.received = VirtualHomeExecutor(), []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, skill):
        self.received.append(skill)
        return self.inner.execute(skill)


def operator(asked: list, answer=(True, "")):
    def approver(skills, kind, stop, scripts=None, alternatives=(), confidence=float("nan"), why=""):
        asked.append((kind, why))
        return answer
    return approver


def test_no_approval_is_given_unasked():
    """approval 'step' or 'plan' with nobody to ask ends the goal unconfirmed; nothing runs."""
    world = load_world()
    step = SafetyGate(Recording(), SkillPolicy(), SafetySettings(approval="step"), world.skill_problem)
    with pytest.raises(ApprovalUnavailable, match=r"needs an operator's approval \(approval: step\).*no approver"):
        step.execute(make_skill("WALK", ["television"]))
    assert step.inner.received == [] and ApprovalUnavailable.reason is TerminationReason.UNCONFIRMED
    plan = SafetyGate(Recording(), SkillPolicy(), SafetySettings(approval="plan"), world.skill_problem)
    with pytest.raises(ApprovalUnavailable, match=r"the plan of 1 steps needs an operator's approval"):
        plan.approve([make_skill("WALK", ["television"])], "plan")


@pytest.fixture(scope="module")
def fixed(embedder, demos):
    """Services whose interpretation is fixed (no LLM, so its confidence is unknown: unsure), each
    over the real world, Fast Downward and the in-process simulator."""
    made: dict = {}

    def build(conditions, confirm="unsure", approval="none", approver=None, dry_run=False, confidence=None):
        if confirm not in made:
            made[confirm] = compose(ServiceConfig.of(InterpretSettings(
                interpret_from="text", interpret_confirm=confirm, interpret_relax_plans=1)),
                llm=None, embedder=embedder, demos=demos)
        service = made[confirm]
        interpreter = service.parts.interpreted().interpreter
        interpreter.retrieve = lambda task, world, hold_out=(): Interpretation(
            [task], [], list(conditions), judgement=Judgement(confidence, ()))
        service.safety, service.approver = SafetySettings(approval=approval, dry_run=dry_run), approver
        return service
    return build


def run(service, task="Watch TV", **kw):
    return service.plan_with_report(parse_request(task=task, method="interpret", execute=True, **kw),
                                    lambda e: None, CancelToken())[0]


def test_what_is_left_of_a_confirmed_goal_once_conditions_are_given_up_is_confirmed_again(fixed):
    asked: list = []
    result = run(fixed([TV_ON, FLOOR_OPEN, TV_PLUGGED], approver=operator(asked)))
    # the operator confirmed the whole goal, of which a part had no plan and was given up: what is
    # left is a goal nobody confirmed, so it is asked again before anything runs
    assert [kind for kind, _ in asked] == ["goal", "goal"], asked
    assert "conditions of the goal had no plan and were given up (The floor is open." in asked[1][1], asked
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert result.goal_status is GoalStatus.MET and result.steps and all(s.executed for s in result.steps)
    declined: list = []
    result = run(fixed([TV_ON, FLOOR_OPEN, TV_PLUGGED],
                       approver=lambda *a, **k: operator(declined, (len(declined) == 0, "not that"))(*a, **k)))
    assert len(declined) == 2 and result.termination_reason is TerminationReason.GOAL_DECLINED, result.detail
    assert not result.steps and "given up" in result.detail, result.detail


def test_a_goal_found_sure_whose_conditions_are_given_up_is_not_run_unasked(fixed):
    """Sure of the whole goal, nobody asked; a part had no plan and was given up. What is left
    was never found sure: asked (unconfirmed with nobody to ask), and under interpret_confirm
    never run but not reported reached (it used to be goal_reached)."""
    asked: list = []
    result = run(fixed([TV_ON, FLOOR_OPEN, TV_PLUGGED], approver=operator(asked), confidence=0.99))
    assert [kind for kind, _ in asked] == ["goal"] and "were given up" in asked[0][1], asked
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    result = run(fixed([TV_ON, FLOOR_OPEN, TV_PLUGGED], confidence=0.99))   # nobody to ask
    assert result.termination_reason is TerminationReason.UNCONFIRMED and not result.steps, result.detail
    assert "The floor is open." in result.detail and "proposed goal: 'The television is on." in result.detail, \
        result.detail
    result = run(fixed([TV_ON, FLOOR_OPEN, TV_PLUGGED], confirm="never", confidence=0.99))
    assert result.goal_status is GoalStatus.MET and result.steps, result.detail
    assert result.termination_reason is TerminationReason.END_OF_PLAN, result.detail
    assert "given up after it was found sure (confidence 0.99): The floor is open." in result.detail, result.detail
    asked.clear()
    result = run(fixed([TV_ON, TV_PLUGGED], approver=operator(asked), confidence=0.99))   # nothing given up
    assert asked == [] and result.termination_reason is TerminationReason.GOAL_REACHED, result.detail


def test_whole_plan_approval_confirms_an_unsure_interpreted_goal_first(fixed):
    # nobody to ask: the goal ends unconfirmed before anything is planned or approved
    result = run(fixed([TV_ON, TV_PLUGGED], approval="plan"))
    assert result.termination_reason is TerminationReason.UNCONFIRMED and not result.steps, result.detail
    assert "nobody can be asked (no approver)" in result.detail and result.executing
    # an operator is asked to confirm the goal, then to approve its plan; it runs and is reached
    asked: list = []
    result = run(fixed([TV_ON, TV_PLUGGED], approval="plan", approver=operator(asked)))
    assert [kind for kind, _ in asked] == ["goal", "plan"] and "confidence is unknown" in asked[0][1]
    assert result.termination_reason is TerminationReason.GOAL_REACHED and result.success, result.detail
    # never asking: an approved plan reaches a goal nobody vouched for, which is not reported reached
    asked.clear()
    result = run(fixed([TV_ON, TV_PLUGGED], confirm="never", approval="plan", approver=operator(asked)))
    assert [kind for kind, _ in asked] == ["plan"]
    assert result.termination_reason is TerminationReason.END_OF_PLAN and result.goal_status is GoalStatus.MET
    assert "may not be the goal asked" in result.detail, result.detail


def test_an_approved_plan_ends_as_every_goal_does(fixed):
    """The dry-run note, and a goal with nothing to approve (it holds) that was to execute."""
    asked: list = []
    result = run(fixed([TV_ON, TV_PLUGGED], confirm="never", approval="plan", approver=operator(asked),
                       dry_run=True))
    assert result.detail.startswith("dry run:") and result.steps, result.detail
    service = fixed([TV_ON], approval="plan", approver=operator(asked))
    request = parse_request(task="Watch TV", method="pddl", execute=True, goal_conditions=["(off television)"])
    held = service.plan(request, lambda e: None, CancelToken())
    assert held.success and not held.steps, held.detail
    assert held.executing and held.goal_status is GoalStatus.MET


@pytest.fixture(scope="module")
def default_service(smollm2, embedder, demos):
    return compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos)


def test_a_task_naming_what_the_world_lacks_is_named_plan_only_and_under_plan_approval(default_service):
    """The embedded model reads "Read a book" as the bookshelf's; the scene has no book."""
    default_service.safety, default_service.approver = SafetySettings(), None
    result = default_service.plan(parse_request(task="Read a book", method="interpret"), lambda e: None,
                                  CancelToken())
    assert "lacks: 'book'" in result.detail, result.detail   # plan only: nobody is asked, and it says so
    if result.termination_reason.is_success:
        assert "may not be the goal asked" in result.detail and "unconfirmed" in result.detail, result.detail
    default_service.safety = SafetySettings(approval="plan")
    result = run(default_service, "Read a book")
    assert result.termination_reason is TerminationReason.UNCONFIRMED and not result.steps, result.detail
    assert "lacks: 'book'" in result.detail


def test_an_empty_interpretation_is_decided_before_the_fallback_runs(smollm2, embedder, demos):
    """No sentence of the model's reaches a 0.99 cosine: the goal is empty, and the task names a
    cat the scene lacks; the fallback would plan it from the task text, so nobody asked, it ends
    unconfirmed naming the cat, and nothing runs."""
    service = compose(ServiceConfig.of(InterpretSettings(interpret_from="llm", interpret_threshold=0.99)),
                      llm=smollm2, embedder=embedder, demos=demos)
    result = run(service, "Feed the cat")
    assert result.termination_reason is TerminationReason.UNCONFIRMED and not result.steps, result.detail
    assert "lacks: 'cat'" in result.detail and "no goal was interpreted" in result.detail, result.detail
