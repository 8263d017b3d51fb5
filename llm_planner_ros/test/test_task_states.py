"""The states the task's own words give the things it names ("clean dust off the car": the car is
clean of dust), of those that change the world as it is, over a BEHAVIOR world's own conditions."""
from __future__ import annotations

import pytest

from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.interpretation.states import stated_states
from llm_planner_ros.profiles.behavior import behavior_profile
from llm_planner_ros.profiles.conditions import profile_conditions

CAR = "cleaning_a_car_0_Ihlen_0_int_0_2021-09-11_16-37-11"   # the car is dusty; the rag, bucket and soap not


@pytest.fixture(scope="module")
def car():
    profile = behavior_profile(CAR)
    world = PddlWorldExecutor(profile).world_state()
    conditions = profile_conditions(profile, world)
    return conditions, world, {c.literals[0]: c for c in conditions if len(c.literals) == 1}


@pytest.mark.parametrize("task, added", [
    ("Use the soap, rag and bucket to clean dust off the car.", ["(not (dusty car_n_01))"]),
    ("Clean the car", ["(not (dusty car_n_01))"]),                    # what is dusty now is cleaned of it
    ("Soak the rag, then clean the car.", ["(soaked rag_n_01)", "(not (dusty car_n_01))"]),
    ("Soak the rag, the bucket, and the soap.", ["(soaked rag_n_01)", "(soaked bucket_n_01)", "(soaked soap_n_01)"]),
    ("Wipe the stains off the car", []),                               # the car has none: nothing to change
    ("Make sure the car is not dusty", []),                            # a negation: nothing is read
    ("Put the rag in the bucket", []),                                 # no state
    ("Take the rag and the soap, and soak them.", ["(soaked rag_n_01)", "(soaked soap_n_01)"]),   # "them"
    ("Take the rag, put the car in the garage, and soak them.", []),   # one thing, said as one: not "them"
])
def test_the_states_the_task_gives_the_things_it_names_join_the_goal_first(car, task, added):
    conditions, world, by_literal = car
    chosen = [by_literal["(inside rag_n_01 bucket_n_01)"]]
    out, notes, _ = stated_states(chosen, task, conditions, world)
    assert sorted(c.literals[0] for c in out[:-1]) == sorted(added) and out[-1] == chosen[0]
    assert len(notes) == len(added) and all("added (the task says" in n for n in notes)


def test_a_state_already_chosen_is_not_added_again(car):
    conditions, world, by_literal = car
    chosen = [by_literal["(not (dusty car_n_01))"]]
    out, notes, _ = stated_states(chosen, "Clean dust off the car.", conditions, world)
    assert out == chosen and notes == []
