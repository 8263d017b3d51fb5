"""Goal-directed planning on the real simulator with the real planner (Fast Downward)."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.errors import CancelToken, InvalidGoal
from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.request import InvalidRequest, parse_request
from llm_planner_ros.core.types import ErrorType, GoalStatus, Skill, TerminationReason
from llm_planner_ros.pddl import fast_downward
from llm_planner_ros.pddl.domain import parse_domain
from llm_planner_ros.pddl.goals import ground_goal, parse_goal
from llm_planner_ros.pddl.problem import build_problem
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner, GoalDirectedSettings
from llm_planner_ros.planning.worlds import load_world
from llm_planner_ros.profiles.virtualhome.goals import eai_goal_spec, vocabulary
from llm_planner_ros.profiles.virtualhome.graph import from_virtualhome_graph
from llm_planner_ros.profiles.virtualhome.problem import relevant_objects
from llm_planner_ros.profiles.virtualhome.resources import domain_text
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks
from llm_planner_ros.safety.gate import SafetyGate, SafetySettings
from llm_planner_ros.safety.policy import SkillPolicy
from llm_planner_ros.wiring import ServiceConfig, compose

VH = load_world()
VOCABULARY = vocabulary()


def task(identifier: str):
    return next(t for t in eai_tasks() if t.identifier == identifier)


def run(spec, executor, **settings):
    events = []
    result = GoalDirectedPlanner(VH, GoalDirectedSettings(**settings)).plan(
        spec, SafetyGate(executor, SkillPolicy(), SafetySettings(), VH.skill_problem), events.append, CancelToken())
    return result, events


def test_problem_from_a_recorded_graph_keeps_what_the_goal_needs():
    t = task("1057_1")   # Watch TV: television 410 on and plugged in, facing it, LOOKAT|WATCH
    world = from_virtualhome_graph(t.graph)
    goal = ground_goal(eai_goal_spec(t.goal, t.graph), world, VOCABULARY)
    problem = build_problem(world, goal, "virtualhome", relevant=relevant_objects)
    assert len(world.objects) > 250 and len(world.facts) > 5000
    assert {"television_410", "character_65", "home_office_319"} <= problem.objects
    assert len(problem.objects) < 30 and problem.num_facts < 200
    assert "(on television_410)" in problem.text
    assert "(or (did_lookat television_410) (did_watch television_410))" in problem.text
    assert "television_248" not in problem.objects          # the other TV, already on, is not the goal's


def test_a_plan_meets_its_goal_on_the_instance_the_goal_names():
    t = task("1057_1")
    sim = VirtualHomeExecutor(graph=t.graph, goal=t.goal)
    result, events = run(eai_goal_spec(t.goal, t.graph), sim)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert sim.goal_met() and result.success and result.goal_status is GoalStatus.MET
    assert all(s.executed for s in result.steps) and len(events) == len(result.steps)
    assert "[SWITCHON] <television> (410)" in result.program
    assert any(line.startswith(("[WATCH]", "[LOOKAT]")) for line in result.program)


def test_the_whole_plan_is_told_before_its_first_skill_and_each_condition_ticks_as_it_comes_to_hold():
    """Issue 27: an operator asked to approve the first skill sees the plan and the conditions."""
    t = task("1057_1")
    sim = VirtualHomeExecutor(graph=t.graph, goal=t.goal)
    spec = eai_goal_spec(t.goal, t.graph)
    previews = []
    gate = SafetyGate(sim, SkillPolicy(), SafetySettings(), VH.skill_problem)
    result = GoalDirectedPlanner(VH).plan(spec, gate, lambda e: None, CancelToken(), on_plan=previews.append)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    first, last = previews[0], previews[-1]
    assert [s.script() for s in first.skills] == result.program   # the whole plan, before any step ran
    assert first.goal_conditions == tuple(spec.lines()) and len(first.conditions_met) == len(spec.lines())
    assert not all(first.conditions_met) and all(last.conditions_met)
    assert len(previews) == len(result.steps) + 1   # once planned, then after every step


def test_an_action_goal_is_compiled_into_the_problem_and_done():
    t = task("1064_1")   # Drink: HOLDS_RH water_glass, plus the action DRINK
    assert t.goal["actions"] == ["DRINK"]
    sim = VirtualHomeExecutor(graph=t.graph, goal=t.goal)
    result, _ = run(eai_goal_spec(t.goal, t.graph), sim)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert any(line.startswith("[DRINK]") for line in result.program) and sim.goal_met()
    drunk = [a for a in sim.world_state().facts if a[0] == "did_drink"]
    assert drunk and drunk[0][1].startswith("water_glass")   # the glass the goal names, not any cup


def test_goals_written_by_hand_with_class_names_and_synonyms():
    sim = VirtualHomeExecutor()
    spec = parse_goal(["(on tv)", "(facing character tv)"], ["LOOKAT|WATCH"], VOCABULARY)
    result, _ = run(spec, sim)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    world = sim.world_state()
    tv = next(a[2] for a in world.facts if a[0] == "facing" and a[2].startswith("television"))
    assert ("on", tv) in world.facts


@pytest.mark.parametrize("conditions, actions, message", [
    (["on tv"], [], "is not a literal"),
    (["(on tv"], [], "is not a literal"),
    ([], [" | "], "names no action"),
])
def test_a_malformed_goal_is_an_invalid_request_naming_it(conditions, actions, message):
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_request(task="Watch TV", method="pddl", goal_conditions=conditions, action_goals=actions)


@pytest.mark.parametrize("conditions, actions, message", [
    (["(switched_on tv)"], [], "unknown predicate 'switched_on'"),
    (["(on tv kitchen extra)"], [], "takes 1 argument"),
    ([], ["LOOKAT|TELEPORT"], "names no known action (TELEPORT)"),
])
def test_a_goal_naming_what_the_world_lacks_is_invalid_naming_it(conditions, actions, message):
    """Words are checked against the world's domain when the goal is resolved (the request alone
    does not say which world it is for)."""
    with pytest.raises(InvalidGoal, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_goal(conditions, actions, VOCABULARY)


def test_an_unknown_object_or_a_misplaced_character_is_invalid_in_the_world():
    world = VirtualHomeExecutor().world_state()
    with pytest.raises(InvalidGoal, match="unknown object 'spaceship'"):
        ground_goal(parse_goal(["(on spaceship)"], (), VOCABULARY), world, VOCABULARY)
    with pytest.raises(InvalidGoal, match="no object 'television.9999'"):
        ground_goal(parse_goal(["(on television.9999)"], (), VOCABULARY), world, VOCABULARY)
    with pytest.raises(InvalidGoal, match="'character_65' cannot be an argument of 'obj_facing'"):
        ground_goal(parse_goal(["(facing tv character)"], (), VOCABULARY), world, VOCABULARY)


class DisturbedExecutor:
    """The real simulator, with a person in the room: after the robot's first OPEN, the person
    closes it again (a real simulator step the planner did not command), and the first GRAB
    attempt fails as a robot's grasp can (nothing is executed for it)."""

    def __init__(self, inner: VirtualHomeExecutor) -> None:
        self.inner = inner
        self.closed_behind = False
        self.grasp_failed = False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, skill: Skill) -> ExecutionResult:
        if skill.action == "GRAB" and not self.grasp_failed:
            self.grasp_failed = True
            return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION, "grasp slipped", "the grasp slipped")
        result = self.inner.execute(skill)
        if result.success and skill.action == "OPEN" and not self.closed_behind:
            self.closed_behind = True
            assert self.inner.execute(Skill("CLOSE", skill.objects, skill.object_ids)).success
        return result


def test_re_planning_after_a_failed_skill_and_a_surprising_observation():
    world = VirtualHomeExecutor().world_state()
    assert {("obj_inside", "tea_2000", "microwave_297"), ("closed", "microwave_297")} <= world.facts
    sim = DisturbedExecutor(VirtualHomeExecutor())
    result, events = run(parse_goal(["(holds_rh character tea_2000)"], (), VOCABULARY), sim)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert sim.closed_behind and sim.grasp_failed and result.num_corrections >= 2, result.detail
    assert "re-planned" in result.detail and "failed: grasp slipped" in result.detail
    assert any(not e.step.executed for e in events)            # the failure was reported as it happened
    assert all(s.executed for s in result.steps)               # the result keeps the executed program


def test_a_goal_stopped_at_the_step_limit_with_its_goal_unmet_is_no_success():
    """pddl_max_steps: 1 ended 'Watch TV' after its first step with the goal not met, and the
    result said success (the action SUCCEEDED)."""
    result, events = run(parse_goal(["(on television_410)"], (), VOCABULARY), VirtualHomeExecutor(), pddl_max_steps=1)
    assert result.termination_reason is TerminationReason.MAX_STEPS, result.detail
    assert result.goal_status is GoalStatus.NOT_MET and result.executed and len(events) == 1
    assert not result.success and result.detail.startswith("the goal does not hold after the steps"), result.detail


@pytest.mark.parametrize("execute", [True, False], ids=["executing", "plan only"])
def test_a_goal_that_already_holds_ends_already_done(execute):
    sim = VirtualHomeExecutor()
    spec = parse_goal(["(plugged_in television)"], (), VOCABULARY)
    result = GoalDirectedPlanner(VH).plan(spec, sim, lambda e: None, CancelToken(), execute=execute)
    assert result.termination_reason is TerminationReason.ALREADY_DONE, result.detail
    assert not result.steps and result.success and "the goal already holds" in result.detail


def test_an_unsolvable_goal_ends_with_a_clear_reason():
    sim = VirtualHomeExecutor()
    result, _ = run(parse_goal(["(on pillow)"], (), VOCABULARY), sim)          # a pillow has no switch
    assert result.termination_reason is TerminationReason.NO_PLAN and not result.success
    assert "unsolvable" in result.detail and not result.steps
    result, _ = run(parse_goal(["(on tv)", "(off tv)"], (), VOCABULARY), sim)
    assert result.termination_reason is TerminationReason.NO_PLAN and "contradicts itself" in result.detail


def test_replan_limit_is_a_reason_with_the_last_surprise():
    class AlwaysSlips(DisturbedExecutor):
        def execute(self, skill):
            if skill.action == "GRAB":
                return ExecutionResult.failed(ErrorType.OTHER_PRECONDITION, "grasp slipped", "the grasp slipped")
            return self.inner.execute(skill)

    result, _ = run(parse_goal(["(holds_rh character tea)"], (), VOCABULARY), AlwaysSlips(VirtualHomeExecutor()),
                    pddl_max_replans=2)
    assert result.termination_reason is TerminationReason.REPLAN_LIMIT
    assert "2 re-plans used" in result.detail and "grasp slipped" in result.detail


def test_the_domain_names_a_skill_for_every_action_and_the_solver_times_out_cleanly():
    domain = parse_domain(domain_text())
    assert {"walk_to", "grab_rh", "putin", "switch_on", "watch"} <= set(domain.actions)
    assert domain.actions["putin"].skill_verb == "PUTIN" and domain.actions["putin"].skill_args == ("?a", "?b")
    assert "sit_full" in domain.unobserved
    t = task("1057_1")
    world = from_virtualhome_graph(t.graph)
    problem = build_problem(world, ground_goal(eai_goal_spec(t.goal, t.graph), world, VOCABULARY), "virtualhome",
                            relevant=relevant_objects)
    outcome = fast_downward.solve(domain.text, problem.text, time_limit_s=0.001)
    assert outcome.status == "timeout" and "no plan within" in outcome.detail


def test_plan_only_returns_the_plan_without_touching_the_world():
    t = task("1057_1")
    sim = VirtualHomeExecutor(graph=t.graph, goal=t.goal)
    before = sim.world_state()
    result = GoalDirectedPlanner(VH).plan(eai_goal_spec(t.goal, t.graph), sim, lambda e: None, CancelToken(),
                                        execute=False)
    assert result.termination_reason is TerminationReason.END_OF_PLAN and result.steps
    assert not any(s.executed for s in result.steps) and sim.world_state() == before


def test_an_action_goal_on_nothing_is_met_once_done():
    t = next(x for x in eai_tasks() if x.task == "Go to sleep" and "SLEEP" in x.goal["actions"])
    sim = VirtualHomeExecutor(graph=t.graph, goal=t.goal)
    result, _ = run(eai_goal_spec(t.goal, t.graph), sim)
    assert result.termination_reason is TerminationReason.GOAL_REACHED and result.num_corrections == 0, result.detail
    assert "[SLEEP]" in result.program and sim.goal_met()


@pytest.mark.parametrize("fields, message", [
    ({"method": "pddl", "execute": True}, "needs goal conditions"),
    ({"method": "heuristic"}, "needs execute=true"),
    ({"method": "reprompt"}, "needs execute=true"),
    ({"method": "translated", "options": {"track_subtasks": True}}, "track_subtasks"),
])
def test_a_goal_is_checked_before_the_executor_is_touched(smollm2, embedder, demos, fields, message):

    resets = []
    service = compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos, executor_factory=lambda scene,
                      task: resets.append(task) or VirtualHomeExecutor())
    with pytest.raises(InvalidGoal, match=message):
        service.plan(parse_request(task="Watch TV", **fields), lambda e: None, CancelToken())
    assert resets == []


def test_the_warm_translator_writes_what_the_command_line_writes(tmp_path):
    """Issue 26: the translator forked from a warm process gives the same SAS task as
    `python -m fast_downward.translate`, ends a problem past its limit, and reports a parse error
    by its exit code; a call made while it is busy runs the command line."""
    import subprocess
    import sys
    import threading

    t = task("1057_1")
    world = from_virtualhome_graph(t.graph)
    problem = build_problem(world, ground_goal(eai_goal_spec(t.goal, t.graph), world, VOCABULARY), "virtualhome",
                            relevant=relevant_objects)
    (tmp_path / "d.pddl").write_text(domain_text())
    (tmp_path / "p.pddl").write_text(problem.text)
    (tmp_path / "bad.pddl").write_text("(define (problem")
    argv = [str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl"), "--sas-file"]
    cold = subprocess.run([sys.executable, "-S", "-m", "fast_downward.translate", *argv, str(tmp_path / "cold.sas")],
                          cwd=tmp_path, capture_output=True, env=fast_downward._translator_env())
    warm = fast_downward.TRANSLATOR.run([*argv, str(tmp_path / "warm.sas")], str(tmp_path), 30.0)
    assert cold.returncode == warm.returncode == 0, warm.stdout
    assert (tmp_path / "warm.sas").read_text() == (tmp_path / "cold.sas").read_text()
    bad = fast_downward.TRANSLATOR.run([argv[0], str(tmp_path / "bad.pddl"), "--sas-file", "x.sas"], str(tmp_path), 30)
    assert bad.returncode == 31 and "Could not parse problem file" in bad.stdout
    with pytest.raises(subprocess.TimeoutExpired):
        fast_downward.TRANSLATOR.run([*argv, str(tmp_path / "late.sas")], str(tmp_path), 0.001)
    with fast_downward.TRANSLATOR._lock:   # busy: this call takes the command line, same task
        done: list = []
        thread = threading.Thread(target=lambda: done.append(fast_downward.TRANSLATOR.run(
            [*argv, str(tmp_path / "busy.sas")], str(tmp_path), 30.0)))
        thread.start()
        thread.join(60)
    assert done and done[0].returncode == 0
    assert (tmp_path / "busy.sas").read_text() == (tmp_path / "cold.sas").read_text()


@pytest.fixture(scope="module")
def blow_up(tmp_path_factory):
    """A problem whose grounding cannot fit in memory: an action over four of 150 items."""
    from helpers.generated_profiles import write_profile

    folder = write_profile(tmp_path_factory.mktemp("blowup"), items=150, places=3, seed=7, blow_up=True).parent
    problem = (folder / "world.pddl").read_text().replace("(:goal (and))", "(:goal (and (open fridge_7)))")
    return (folder / "domain.pddl").read_text(), problem


@pytest.mark.parametrize("warm", [True, False], ids=["warm translator", "command-line translator"])
def test_fast_downward_ends_at_its_memory_limit_and_at_the_goals_stop(blow_up, warm):
    """Issue 35: a grounding blow-up grew Fast Downward's children to 945 MB with only the time
    limit to end them, and a goal's cancel waited for that limit too."""
    import threading
    import time

    from llm_planner_ros.core.errors import PlanCanceled

    def solve(**kw):
        if warm:
            return fast_downward.solve(*blow_up, time_limit_s=120, **kw)
        with fast_downward.TRANSLATOR._lock:   # busy: the call falls back to the command line
            return fast_downward.solve(*blow_up, time_limit_s=120, **kw)
    t0 = time.monotonic()
    outcome = solve(memory_limit_mb=300)
    assert outcome.status == "out_of_memory" and "memory limit of 300 MB" in outcome.detail, outcome
    assert time.monotonic() - t0 < 100
    token = CancelToken()
    threading.Timer(1.0, token.cancel).start()
    t0 = time.monotonic()
    with token.active(), pytest.raises(PlanCanceled):
        solve(memory_limit_mb=8000)
    assert time.monotonic() - t0 < 3.0
    t = task("1057_1")   # the translator serves the next problem as before
    world = from_virtualhome_graph(t.graph)
    problem = build_problem(world, ground_goal(eai_goal_spec(t.goal, t.graph), world, VOCABULARY), "virtualhome",
                            relevant=relevant_objects)
    assert fast_downward.solve(domain_text(), problem.text).status == "solved"


def test_the_stats_of_rounds_planned_for_one_goal_add_up():
    """interpret plans one goal in rounds (conditions given up between them) into one stats dict:
    each round adds its planner time (and its translator's part) and plans rather than resetting
    the caller's."""
    planner = GoalDirectedPlanner(VH)
    stats: dict = {"planner_s": 0.5, "planner_translate_s": 0.25, "plans": 2}   # an earlier round's
    for goal in (["(on computer)"], ["(open fridge)"]):
        spec = parse_goal(goal, [], VH.goal_vocabulary())
        result = planner.plan(spec, VirtualHomeExecutor(), lambda e: None, CancelToken(), execute=False, stats=stats)
        assert result.steps, result.detail
    assert stats["plans"] == 4 and stats["planner_s"] > 0.5 and stats["world_s"] > 0
    assert 0.25 < stats["planner_translate_s"] < stats["planner_s"]
