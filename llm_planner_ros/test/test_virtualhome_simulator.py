"""The VirtualHome executor on the real evolving-graph simulator: each error type, its cause,
state carried forward, and human programs executing step by step."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.profiles.virtualhome import resources
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor, classify
from llm_planner_ros.profiles.virtualhome.vocabulary import SkillParser, make_skill

GROCERIES = next(p for p in resources.human_programs() if p.task == "Put groceries in Fridge")


@pytest.fixture
def home():
    return VirtualHomeExecutor(graph=resources.scene_graphs(GROCERIES.program_id)[0])


def run(ex, *steps):
    results = [ex.execute(make_skill(a, o)) for a, *o in steps]
    return results[-1], results


def test_acting_on_a_far_object(home):
    r, _ = run(home, ("GRAB", "food_food"))
    assert not r.success and r.failure.type is ErrorType.AGENT_PROXIMITY
    assert r.failure.cause == "I am not close to the food food"
    assert "is not close to <food_food>" in r.failure.message


def test_grabbing_from_a_closed_freezer(home):
    r, _ = run(home, ("WALK", "freezer"), ("GRAB", "food_food"))
    assert r.failure.type is ErrorType.ENCLOSED_OBJECT
    assert r.failure.cause == "the food food is inside something closed"


def test_putting_into_a_closed_freezer(home):
    r, steps = run(home, ("WALK", "freezer"), ("OPEN", "freezer"), ("GRAB", "food_food"),
                   ("CLOSE", "freezer"), ("PUTIN", "food_food", "freezer"))
    assert all(s.success for s in steps[:-1])
    assert r.failure.type is ErrorType.UNFLIPPED_BOOLEAN_STATE and r.failure.cause == "the freezer is closed"


def test_putting_what_is_not_held(home):
    r, _ = run(home, ("WALK", "freezer"), ("PUTIN", "food_food", "freezer"))
    assert r.failure.type is ErrorType.MISSING_OBJECT and r.failure.cause == "I am not holding the food food"


def test_no_free_hand(home):
    r, steps = run(home, ("WALK", "freezer"), ("OPEN", "freezer"), ("GRAB", "food_food"),
                   ("GRAB", "food_food"), ("GRAB", "food_food"))
    assert [s.success for s in steps] == [True, True, True, True, False]
    assert steps[2].script != steps[3].script                  # a second instance, not the held one
    assert r.failure.type is ErrorType.OVER_OCCUPIED_AGENT and r.failure.cause == "I do not have a free hand"


def test_switching_on_a_thing_without_a_switch(home):
    r, _ = run(home, ("WALK", "table"), ("SWITCHON", "table"))
    assert r.failure.type is ErrorType.INVALID_ACTION and r.failure.cause == "the table has no switch"


def test_sitting_then_walking(home):
    r, steps = run(home, ("WALK", "chair"), ("SIT", "chair"), ("WALK", "bathroom"))
    assert steps[1].observation == "I am sitting"
    assert r.failure.type is ErrorType.OTHER_PRECONDITION and r.failure.cause == "I am sitting"
    r, _ = run(home, ("STANDUP",), ("WALK", "bathroom"))
    assert r.success


def test_watching_from_another_room_or_not_facing(home):
    r, _ = run(home, ("WALK", "bathroom"), ("WATCH", "television"))
    assert r.failure.type is ErrorType.ABSENT_FROM_ROOM and r.failure.cause == "I am not in the dining room"
    r, _ = run(home, ("WALK", "television"), ("WATCH", "television"))
    assert r.failure.type is ErrorType.FIELD_OF_VIEW and r.failure.cause == "I am not facing the television"


def test_malformed_steps_are_failures_not_crashes(home):
    cases = [(Skill("", text=""), ErrorType.EMPTY_PROGRAM),
             (Skill("", text="dance wildly"), ErrorType.PARSE_ERROR),
             (Skill("FLY", ("bird",)), ErrorType.PARSE_ERROR),
             (Skill("PUTIN", ("milk",)), ErrorType.PARSE_ERROR),
             (Skill("WALK", ("kitchen",), (99999,)), ErrorType.PARSE_ERROR)]
    for skill, type_ in cases:
        r = home.execute(skill)
        assert not r.success and r.failure.type is type_ and r.failure.cause
    r = home.execute(make_skill("GRAB", ["unicorn"]))
    assert r.failure.type is ErrorType.OTHER_PRECONDITION and r.failure.cause == "there is no unicorn here"


def test_state_is_carried_forward_and_observed(home):
    r, steps = run(home, ("WALK", "freezer"), ("OPEN", "freezer"), ("GRAB", "food_food"))
    assert steps[0].observation == "I am in the dining room; I am close to the freezer"
    assert steps[1].observation == "freezer is now open"
    assert r.observation == "I am holding the food food"
    assert home.history == [s.script for s in steps]
    home.reset(graph=home.initial_graph)
    assert home.history == [] and not home.execute(make_skill("GRAB", ["food_food"])).success


def test_unclassified_messages_keep_the_raw_text():
    assert classify('<x> (1) is unplugged when executing "..."') == (ErrorType.UNFLIPPED_BOOLEAN_STATE,
                                                                     "the x is unplugged")
    assert classify("something new happened") == (ErrorType.OTHER_PRECONDITION, "something new happened")


@pytest.mark.parametrize("program", resources.human_programs()[::52], ids=lambda p: p.program_id)
def test_human_programs_execute_step_by_step(program):
    ex = VirtualHomeExecutor(graph=resources.scene_graphs(program.program_id)[0])
    for line in program.script:
        r = ex.execute(SkillParser.parse_script(line))
        assert r.success, (line, r.failure)


def test_applicable_skills_all_execute(home):
    applicable = home.applicable_skills()
    assert make_skill("WALK", ["freezer"]) in applicable
    assert make_skill("GRAB", ["food_food"]) not in applicable        # not close to any food yet
    assert all(home.check(s) for s in applicable[:50])


def test_goal_conditions_from_eai():
    programs = [p for p in resources.human_programs() if resources.eai_goal(p.program_id)]
    assert len(programs) == 342                       # the EAI set
    met_before = met_after = 0
    for program in programs[::9]:
        ex = VirtualHomeExecutor(graph=resources.scene_graphs(program.program_id)[0],
                                 goal=resources.eai_goal(program.program_id))
        met_before += bool(ex.goal_met())
        for line in program.script:
            ex.execute(SkillParser.parse_script(line))
        met_after += bool(ex.goal_met())
    assert met_after == len(programs[::9])            # each human program reaches its own goal
    assert met_before <= 1
    assert VirtualHomeExecutor().goal_met() is None


@pytest.mark.parametrize("program", resources.human_programs()[::6], ids=lambda p: p.program_id)
def test_the_world_kept_up_to_date_is_the_world_read_whole(program):
    """Issue 26: after each step (and a failed one) the facts updated from the step's changes are
    those of the whole state read again, and those of the recorded graph before the first step."""
    from llm_planner_ros.profiles.virtualhome.graph import from_virtualhome_graph, with_done

    graph = resources.scene_graphs(program.program_id)[0]
    ex = VirtualHomeExecutor(graph=graph)
    assert ex.world_state() == from_virtualhome_graph(graph)
    for line in (*program.script[:1], "[GRAB] <food_food> (1)", *program.script[1:]):
        ex.execute(SkillParser.parse_script(line))
        whole = with_done(from_virtualhome_graph(ex._state.to_dict()), ex.history)
        kept = ex.world_state()
        assert (kept.facts - whole.facts, whole.facts - kept.facts) == (set(), set()), line
        assert kept == whole
