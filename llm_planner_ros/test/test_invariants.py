"""What cannot hold together: the pairs a world names, and the invariants Fast Downward's translator
proves of a profile's domain (run for real, in its child process)."""
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.conditions import Condition, Match, contradicts, implied, resolve
from llm_planner_ros.pddl.goals import contradictions, ground_goal, parse_goal
from llm_planner_ros.pddl.invariants import Exclusive, domain_invariants, excluded, pairs
from llm_planner_ros.profiles.loader import find_profile, profile_from_texts


def test_the_mobile_manipulators_invariants_come_from_its_domain():
    profile = find_profile("mobile_manipulator")
    found = {str(x) for x in domain_invariants(profile.domain_text)}
    # the robot is at one place; its hand is free or holds one item; an item is on one place, in
    # one container, held, or had by one person: never two of these
    assert "(at ?0 ?)" in found
    assert "(hand_free ?0) | (holding ?0 ?)" in found
    assert "(has ? ?0) | (holding ? ?0) | (in ?0 ?) | (on ?0 ?)" in found
    mutex = profile.goal_vocabulary().mutex
    assert excluded(("on", "mug_1", "person_1"), ("has", "person_1", "mug_1"), mutex)
    assert excluded(("on", "mug_1", "desk_1"), ("on", "mug_1", "sofa_1"), mutex)
    assert excluded(("in", "mug_1", "fridge_1"), ("on", "mug_1", "fridge_1"), mutex)   # the profile's own pair too
    assert not excluded(("on", "mug_1", "desk_1"), ("on", "apple_1", "desk_1"), mutex)
    assert not excluded(("has", "person_1", "mug_1"), ("has", "person_1", "apple_1"), mutex)


def test_an_interpreted_goal_keeps_the_better_matched_of_two_excluded_conditions():
    mutex = find_profile("mobile_manipulator").goal_vocabulary().mutex
    has = Condition("The person has the mug.", ("(has person mug)",))
    on = Condition("The mug is on the person.", ("(on mug person)",))
    assert contradicts(has, on, mutex) and not contradicts(has, on, pairs([("in", "on")]))
    kept, dropped = resolve([Match("a", on, 0.7), Match("b", has, 0.8)], mutex)
    assert kept == [has] and "contradicts" in dropped[0]
    # a negation the rest makes true says nothing more; one it does not make true does
    assert implied(Condition("The mug is not in the fridge.", ("(not (in mug fridge))",)), [has], mutex)
    assert not implied(Condition("The apple is not in the fridge.", ("(not (in apple fridge))",)), [has], mutex)
    assert not implied(Condition("The fridge is closed.", ("(not (open fridge))",)), [has], mutex)


def test_a_goal_the_domain_excludes_ends_before_planning_unless_the_world_already_breaks_it():
    profile = find_profile("mobile_manipulator")
    vocabulary = profile.goal_vocabulary()
    world = WorldState({"mug_1": "mug", "desk_1": "desk", "sofa_1": "sofa", "robot_1": "robot"},
                       frozenset({("on", "mug_1", "desk_1"), ("at", "robot_1", "sofa_1")}))
    goal = ground_goal(parse_goal(["(on mug_1 desk_1)", "(on mug_1 sofa_1)"], [], vocabulary), world, vocabulary)
    assert contradictions(goal, vocabulary.mutex, world.facts) == ["(on mug_1 desk_1) and (on mug_1 sofa_1)"]
    broken = WorldState(world.objects, world.facts | {("on", "mug_1", "sofa_1")})
    assert contradictions(goal, vocabulary.mutex, broken.facts) == []


def test_a_profiles_invariant_its_reference_world_breaks_is_not_used():
    profile = find_profile("mobile_manipulator")
    world = profile.world_text.replace("(:init", "(:init (on apple_15 kitchen_counter_2)", 1)
    assert world != profile.world_text
    other = profile_from_texts(profile.text, profile.domain_text, world)
    kept = {str(x) for x in other.exclusive}
    assert "(at ?0 ?)" in kept and not any("(on ?0 ?)" in x for x in kept)


def test_a_pair_excludes_its_two_predicates_over_the_same_objects_only():
    on_off = Exclusive.pair("on", "off")
    assert on_off.excludes(("on", "tv"), ("off", "tv"))
    assert not on_off.excludes(("on", "tv"), ("off", "lamp"))
    assert not on_off.excludes(("on", "tv"), ("on", "tv"))
    assert on_off.broken([("on", "tv"), ("off", "tv"), ("on", "lamp")]) == {("tv",)}


def test_a_domain_the_translator_cannot_read_has_no_invariants():
    assert domain_invariants("(define (domain broken) (:predicates (p ?x)") == ()


def test_a_given_goal_the_domain_excludes_ends_no_plan_naming_both_facts():
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.types import TerminationReason
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner
    profile = find_profile("mobile_manipulator")
    executor = PddlWorldExecutor(profile)
    planner = GoalDirectedPlanner(profile)
    goal = parse_goal(["(has person apple)", "(on apple dining_table)"], [], planner.world.goal_vocabulary())
    result = planner.plan(goal, executor, lambda e: None, CancelToken(), execute=True)
    assert result.termination_reason is TerminationReason.NO_PLAN and not result.steps
    assert "contradicts itself: (has person_12 apple_15) and (on apple_15 dining_table_3)" in result.detail
    # each alone has a plan
    alone = planner.plan(parse_goal(["(has person apple)"], [], planner.world.goal_vocabulary()), executor,
                         lambda e: None, CancelToken(), execute=False)
    assert alone.termination_reason is not TerminationReason.NO_PLAN and alone.steps


def test_a_class_read_as_the_instance_the_task_names_cannot_contradict_that_instances_condition():
    """"Bring Lena's mug to Farah": "the mug is on Farah" binds to Lena's mug, beside "Farah has
    Lena's mug"; the better-scored of the two stays (the building lost "bring" goals to this)."""
    from llm_planner_ros.interpretation.interpreter import GoalInterpreter, Interpretation
    from llm_planner_ros.interpretation.menu import Scored

    mutex = find_profile("mobile_manipulator").goal_vocabulary().mutex
    interpreter = GoalInterpreter(None, None, [], lambda w: [], mutex=mutex)
    world = WorldState({"lena_mug": "item", "farah": "person", "mug_3": "item"}, frozenset(),
                       classes={"lena_mug": "mug", "farah": "person", "mug_3": "mug"})
    on = Condition("The mug is on Farah.", ("(on mug farah)",))
    has = Condition("Farah has Lena's mug.", ("(has farah lena_mug)",))
    found = Interpretation([], [], [on, has], [])
    found.menu = [Scored(has, 0.84, -1.0, 0.84, ("said",)), Scored(on, 0.72, -1.0, 0.72, ("said",))]
    interpreter._named_consistent(found, world, ("lena_mug", "farah"))
    assert found.conditions == [has] and "contradicts" in found.dropped[-1]
    # with two mugs named, the class is not one of them: nothing is dropped
    found = Interpretation([], [], [on, has], [])
    interpreter._named_consistent(found, world, ("lena_mug", "mug_3", "farah"))
    assert found.conditions == [on, has]
