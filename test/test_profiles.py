"""World profiles (issue 23 groundwork): the shipped mobile manipulator's profile loads and
validates against its domain; a broken profile is refused with what is wrong; its skills run on
the PDDL world executor, and a precondition failure comes back in the profile's words."""
from __future__ import annotations

import shutil

import pytest

from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.profiles.loader import ProfileError, load_profile, shipped, synonyms


def test_the_shipped_mobile_manipulator_profile_validates():
    profile = load_profile(shipped("mobile_manipulator"))
    assert profile.name == "mobile_manipulator" and len(profile.spec.examples) >= 10
    assert {a.skill for a in profile.spec.actions.values()} >= {"NAVIGATE_TO", "PICK", "PLACE", "OPEN", "HAND_OVER"}
    assert profile.say("(holding robot_1 cup_1)") == "I am holding the cup"
    assert profile.say("(not (open fridge_1))") == "the fridge is closed"
    assert profile.why_not("(holding robot_1 cup_1)") == "I am not holding the cup"
    assert profile.why_not("(not (open fridge_1))") == "the fridge is open"
    words = synonyms(profile)
    assert words["refrigerator"] == "fridge" and words["kitchen counter"] == "kitchen_counter"


@pytest.mark.parametrize("edit,problem", [
    (("  hand_over: {skill: HAND_OVER", "  handover: {skill: HAND_OVER"),
     "actions: no entry for the domain's action(s) hand_over; actions: handover not in the domain"),
    (('args: ["?i"], words: "pick up the {0}"', 'args: ["?x"], words: "pick up the {0}"'),
     "actions.pick.args: ?x is not a parameter of pick"),
    (('"I am holding the {1}"', '"I am holding the {2}"'), "predicates.holding.words: {2} but holding has 2"),
    (("(has person apple)", "(owns person apple)"), "unknown predicate 'owns'"),
    (("(on milk dining_table)", "(on milk bathtub)"), "'bathtub' is not an object class of the profile"),
    (("  plate: [dish]\n", ""), "objects: no entry for the world's class(es) plate"),
    (("agent: robot_1", "agent: robot_9"), "agent: 'robot_9' is not an object of the world"),
    (("{skill: CLOSE,", "{skill: OPEN,"), "skill OPEN is also actions.open_door's"),
    (("name: mobile_manipulator", "name: Mobile Manipulator"), "name: String should match pattern"),
])
def test_a_broken_profile_is_refused_with_what_is_wrong(tmp_path, edit, problem):
    source = shipped("mobile_manipulator").parent
    for f in source.iterdir():
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "profile.yaml"
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1]))
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert problem in str(caught.value) and str(path) in str(caught.value)


def test_skills_run_on_the_pddl_world_and_failures_come_back_in_the_profiles_words():
    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    assert "cup" in executor.objects and "robot" in executor.objects
    failed = executor.execute(Skill("PLACE", ("cup", "dining_table")))
    assert not failed.success and failed.failure.type is ErrorType.OTHER_PRECONDITION
    assert failed.failure.cause == "I am not at the dining table", failed.failure
    assert executor.execute(Skill("NAVIGATE_TO", ("kitchen_counter",))).success
    picked = executor.execute(Skill("PICK", ("cup",)))
    assert picked.success and "I am holding the cup" in picked.observation
    again = executor.execute(Skill("PICK", ("apple",)))
    assert not again.success and again.failure.cause == "I am not at the dining table"   # where the apple is
    assert executor.execute(Skill("NAVIGATE_TO", ("person",))).success
    handed = executor.execute(Skill("HAND_OVER", ("cup", "person")))
    assert handed.success and "the person has the cup" in handed.observation
    world = executor.world_state()
    assert ("has", "person_1", "cup_1") in world.facts and world.classes["cup_1"] == "cup" and world.ids["cup_1"] == 1
    closed = executor.execute(Skill("PICK_FROM", ("milk", "fridge")))
    assert not closed.success
    assert executor.execute(Skill("FLY", ("cup",))).failure.type is ErrorType.PARSE_ERROR
    skills = executor.applicable_skills()
    assert Skill("NAVIGATE_TO", ("fridge",), text="go to the fridge") in skills
    assert all(s.action != "PICK" for s in skills)   # nothing to pick where the robot stands
    executor.reset()
    assert ("at", "robot_1", "dock_1") in executor.world.state and not executor.history


def test_a_plan_by_fast_downward_runs_on_the_profiles_world():
    """The domain and world are what Fast Downward reads: its plan for an example goal runs, skill
    by skill through the profile's mapping, to the goal."""
    from llm_planner_ros.pddl.fast_downward import solve

    profile = load_profile(shipped("mobile_manipulator"))
    executor = PddlWorldExecutor(profile)
    problem = profile.world_text.replace("(:goal (and))", "(:goal (and (has person_1 apple_1) (in milk_1 cupboard_1)))")
    outcome = solve(profile.domain_text, problem, 30.0, "lama-first")
    assert outcome.status == "solved", outcome.detail
    for action in outcome.actions:
        words = profile.spec.actions[action[0]]
        binding = dict(zip((p for p, _ in executor.world.domain.actions[action[0]].parameters), action[1:]))
        names = [binding[a] for a in words.args]
        skill = Skill(words.skill, tuple(n.rsplit("_", 1)[0] for n in names),
                      tuple(int(n.rsplit("_", 1)[1]) for n in names))
        result = executor.execute(skill)
        assert result.success, (action, result.failure)
    assert {("has", "person_1", "apple_1"), ("in", "milk_1", "cupboard_1")} <= executor.world.state
