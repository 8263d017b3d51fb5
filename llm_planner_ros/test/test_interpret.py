"""Method interpret: the task sentence -> goal conditions (LLM + embeddings) -> Fast Downward ->
execution, with the real embedded LLM, ONNX embedder, planner and simulator."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.core.types import TerminationReason
from llm_planner_ros.evaluation.beyond_eai import BEYOND
from llm_planner_ros.interpretation.conditions import ConditionIndex
from llm_planner_ros.interpretation.interpreter import Completion, InstancePrior, ProgramGoal, split_sentences
from llm_planner_ros.planning.interpreted import InterpretSettings
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
from llm_planner_ros.profiles.virtualhome.examples import eai_program_goals
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.wiring import ServiceConfig, compose


def test_what_is_done_translates_to_the_end_state_it_brings_about(embedder):
    world = VirtualHomeExecutor().world_state()
    index = ConditionIndex(render_conditions(world), embedder)
    said = index.translate(["I am turning on the TV.", "I am watching the TV.", "I sit down on the sofa."], 0.5)
    assert said[0].condition.literals == ("(on television)",)
    assert said[1].condition.literals == ("(did_watch television)",)
    assert "(ontop character couch)" in said[2].condition.literals


def test_a_small_models_loop_is_cut_at_the_first_repeat():
    assert split_sentences("I am in bed. I sleep. I am in bed. I sleep.") == ["I am in bed.", "I sleep."]


def test_rules_and_instances_are_learned_from_other_tasks_only(embedder):
    goals = [ProgramGoal("Watch TV", (), (("television", "home_office"),),
                         ("(on television)", "(did_watch television)")),
             ProgramGoal("Use radio", (), (("radio", "dining_room"),), ("(on radio)", "(plugged_in radio)")),
             ProgramGoal("Use lamp", (), (("lamp", "dining_room"),), ("(on lamp)", "(plugged_in lamp)"))]
    completion = Completion(goals, agent="character")
    assert "(plugged_in {x})" in completion.rules(("watch tv",))["(on {x})"]
    assert "(did_watch {x})" not in completion.rules(("watch tv",)).get("(on {x})", ())   # held out by label
    assert "(on {x})" in completion.rules(()).get("(did_watch {x})", ())
    world = VirtualHomeExecutor().world_state()
    tvs = world.instances_of("television")
    assert len(tvs) > 1
    rooms = {a[1]: world.classes[a[2]] for a in world.facts if a[0] == "inside_room"}
    prior = InstancePrior(goals, "inside_room", "character")
    assert rooms[prior.rank(world, "television")[0]] == "home_office"
    # with its own task held out, the television's room comes from where other goals' objects were
    assert rooms[prior.rank(world, "television", ["Watch TV"])[0]] == "dining_room"


def test_a_class_is_bound_to_the_instance_the_task_names_and_of_several_to_the_first_ranked():
    from llm_planner_ros.interpretation.interpreter import named_instance
    from llm_planner_ros.pddl.goals import GoalSpec, Literal

    goals = [ProgramGoal("Watch TV", (), (("television", "home_office"),), ("(on television)",))]
    world = VirtualHomeExecutor().world_state()
    prior = InstancePrior(goals, "inside_room", "character")
    tvs = world.instances_of("television")
    first, last = prior.rank(world, "television")[0], prior.rank(world, "television")[-1]
    assert first != last
    spec = GoalSpec((Literal("on", ("television",)),))
    assert named_instance("television", world, (last,)) == last
    assert named_instance("television", world, tvs) is None      # several named: none is "the" one
    assert prior.bind(spec, world, named=(last,)).literals[0].args == (last,)
    assert prior.bind(spec, world, named=(last, first)).literals[0].args == (first,)
    assert prior.bind(spec, world).literals[0].args == (first,)


def test_an_instance_chosen_among_several_rooms_lowers_the_confidence_by_how_sure_it_is():
    from llm_planner_ros.interpretation.confidence import Judgement
    from llm_planner_ros.interpretation.interpreter import Interpretation

    goals = [ProgramGoal("Watch TV", (), (("television", "home_office"),), ("(on television)",)),
             ProgramGoal("Watch a film", (), (("television", "home_office"),), ("(on television)",)),
             ProgramGoal("Tidy up", (), (("television", "dining_room"),), ("(on television)",))]
    world = VirtualHomeExecutor().world_state()
    prior = InstancePrior(goals, "inside_room", "character")
    rooms = {a[1]: world.classes[a[2]] for a in world.facts if a[0] == "inside_room"}
    which = prior.ambiguity(world, "television")
    assert which is not None and which.share == 2 / 3          # 2 of the 3 goals' uses in its room
    assert [rooms[n] for n, _ in which.choices] == ["home_office", "dining_room"]
    assert which.choices[0][0] == prior.rank(world, "television")[0]
    assert prior.ambiguity(world, "television", ["Watch TV", "Watch a film"]).share == 1.0   # the rest: one room
    assert prior.ambiguity(world, "television", ["Watch TV", "Watch a film", "Tidy up"]).share == 1 / 2   # none
    assert prior.ambiguity(world, "toaster") is None           # one instance, one room
    unplaced = InstancePrior(goals).ambiguity(world, "television")   # rooms unknown: each instance its own
    assert unplaced is not None and unplaced.share == 1 / 2 and not unplaced.counted
    assert "(1 of 2: nothing says which)" in unplaced.text() and " in the " not in unplaced.text()
    assert InstancePrior(goals).ambiguity(world, "toaster") is None
    assert "which television: television_" in which.text() and "in the dining_room" in which.text()
    found = Interpretation([], [], [], judgement=Judgement(0.9, ()), which=[which])
    assert abs(found.confidence - 0.9 * 2 / 3) < 1e-9
    assert Interpretation([], [], [], which=[which]).confidence is None   # nothing calibrates it: unknown


def test_annotated_goals_read_as_sentences_with_the_action_objects_of_the_program():
    washing = [g for g in eai_program_goals() if g.task == "Wash hands" and g.sentences]
    assert len(washing) == 19      # EAI's action goal RINSE|WASH, said of what the program washed
    hands = [g for g in washing if set(g.literals) & {"(did_wash hands_both)", "(did_rinse hands_both)"}]
    assert len(hands) == 16        # the other 3 programs washed or rinsed the soap or the water
    assert any("I wash the hands." in g.sentences for g in washing)
    assert len(eai_program_goals()) == 342


@pytest.fixture(scope="module")
def service(smollm2, embedder, demos):
    # every goal counts as sure (asking is test_confidence.py's): this goal's confidence sits near the
    # shipped threshold (0.45 on one CPU, above 0.5 on another), as llama.cpp's numbers differ by CPU
    return compose(ServiceConfig.of(InterpretSettings(interpret_fallback="translated", interpret_confidence=0.0)),
                   llm=smollm2, embedder=embedder, demos=demos)


def test_the_task_sentence_alone_reaches_the_goal(service):
    """One real end-to-end run with the embedded model: the operator sees what "done" means."""
    request = parse_request(task="Wash hands", method="interpret", execute=True,
                            options={"hold_out_tasks": ["Wash hands"]})
    events = []
    graph, goal = resources.scene_for_task(resources.SCENES[0], "Wash hands")
    executor = VirtualHomeExecutor(resources.SCENES[0], graph, goal)
    result, report = service.plan_with_report(request, events.append, CancelToken(), executor)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert executor.goal_met()
    assert any(c.startswith("(did_wash hands_both") for c in result.goal_conditions)
    assert events and all(tuple(result.goal_conditions) == e.goal_conditions for e in events)
    assert result.detail.startswith("interpreted ") and report.stats["interpreted"]


def test_an_empty_interpretation_falls_back_to_the_configured_method(embedder, demos):
    """An answer that matches no condition (scripted: the real model's answer depends on the
    CPU's arithmetic, and an exact sentence reaches cosine 1.0; the real model interprets in
    the tests above and in test_goal_directed_dds)."""
    from helpers.scripted_llm import ScriptedLLM

    def answer(prompt: str) -> list[tuple[str, float]]:
        if prompt.rstrip().endswith(":") and "Step" in prompt.rstrip().splitlines()[-1]:
            return [("walk to kitchen", -0.1)] if prompt.rstrip().endswith("Step 1:") else [("", -0.1)]
        return [("Zorp glorp the blicket.", -0.1)]   # the interpretation: no condition's sentence
    smollm2 = ScriptedLLM(answer)
    strict = compose(ServiceConfig.of(PlannerSettings(max_steps=3), InterpretSettings(
        interpret_threshold=1.0, interpret_from="llm", interpret_fallback="translated")),
        llm=smollm2, embedder=embedder, demos=demos)
    request = parse_request(task="Zorp the blicket", method="interpret", execute=False)
    result = strict.plan(request, lambda e: None, CancelToken())
    assert "the interpreted goal is empty" in result.detail and "fell back to translated" in result.detail
    assert result.goal_conditions == [] and result.num_llm_calls >= 1   # the fallback planned
    none = compose(ServiceConfig.of(InterpretSettings(interpret_threshold=1.0, interpret_from="llm",
                                                      interpret_fallback="none")),
                   llm=smollm2, embedder=embedder, demos=demos)
    result = none.plan(request, lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.NO_PLAN and not result.steps
    assert "the interpreted goal is empty" in result.detail


def test_demonstrations_are_held_out_by_task_label_not_by_string(demos):
    """A rephrased task never gets its own task's demonstration when its label is held out."""
    shown = demos.nearest("switch the television on and watch it", 3, exclude_tasks=["Watch TV"])
    assert all(d.task != "Watch TV" for d in shown)


# Measured with the embedded default (bench/interpret.py, README): these three fail today, each
# for the reason given; strict, so that one that starts to pass fails here until it is listed.
# (The absent milk and cat are named since issue 37: the goal waits for an operator, naming them.)
_BEYOND_FAILS = {
    "Turn off the lights": "the task text's nearest conditions add 'The light is unplugged.' (cosine 0.74)",
    "Wash hands": "scene 1 as it starts has no hands: 'I wash the hands.' becomes 'I wash the oil.'",
    "make breakfast": "the task text's nearest condition is the food on the nightstand (cosine 0.45)",
}


@pytest.fixture(scope="module")
def default_service(smollm2, embedder, demos):
    return compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos)


def test_which_light_is_asked_when_nothing_says_which_room(default_service):
    """Scene 1 has lights in five rooms and other tasks' goals favour none of them by half: the
    goal's confidence is at most that share, so at the shipped threshold it waits for an operator
    (nobody here: unconfirmed), naming the light proposed and the other rooms' lights."""
    executor = VirtualHomeExecutor()
    result, report = default_service.plan_with_report(
        parse_request(task="Turn on light", method="interpret", execute=True), lambda e: None, CancelToken(), executor)
    assert result.termination_reason is TerminationReason.UNCONFIRMED and not result.steps, result.detail
    which = report.stats["which"][0]
    assert which.startswith("which light: light_") and which in result.detail and ", light_" in which
    share = float(which.split("(")[1].split("%")[0]) / 100
    assert share < 0.5 and report.stats["confidence"] <= share + 1e-3


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.task, marks=[pytest.mark.xfail(strict=True, reason=_BEYOND_FAILS[c.task])]
                 if c.task in _BEYOND_FAILS else []) for c in BEYOND])
def test_tasks_beyond_eais_titles(default_service, case):
    """The tasks outside EAI's 26 titles, with the real model on scene 1 as it starts: the
    conditions that must appear do, those that must not do not, and an absent object is named."""
    outcome = case.run(default_service, VirtualHomeExecutor())
    assert outcome["passed"], outcome


def test_a_goal_without_a_plan_gives_up_conditions_at_a_bounded_cost(embedder, demos):
    """The real world and Fast Downward; the interpretation is fixed (one condition no plan can
    reach, the floor open): it is probed alone once and given up, and the rest is reached."""
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.interpreter import Interpretation
    from llm_planner_ros.planning.interpreted import InterpretedGoalPlanner

    wanted = [Condition("The television is on.", ("(on television)",)),
              Condition("The floor is open.", ("(open floor)",)),
              Condition("The television is plugged in.", ("(plugged_in television)",))]

    class Fixed:
        def retrieve(self, task, world, hold_out=()):
            return Interpretation([task], [], list(wanted))
    service = compose(ServiceConfig(), llm=None, embedder=embedder, demos=demos)
    parts = service.parts.interpreted()
    planner = InterpretedGoalPlanner(Fixed(), parts.prior, parts.goal_directed, parts.vocabulary,
                                     use_llm=False, relax_plans=1)
    stats: dict = {}
    executor = VirtualHomeExecutor()
    planned = planner.plan("Watch TV", executor, lambda e: None, CancelToken(), stats=stats)
    assert planned.result is not None and planned.result.termination_reason is TerminationReason.GOAL_REACHED
    assert planned.dropped == ("The floor is open. (no plan even alone)",)
    assert "(on television" in " ".join(planned.result.goal_conditions)
    assert stats["interpret_relax_probes"] <= 3 and "given up: The floor is open." in planned.result.detail


def test_a_repeated_task_reuses_the_llms_answer(smollm2, embedder, demos):
    """The same prompt again is answered from memory (greedy decoding gives the same answer);
    the memory keeps at most its bound."""
    from llm_planner_ros.planning.interpreted import InterpretSettings

    service = compose(ServiceConfig.of(InterpretSettings(interpret_answers_in_memory=1)), llm=smollm2,
                      embedder=embedder, demos=demos)
    interpreter = service.parts.interpreted().interpreter
    world = VirtualHomeExecutor().world_state()
    calls = smollm2.stats.calls
    first = interpreter.interpret("Watch TV", world, ["Watch TV"])
    assert smollm2.stats.calls > calls
    calls = smollm2.stats.calls
    again = interpreter.interpret("Watch TV", world, ["Watch TV"])
    assert again.sentences == first.sentences and again.lines() == first.lines()
    assert smollm2.stats.calls == calls            # no LLM call: the answer was kept
    interpreter.interpret("Turn on light", world, ["Turn on light"])
    assert len(interpreter._answers) == 1
