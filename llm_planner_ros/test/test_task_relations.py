"""The relation the task's own words give between two things replaces a chosen one that the task
contradicts ("put the cup in the fridge", chosen "the cup is on the fridge"), each thing of a
list before a chosen relation gets it too ("put the apple and the cup in the fridge"), and each
relation the task states joins the goal, over the shipped robot profile's own conditions and
exclusive relations."""
from __future__ import annotations

import pytest

from llm_planner_ros.interpretation.relations import listed_relations, stated_relations, task_relations
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


@pytest.mark.parametrize("task", [
    "Put one apple, one milk, and one cup into the fridge",    # the cup in a list before the relation
    "Take the apple and the cup. Then put them in the fridge",   # "them": the list before
])
def test_a_relation_said_of_a_list_is_turned_for_each_thing_of_it(robot, task):
    admitted, by_literal, mutex = robot
    out, notes = task_relations([by_literal["(on cup fridge)"]], task, admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in cup fridge)"] and "before 'fridge'" in notes[0]


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


@pytest.mark.parametrize("task, added", [
    ("Put the apple, the cup and the milk in the fridge", ["(in apple fridge)", "(in milk fridge)"]),
    ("Put one apple, one cup, and one plate into the fridge.", ["(in apple fridge)", "(in plate fridge)"]),
    ("Put all mugs and cups inside the fridge", ["(in mug fridge)"]),
    ("Put the milk, the banana and the cup in the fridge", ["(in milk fridge)"]),   # no banana in this world
    ("Put the book on the kitchen counter, then put the apple and the cup in the fridge", ["(in apple fridge)"]),
    ("Take the apple and the cup, and put them in the fridge", ["(in apple fridge)"]),   # "them": the list
    ("Take the apple and the cup. Then put them in the fridge", ["(in apple fridge)"]),
])
def test_the_things_listed_with_a_chosen_relation_get_it_too(robot, task, added):
    admitted, by_literal, mutex = robot
    out, notes = listed_relations([by_literal["(in cup fridge)"]], task, admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in cup fridge)"] + added
    assert len(notes) == len(added) and all(" added (the task lists it with 'cup' before 'fridge')" in n
                                            for n in notes)


@pytest.mark.parametrize("task", [
    "Put the cup in the fridge",                                          # no list
    "Put the apple in the fridge and the cup in the fridge",               # each its own relation
    "Put the apple on the kitchen counter, the cup in the fridge",         # the apple's own relation
    "Put the apple and the milk in the fridge, and the cup in the fridge",
    "Don't put the apple and the cup in the fridge",                       # a negation ends the list
    "Put the apple and the cup on the fridge",                            # another relation
])
def test_nothing_is_added_where_the_task_lists_nothing_with_the_chosen_thing(robot, task):
    admitted, by_literal, mutex = robot
    out, notes = listed_relations([by_literal["(in cup fridge)"]], task, admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in cup fridge)"] and notes == []


def test_a_listed_thing_does_not_get_a_relation_that_contradicts_the_goal(robot):
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(in cup fridge)"], by_literal["(on apple kitchen_counter)"]]
    out, notes = listed_relations(chosen, "Put the apple, the milk and the cup in the fridge", admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in cup fridge)", "(in milk fridge)", "(on apple kitchen_counter)"]


def test_a_listed_thing_follows_the_relation_it_comes_from(robot):
    """Conditions are given up for a plan the last first: an added one is as certain as its source."""
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(in cup fridge)"], by_literal["(on book kitchen_counter)"]]
    out, _ = listed_relations(chosen, "Put the apple and the cup in the fridge, and the book on the kitchen counter",
                              admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in cup fridge)", "(in apple fridge)", "(on book kitchen_counter)"]


@pytest.mark.parametrize("task, stated", [
    ("Put the cup in the fridge and the book on the kitchen counter",
     ["(in cup fridge)", "(on book kitchen_counter)"]),
    ("Place the apple, the milk and the mug inside the fridge.",
     ["(in apple fridge)", "(in milk fridge)", "(in mug fridge)"]),
    ("Put the cup on the dining table or on the sofa, and the book on the desk",   # either: the first
     ["(on cup dining_table)", "(on book desk)"]),
    ("Put the book on the desk. Then put the book on the sofa.", []),   # two that exclude each other
    ("Make sure the cup is not in the fridge", []),                  # a negation states nothing
    ("Take the cup out of the fridge", []),                          # no relation of the two
    ("Put the cup in the fridge, then put the cup on the fridge", []),   # two readings
    ("Tidy up the kitchen", []),
])
def test_each_relation_the_task_states_joins_the_goal_first(robot, task, stated):
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(on plate cupboard)"]]
    out, notes, _ = stated_relations(chosen, task, admitted, mutex)
    assert sorted(c.literals[0] for c in out[:-1]) == sorted(stated) and out[-1] == chosen[0]
    assert len(notes) == len(stated) and all("added (the task says it of" in n for n in notes)


@pytest.mark.parametrize("task, stated", [
    ("Use the cup and the plate to set the dining table, then put them in the cupboard",
     ["(in cup cupboard)", "(in plate cupboard)"]),        # not the dining table: one thing, said as one
    ("Take all books from the desk, then put them on the sofa", ["(on book sofa)"]),   # one, said as many
    ("Take the book from the desk, then put them on the sofa", []),
])
def test_them_stands_for_the_nearest_list_of_more_than_one_thing(robot, task, stated):
    admitted, _, mutex = robot
    _, _, out = stated_relations([], task, admitted, mutex)
    assert sorted(c.literals[0] for c in out) == stated


def test_a_thing_said_after_relation_words_is_not_the_next_relations_first(robot):
    """"the cup on the desk or on the sofa": the sofa is the cup's, not the desk's."""
    admitted, by_literal, mutex = robot
    out, _, _ = stated_relations([], "Put the cup on the desk or on the sofa", admitted, mutex)
    assert [c.literals[0] for c in out] == ["(on cup desk)"]
    out, _, _ = stated_relations([], "Put the cup on the desk and the book on the sofa", admitted, mutex)
    assert sorted(c.literals[0] for c in out) == ["(on book sofa)", "(on cup desk)"]


def test_a_chosen_relation_to_a_thing_the_task_never_names_gives_way(robot):
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(on cup kitchen_counter)"], by_literal["(on book desk)"]]
    out, notes, _ = stated_relations(chosen, "Put the cup in the fridge", admitted, mutex)
    assert [c.literals[0] for c in out] == ["(in cup fridge)", "(on book desk)"]
    assert notes == ["'The cup is in the fridge.' added (the task says it of 'cup' and 'fridge'), "
                     "instead of 'The cup is on the kitchen counter.'"]


def test_a_chosen_relation_to_a_thing_the_task_names_stays(robot):
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(on cup kitchen_counter)"]]
    out, notes, _ = stated_relations(chosen, "Put the cup in the fridge, next to the kitchen counter", admitted, mutex)
    assert out == chosen and notes == []


def test_a_stated_relation_already_chosen_moves_first(robot):
    """Conditions are given up for a plan the last first: what the task states goes last."""
    admitted, by_literal, mutex = robot
    chosen = [by_literal["(on plate cupboard)"], by_literal["(in cup fridge)"]]
    out, notes, _ = stated_relations(chosen, "Put the cup in the fridge", admitted, mutex)
    assert out == chosen[::-1] and notes == []


def test_a_chosen_place_elsewhere_gives_way_where_the_world_excludes_only_pairs():
    """BEHAVIOR's exclusive relations are over one pair ("in the bucket" against "on the bucket"):
    the soap on the car, which the task never names, still gives way to the soap in the bucket."""
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.profiles.behavior import behavior_profile

    profile = behavior_profile("cleaning_a_car_0_Ihlen_0_int_0_2021-09-11_16-37-11")
    admitted = profile_conditions(profile, PddlWorldExecutor(profile).world_state())
    by_literal = {c.literals[0]: c for c in admitted if len(c.literals) == 1}
    mutex = profile.goal_vocabulary().mutex
    chosen = [by_literal["(ontop soap_n_01 car_n_01)"], by_literal["(nextto rag_n_01 car_n_01)"]]
    out, notes, stated = stated_relations(chosen, "Put the soap in the bucket.", admitted, mutex)
    assert [c.literals[0] for c in out] == ["(inside soap_n_01 bucket_n_01)", "(nextto rag_n_01 car_n_01)"]
    assert stated == out[:1] and notes[0].endswith("instead of 'The soap is on top of the car.'")
    out, notes, _ = stated_relations(chosen[::-1] + [by_literal["(inside soap_n_01 bucket_n_01)"]],
                                     "Put the soap in the bucket.", admitted, mutex)   # stated and chosen
    assert [c.literals[0] for c in out] == ["(inside soap_n_01 bucket_n_01)", "(nextto rag_n_01 car_n_01)"]
    assert notes[0].startswith("'The soap is in the bucket.' kept (the task says it")
    out, notes, _ = stated_relations(chosen, "Put the soap in the bucket, and clean the car.", admitted, mutex)
    assert [c.literals[0] for c in out] == ["(inside soap_n_01 bucket_n_01)"] + [c.literals[0] for c in chosen]
