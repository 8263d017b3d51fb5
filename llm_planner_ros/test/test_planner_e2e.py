"""End to end on the embedded defaults: the real SmolLM2 GGUF, ONNX translation, scene bank."""
from __future__ import annotations

from llm_planner_ros.cli import main as cli_main
from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.core.types import GoalStatus, PlanResult, PlanStep, Skill, TerminationReason
from llm_planner_ros.planning.plan_check import check_plan
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks
from llm_planner_ros.wiring import ServiceConfig, compose


def test_embedded_plan_uses_only_admissible_skills(smollm2, embedder):
    service = compose(ServiceConfig.of(PlannerSettings(epsilon=0.0, max_steps=6)), llm=smollm2, embedder=embedder)
    events = []
    result = service.plan(parse_request(task="Wash hands", method="translated"), events.append, CancelToken())
    bank = set(service.parts.index_for("TrimmedTestScene1", "scene").bank.skills)
    assert result.steps, result.detail
    assert all(step.skill in bank for step in result.steps)
    assert [e.step.index for e in events] == list(range(1, len(result.steps) + 1))
    assert all(line.startswith("[") for line in result.program)
    assert result.checked and (result.success or "not trusted: step" in result.detail), result.detail


def test_a_plan_only_plan_is_trusted_only_when_it_runs_on_the_world_model(smollm2, embedder):
    """Plan-only goals: an LLM's steps are replayed on the world model, and a plan whose step
    fails there, or after which the goal does not hold, is not a success; Fast Downward's plans
    are found in the model."""
    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder)
    given = service.plan(parse_request(task="Use computer", method="pddl", goal_conditions=("(on computer)",)),
                         lambda e: None, CancelToken())
    assert given.success and given.checked and given.steps, given.detail

    def planned(*skills: Skill) -> PlanResult:
        steps = [PlanStep(i + 1, skill.script(), skill) for i, skill in enumerate(skills)]
        return PlanResult(TerminationReason.LOW_SCORE, "the LLM ended", steps)

    walk, switch_on = Skill("WALK", ("computer",)), Skill("SWITCHON", ("computer",))
    assert not planned(walk, switch_on).success            # never run on a model: not trusted
    runs = check_plan(planned(walk, switch_on), VirtualHomeExecutor)
    assert runs.success and runs.checked, runs.detail
    fails = check_plan(planned(walk, Skill("PUTIN", ("computer", "fridge"))), VirtualHomeExecutor)
    assert not fails.success and fails.steps[1].error.message and fails.detail.startswith("not trusted: step 2")
    task = next(t for t in eai_tasks() if t.task == "Watch TV")
    unmet = check_plan(planned(Skill("WALK", ("bathroom",))),
                       lambda: VirtualHomeExecutor(graph=task.graph, goal=task.goal))
    assert unmet.goal_status is GoalStatus.NOT_MET and not unmet.success and "goal does not hold" in unmet.detail


def test_cli_plans_on_the_embedded_defaults(capsys):
    assert cli_main(["plan", "Turn on light", "--max-steps", "4"]) == 0
    out = capsys.readouterr().out
    assert "llm: llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf" in out
    assert "end: " in out and "tok/s" in out


def test_cli_rejects_bad_input(capsys):
    assert cli_main(["plan", "   "]) == 2
    assert "task is empty" in capsys.readouterr().err
