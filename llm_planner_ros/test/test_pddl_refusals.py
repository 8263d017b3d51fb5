"""The PDDL layer refuses what Fast Downward refuses, naming it; an anytime search's plan is a plan;
the PDDL world executor says why a skill of the wrong shape cannot run."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.pddl import fast_downward
from llm_planner_ros.pddl.semantics import PddlError, PddlWorld

DOMAIN = """(define (domain d) (:requirements :adl :typing) (:types item place)
 (:predicates (at ?i - item ?p - place) (held ?i - item))
 (:action pick :parameters (?i - item ?p - place) :precondition PRE :effect EFF))"""
PROBLEM = "(define (problem p) (:domain d) (:objects c - item k - place) (:init INIT) (:goal (held c)))"


def texts(pre="(at ?i ?p)", eff="(held ?i)", init="(at c k)"):
    return DOMAIN.replace("PRE", pre).replace("EFF", eff), PROBLEM.replace("INIT", init)


@pytest.mark.parametrize("pre, eff, init, error", [
    ("(att ?i ?p)", "(held ?i)", "(at c k)", r"precondition of pick: \(att \?i \?p\) names no predicate"),
    ("(at ?i)", "(held ?i)", "(at c k)", r"precondition of pick: \(at \?i\): at takes 2 argument"),
    ("(at ?i ?p)", "(and (held ?x) (not (at ?i ?p)))", "(at c k)", r"variable \?x is not a parameter of pick"),
    ("(at ?i kitchen)", "(held ?i)", "(at c k)", "'kitchen' is neither a variable nor a constant"),
    ("(at ?i ?p)", "(held ?i)", "(at c q k)", r"initial fact \(at c q k\): at takes 2 argument"),
    ("(at ?i ?p)", "(held ?i)", "(att c k)", r"initial fact \(att c k\): att is no predicate"),
])
def test_a_domain_or_problem_fast_downward_refuses_is_refused_naming_what_is_wrong(pre, eff, init, error):
    """Before: accepted, and the executor ran it its own way (a precondition that can never hold, an
    effect that adds ``(held ?x)`` to the state) where Fast Downward refuses the same texts."""
    domain, problem = texts(pre, eff, init)
    assert fast_downward.solve(domain, problem, 20).status == "error"
    with pytest.raises(PddlError, match=error):
        PddlWorld.from_texts(domain, problem)


@pytest.mark.parametrize("pre, eff, error", [
    ("(= ?i)", "(held ?i)", "'=' takes 2 arguments"),
    ("(exists (?x - item))", "(held ?i)", "exists takes 2 part"),
    ("(at ?i ?p)", "(when (at ?i ?p))", "when takes 2 parts"),
    ("(at ?i ?p)", "(not (and (at ?i ?p)))", r"\(and \(at \?i \?p\)\) names no predicate"),
    ("(forall (?x - thing) (at ?x ?p))", "(held ?i)", r"\?x is of type 'thing', which the domain does not declare"),
])
def test_a_malformed_action_is_refused_when_read_not_with_a_traceback_when_run(pre, eff, error):
    """Before: a ValueError, an IndexError or a TypeError from deep inside, at the first skill."""
    with pytest.raises(PddlError, match=error):
        PddlWorld.from_texts(*texts(pre, eff))


def test_an_empty_precondition_is_no_condition_as_for_fast_downward():
    domain, problem = texts(pre="()")
    assert fast_downward.solve(domain, problem, 20).actions == (("pick", "c", "k"),)
    world, _ = PddlWorld.from_texts(domain, problem)
    assert world.missing(("pick", "c", "k")) == []


@pytest.mark.parametrize("alias", ["lama", "seq-sat-lama-2011"])
def test_an_anytime_search_alias_gives_its_best_plan(alias):
    """Before: "Fast Downward's search exited 0: Solution found", an error, for the driver's own
    aliases that write plan.1, plan.2, ... (and a time-out for one still improving at the limit)."""
    domain, problem = texts()
    outcome = fast_downward.solve(domain, problem, 20, alias=alias)
    assert outcome.status == "solved" and outcome.actions == (("pick", "c", "k"),), outcome
    n = 22   # a plan found at once, then improved on until the time limit
    many = ("(define (domain t) (:requirements :strips) (:predicates (on ?x))"
            " (:action flip :parameters (?x) :precondition (not (on ?x)) :effect (on ?x))"
            " (:action flop :parameters (?x) :precondition (on ?x) :effect (not (on ?x))))")
    objects = " ".join(f"o{i}" for i in range(n))
    goal = " ".join(f"(on o{i})" for i in range(n))
    outcome = fast_downward.solve(many, f"(define (problem p) (:domain t) (:objects {objects}) (:init) "
                                        f"(:goal (and {goal})))", 3, alias=alias)
    assert outcome.status == "solved" and len(outcome.actions) == n, outcome


def test_a_skill_of_the_wrong_shape_says_how_many_objects_it_takes():
    """Before: "there is no apple and cup here I can pick up the" for two objects, and an
    IndexError for fewer ids than objects."""
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.profiles.loader import find_profile

    executor = PddlWorldExecutor(find_profile("mobile_manipulator"))
    before = set(executor.world.state)
    for skill in (Skill("PICK", ("apple", "cup")), Skill("PICK", ()), Skill("PICK_FROM", ("apple", "fridge"), (15,))):
        result = executor.execute(skill)
        assert not result.success and result.failure.type == ErrorType.PARSE_ERROR, result
        assert "takes" in result.failure.message and executor.world.state == before
    assert "PICK takes 1 object(s), given 2" in executor.execute(Skill("PICK", ("apple", "cup"))).failure.message


def test_a_start_world_with_a_fact_the_domain_lacks_is_refused_as_a_profile_error():
    """Before: accepted, its fact kept in the state; now a ProfileError (what the robot node's reset
    answers with), the world as it was."""
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.profiles.loader import ProfileError, find_profile

    profile = find_profile("mobile_manipulator")
    executor = PddlWorldExecutor(profile)
    before = set(executor.world.state)
    bad = profile.world_text.replace("(:init", "(:init (hand_free robot_1 robot_1)", 1)
    assert bad != profile.world_text
    with pytest.raises(ProfileError, match=r"\(hand_free robot_1 robot_1\): hand_free takes 1 argument"):
        executor.start_from(bad)
    assert executor.world.state == before
