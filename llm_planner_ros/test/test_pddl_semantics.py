"""A PDDL world by its domain's own semantics (pddl/semantics.py): ADL conditions and effects on
a small domain written here, and agreement with Fast Downward on EAI's BEHAVIOR problems (each
plan it finds runs step by step and reaches the goal; a plan missing a step is stopped, naming
the precondition it misses)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_planner_ros.pddl.semantics import PddlError, PddlWorld, replay

DOMAIN = """(define (domain tiny) (:requirements :adl :typing)
  (:types place item - object robot cup - item)
  (:constants home - place)
  (:predicates (at ?x - object ?p - place) (holding ?r - robot ?i - item) (open ?p - place) (clean ?i - item))
  (:action go :parameters (?r - robot ?from ?to - place)
    :precondition (and (at ?r ?from) (not (= ?from ?to)) (or (open ?to) (= ?to home)))
    :effect (and (at ?r ?to) (not (at ?r ?from))
                 (forall (?i - item) (when (holding ?r ?i) (and (at ?i ?to) (not (at ?i ?from)))))))
  (:action pick :parameters (?r - robot ?c - cup ?p - place)
    :precondition (and (at ?r ?p) (at ?c ?p) (not (exists (?x - item) (holding ?r ?x))))
    :effect (holding ?r ?c))
  (:action wash :parameters (?r - robot ?c - cup)
    :precondition (imply (holding ?r ?c) (at ?r home))
    :effect (clean ?c)))"""
PROBLEM = """(define (problem p) (:domain tiny)
  (:objects r1 - robot kitchen shed - place c1 c2 - cup)
  (:init (at r1 home) (at c1 kitchen) (open kitchen))
  (:goal (and (at c1 home) (clean c1))))"""


def test_conditions_and_effects_by_the_domains_semantics():
    world, problem = PddlWorld.from_texts(DOMAIN, PROBLEM)
    assert world.objects["home"] == "place" and set(world.of_type("item")) == {"r1", "c1", "c2"}
    assert world.missing(("go", "r1", "home", "shed")) == ["(or (open shed) (= shed home))"]
    assert world.missing(("go", "r1", "home", "home")) == ["(not (= home home))"]
    assert world.missing(("pick", "r1", "c1", "home")) == ["(at c1 home)"]
    world.apply(("go", "r1", "home", "kitchen"))
    assert ("at", "r1", "kitchen") in world.state and ("at", "r1", "home") not in world.state
    world.apply(("pick", "r1", "c1", "kitchen"))
    assert world.missing(("pick", "r1", "c2", "kitchen")) == ["(at c2 kitchen)", "(not (exists (?x - item) "
                                                                                 "(holding r1 ?x)))"]
    assert world.missing(("wash", "r1", "c1")) == ["(imply (holding r1 c1) (at r1 home))"]
    added, deleted = world.apply(("go", "r1", "kitchen", "home"))   # the held cup comes along (forall/when)
    assert added == {("at", "r1", "home"), ("at", "c1", "home")}
    assert deleted == {("at", "r1", "kitchen"), ("at", "c1", "kitchen")}
    assert not world.holds(problem.goal)
    world.apply(("wash", "r1", "c1"))
    assert world.holds(problem.goal)
    with pytest.raises(PddlError, match="c1 is a cup, not a place"):
        world.missing(("go", "r1", "home", "c1"))
    with pytest.raises(PddlError, match="unknown action 'fly'"):
        world.missing(("fly", "r1"))
    with pytest.raises(PddlError, match="there is no object 'c9'"):
        world.missing(("wash", "r1", "c9"))


def behavior_files() -> tuple[str, list[str]]:
    import virtualhome_eval

    root = os.path.join(os.path.dirname(virtualhome_eval.__file__), "resources", "behavior")
    problems = sorted(f for f in os.listdir(os.path.join(root, "problem_pddl")) if f.endswith(".pddl"))
    return root, problems


@pytest.mark.parametrize("index", [0, 42, 50, 63, 88])   # problems whose plans place an object
def test_fast_downwards_plans_for_behavior_run_to_their_goals(index):
    from llm_planner_ros.pddl.fast_downward import solve

    root, problems = behavior_files()
    domain = Path(root, "behavior.pddl").read_text()
    text = Path(root, "problem_pddl", problems[index]).read_text()
    outcome = solve(domain, text, 60.0, "lama-first")
    assert outcome.status == "solved", outcome.detail
    world, problem = PddlWorld.from_texts(domain, text)
    ran, missing = replay(world, outcome.actions)
    assert (ran, missing) == (len(outcome.actions), []) and world.holds(problem.goal)
    # a placement on its own, from the start, misses what the steps before it did: holding the object
    place = next(a for a in outcome.actions if a[0].startswith("place_"))
    fresh, _ = PddlWorld.from_texts(domain, text)
    ran, missing = replay(fresh, [place])
    assert ran == 0 and f"({' '.join(place)}): (holding {place[1]})" in missing
