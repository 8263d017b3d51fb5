"""The relation the task's own words give between two things replaces a chosen one that the task
contradicts ("put the cup in the fridge", chosen "the cup is on the fridge"), over the shipped
robot profile's own conditions and exclusive relations."""
from __future__ import annotations

import pytest

from llm_planner_ros.interpretation.relations import task_relations
from llm_planner_ros.profiles.conditions import profile_conditions
from llm_planner_ros.profiles.loader import load_profile, shipped
from llm_planner_ros.profiles.skills import reference_world


@pytest.fixture(scope="module")
def robot():
    profile = load_profile(shipped("mobile_manipulator"))
    conditions = profile_conditions(profile, reference_world(profile))
    return conditions, {c.literals[0]: c for c in conditions if len(c.literals) == 1}, profile.goal_vocabulary().mutex


@pytest.mark.parametrize("task, chosen, expected, says", [
    ("Put the cup in the fridge", "(on cup fridge)", "(in cup fridge)", "'in' before 'fridge'"),
    ("Put the cup into the fridge.", "(on cup fridge)", "(in cup fridge)", "'into' before 'fridge'"),
    ("Put the cup on the fridge", "(in cup fridge)", "(on cup fridge)", "'on' before 'fridge'"),
    ("Put all cups in the fridge", "(on cup fridge)", "(in cup fridge)", "'in' before 'fridge'"),
    ("Put the apple on the counter, and the cup in the fridge", "(on cup fridge)", "(in cup fridge)", "'in'"),
])
def test_a_relation_the_task_says_otherwise_is_turned_to_the_one_it_says(robot, task, chosen, expected, says):
    admitted, by_literal, mutex = robot
    apple = by_literal["(in apple fridge)"]
    out, notes = task_relations([apple, by_literal[chosen]], task, admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in apple fridge)", expected]
    assert len(notes) == 1 and notes[0].startswith(f"{by_literal[chosen].text!r} turned to") and says in notes[0]


@pytest.mark.parametrize("task, chosen", [
    ("Put the cup in the fridge", "(in cup fridge)"),                          # what the task says
    ("Put the cup on the counter and the apple in the fridge", "(on cup fridge)"),   # said of the apple
    ("Take the cup out of the fridge", "(on cup fridge)"),                     # no relation of the two
    ("Tidy up the kitchen", "(on cup fridge)"),                                # neither is named
    ("Make sure the cup is not in the fridge", "(on cup fridge)"),             # a relation not to hold
    ("The cup isn't in the fridge yet, put it there", "(on cup fridge)"),
    ("Put the cup in the fridge, then put the cup on the fridge", "(on cup fridge)"),   # two readings
])
def test_a_relation_is_kept_where_the_task_does_not_say_another(robot, task, chosen):
    admitted, by_literal, mutex = robot
    out, notes = task_relations([by_literal[chosen]], task, admitted, mutex)
    assert [c.literals[0] for c in out] == [chosen] and notes == []


def test_a_relation_already_chosen_is_not_chosen_twice(robot):
    admitted, by_literal, mutex = robot
    both = [by_literal["(in cup fridge)"], by_literal["(on cup fridge)"]]
    out, notes = task_relations(both, "Put the cup in the fridge", admitted, mutex)
    assert out == both and notes == []


def test_a_relation_is_not_turned_to_one_that_contradicts_the_rest_of_the_goal(robot):
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(on cup fridge)"], by_literal["(in cup cupboard)"]]   # an item is in one place
    out, notes = task_relations(chosen, "Put the cup in the fridge", admitted, mutex)
    assert out == chosen and notes == []
