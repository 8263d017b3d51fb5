"""Hazards declared with the world (issue 38): refused in goals, avoided in plans, stopped at the
last hop; the real simulator, Fast Downward and the domain semantics, no doubles but a robot
that reports no facts."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from llm_planner_ros.core.errors import CancelToken, HazardStopped
from llm_planner_ros.core.executor import ExecutionResult
from llm_planner_ros.core.types import ErrorType, Skill, TerminationReason
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.pddl.goals import parse_goal
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner
from llm_planner_ros.planning.worlds import load_world
from llm_planner_ros.profiles.loader import ProfileError, find_profile, profile_from_texts, shipped
from llm_planner_ros.safety.gate import SafetyGate, SafetySettings
from llm_planner_ros.safety.hazards import HazardEntry, Hazards, last_hop
from llm_planner_ros.safety.policy import SkillPolicy

VH = load_world()
MM = find_profile("mobile_manipulator")


def plan(world, spec_lines, executor, execute=True):
    planner = GoalDirectedPlanner(executor.profile or VH)   # the world the executor reports
    vocabulary = planner.world.goal_vocabulary()
    return planner.plan(parse_goal(spec_lines, [], vocabulary), executor, lambda e: None, CancelToken(),
                        execute=execute)


def mm_with(init: str, never: str = "") -> PddlWorldExecutor:
    """The mobile manipulator's profile with another start (and, optionally, other hazards)."""
    text = shipped("mobile_manipulator").read_text()
    if never:
        text = text[:text.index("never:")] + never
    world = re.sub(r"\(:init(.*?)\)\s*\(:goal", f"(:init {init})\n  (:goal", MM.world_text, flags=re.S)
    profile = profile_from_texts(text, MM.domain_text, world)
    return PddlWorldExecutor(profile)


def test_the_shipped_worlds_declare_hazards_that_load():
    assert {h.name for h in VH.hazards.hazards} >= {"metal_in_running_appliance", "electronics_in_water"}
    assert {h.entry.type for h in MM.hazards.hazards} >= {"fire", "liquid_damage", "breakage"}


@pytest.mark.parametrize("entry,error", [
    ('{name: a, type: fire, words: w, when: ["(glows ?x)"]}', "never[0] (a).when[0]: unknown predicate 'glows'"),
    ('{name: a, type: fire, words: w, when: ["(on ?x)"]}', "never[0] (a).when[0]: on takes 2 argument(s), got 1"),
    ('{name: a, type: fire, words: w, when: ["(on ?x ?y)", "(not (open ?z))"]}',
     "never[0] (a).when: ?z appears only in negated literals"),
    ('{name: a, type: fire, words: w, when: ["(on ?x ?y)"], classes: {"?x": [unicorn]}}',
     "never[0] (a).classes.?x: 'unicorn' is not an object class"),
    ('{name: a, type: flood, words: w, when: ["(on ?x ?y)"]}', "never.0.type"),
    # a class where one object must be would match no object: the hazard would never hold
    ('{name: a, type: fire, words: w, when: ["(on ?x kettle)"]}',
     "never[0] (a).when[0]: 'kettle' is an object class, and a literal's argument is a variable or one object: "
     "write a variable with its class, e.g. '(on ... ?k ...)' and classes: {'?k': [kettle]}"),
])
def test_a_never_entry_that_does_not_fit_the_domain_is_refused_at_load_with_its_path(entry, error):
    text = shipped("mobile_manipulator").read_text()
    text = text[:text.index("never:")] + f"never:\n  - {entry}\n"
    with pytest.raises(ProfileError) as caught:
        profile_from_texts(text, MM.domain_text, MM.world_text, where="robot.yaml")
    assert error in str(caught.value) and str(caught.value).startswith("robot.yaml"), str(caught.value)


def test_a_never_entry_may_name_one_object_of_the_world():
    """A literal without variables names objects of the world; it is a hazard of its own, not
    one that "holds only negated"."""
    text = shipped("mobile_manipulator").read_text()
    entry = '{name: a, type: fire, words: w, when: ["(switched_on kettle_9)"]}'
    text = text[:text.index("never:")] + f"never:\n  - {entry}\n"
    profile = profile_from_texts(text, MM.domain_text, MM.world_text)
    assert [h.hazard.name for h in profile.hazards.holding([("switched_on", "kettle_9")])] == ["a"]
    assert not profile.hazards.holding([("switched_on", "lamp_10")])


def test_a_goal_that_makes_a_hazard_hold_is_refused_naming_it():
    result = plan(VH, ["(obj_inside knife microwave)", "(on microwave)"], VH.executor("TrimmedTestScene1", ""))
    assert result.termination_reason is TerminationReason.HAZARDOUS_GOAL, result.detail
    assert not result.steps and "a metal object inside a microwave or a toaster that is on" in result.detail
    assert result.hazards == ["fire: a metal object inside a microwave or a toaster that is on "
                              "((obj_inside knife_2003 microwave_297), (on microwave_297))"]
    result = plan(MM, ["(in phone fridge)"], PddlWorldExecutor(MM))   # one literal is enough
    assert result.termination_reason is TerminationReason.HAZARDOUS_GOAL and "electronic device" in result.detail
    # controls: the same objects, no hazard
    for lines in (["(obj_inside knife microwave)"], ["(obj_inside food_food microwave)", "(on microwave)"]):
        result = plan(VH, lines, VH.executor("TrimmedTestScene1", ""))
        assert result.termination_reason is TerminationReason.GOAL_REACHED and not result.hazards, result.detail


def test_a_goal_that_makes_a_hazard_hold_with_the_world_as_it_is_is_refused():
    """Scene 1's toaster is on: "the knife in the toaster" leaves it on, as the goal reads, so
    the goal is refused, naming the fact of the world that takes part; the same goal with the
    toaster off, and the knife in the sink, are not. A fact the goal's literal excludes gives
    way to it: the kettle moved off the desk is no longer beside what the desk holds."""
    result = plan(VH, ["(obj_inside knife toaster)"], VH.executor("TrimmedTestScene1", ""), execute=False)
    assert result.termination_reason is TerminationReason.HAZARDOUS_GOAL, result.detail
    assert result.hazards == ["fire: a metal object inside a microwave or a toaster that is on "
                              "((obj_inside knife_2003 toaster_292), (on toaster_292))"]
    assert "with the rest of the world as it is" in result.detail
    for lines in (["(obj_inside knife toaster)", "(off toaster)"], ["(obj_inside knife sink)"]):
        result = plan(VH, lines, VH.executor("TrimmedTestScene1", ""), execute=False)
        assert result.termination_reason is not TerminationReason.HAZARDOUS_GOAL, (lines, result.detail)
    # the mobile manipulator: its domain's invariants say where the book stops being
    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (switched_on kettle_9) (on book_17 kettle_9)")
    assert MM.hazards.in_world(robot.world_state())   # held before: the goal that moves the book is not blamed
    result = plan(MM, ["(on book desk)", "(switched_on kettle)"], robot, execute=False)
    assert result.termination_reason is not TerminationReason.HAZARDOUS_GOAL, result.detail
    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (on book_17 kettle_9)")
    result = plan(MM, ["(switched_on kettle)"], robot, execute=False)   # switching it on with the book on it
    assert result.termination_reason is TerminationReason.HAZARDOUS_GOAL and "(on book_17 kettle_9)" in result.detail
    result = plan(MM, ["(switched_on kettle)", "(on book desk)"], robot, execute=False)   # the book moved off first
    assert result.termination_reason is not TerminationReason.HAZARDOUS_GOAL, result.detail


def test_a_plan_through_a_hazard_is_planned_again_around_it():
    """Scene 1's toaster is on: the knife in it, and the toaster off at the end, as Fast Downward
    first plans puts the knife in first and makes the hazard hold on the way; the plan with
    every hazard forbidden switches the toaster off first."""
    executor = VH.executor("TrimmedTestScene1", "")
    result = plan(VH, ["(obj_inside knife toaster)", "(off toaster)"], executor)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    program = [s.skill.script() for s in result.steps]
    assert program.index("[SWITCHOFF] <toaster> (292)") < program.index("[PUTIN] <knife> (2003) <toaster> (292)")
    assert "re-planned around the hazard fire" in result.detail and len(result.hazards) == 1
    assert not VH.hazards.in_world(executor.world_state())
    # on a profile's world: the kettle is on, and a book goes on it, the kettle off at the end
    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (switched_on kettle_9) (on book_17 desk_5)")
    result = plan(MM, ["(on book kettle)", "(not (switched_on kettle))"], robot)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert [s.skill.action for s in result.steps].index("SWITCH_OFF") < \
        [s.skill.action for s in result.steps].index("PLACE")
    assert not MM.hazards.in_world(robot.world_state())


def test_no_plan_avoids_the_hazard_ends_no_plan_naming_it():
    never = ('never:\n  - {name: phone_held, type: breakage, words: "the phone in the robot\'s hand", '
             'when: ["(holding ?r ?p)"], classes: {"?p": [phone]}}\n')
    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (on phone_19 desk_5)", never)
    result = plan(robot.profile, ["(has person phone)"], robot)
    assert result.termination_reason is TerminationReason.NO_PLAN, result.detail
    assert "no plan avoids the hazard breakage: the phone in the robot's hand" in result.detail
    assert not robot.history   # nothing ran


def test_a_hazard_that_already_holds_is_reported_not_blamed_on_the_goal():
    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (in phone_19 fridge_7) (on book_17 desk_5)")
    result = plan(MM, ["(on book dining_table)"], robot)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert "a hazard already holds (not the goal's doing): small_item_damage" in result.detail
    # many that hold are counted, not all written out (a building holds hundreds)
    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (in phone_19 fridge_7) (in remote_18 fridge_7) "
                    "(on cup_13 sofa_4) (on mug_14 sofa_4) (on plate_20 sofa_4) (on book_17 desk_5)")
    result = plan(MM, ["(on book dining_table)"], robot)
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert "; and 2 more" in result.detail and result.detail.count("sofa") == 2, result.detail


def test_the_gate_stops_a_skill_that_would_make_a_hazard_hold():
    """The LLM-step methods' guard: the simulator says what the skill would do, and the domain's
    semantics say the same from the facts alone (a world that cannot simulate)."""
    executor = VH.executor("TrimmedTestScene1", "")
    for s in (Skill("WALK", ("knife",)), Skill("GRAB", ("knife",)), Skill("WALK", ("toaster",))):
        assert executor.execute(s).success
    into = Skill("PUTIN", ("knife", "toaster"), text="put knife in toaster")

    class FactsOnly:   # no predict(): the domain's semantics decide
        profile = None

        def world_state(self):
            return executor.world_state()

        def domain_text(self):
            return executor.domain_text()
    for world in (executor, FactsOnly()):
        hits, unknown = last_hop(world, into, VH.hazards)
        assert not unknown and [h.hazard.name for h in hits] == ["metal_in_running_appliance"]
    gate = SafetyGate(executor, SkillPolicy(), SafetySettings(), VH.skill_problem, hazards=VH.hazards)
    with pytest.raises(HazardStopped) as stopped:
        gate.execute(into)
    assert "stopped at the last hop by the planner's gate" in str(stopped.value)
    assert stopped.value.interrupted_skill == into and stopped.value.hazards
    assert "[PUTIN]" not in " ".join(executor.history)   # it never ran
    assert gate.execute(Skill("SWITCHOFF", ("toaster",))).success
    assert gate.execute(into).success   # the toaster is off now
    # gate_hazards false: the gate leaves the check to the bridge (here there is none: it runs)
    executor.reset()
    for s in (Skill("WALK", ("knife",)), Skill("GRAB", ("knife",)), Skill("WALK", ("toaster",))):
        assert executor.execute(s).success
    assert SafetyGate(executor, SkillPolicy(), SafetySettings(gate_hazards=False), VH.skill_problem,
                      hazards=VH.hazards).execute(into).success
    assert [h.hazard.name for h in VH.hazards.in_world(executor.world_state())] == ["metal_in_running_appliance"]


def test_a_world_whose_facts_cannot_be_read_follows_hazard_unknown():
    class Blind:
        profile = None
        sent: list = []

        def world_state(self):
            raise RuntimeError("this robot reports no facts")

        def execute(self, skill):
            self.sent.append(skill)
            return ExecutionResult(True)
    skill = Skill("SWITCHON", ("toaster",))
    gate = SafetyGate(Blind(), SkillPolicy(hazard_unknown="refuse"), SafetySettings(), VH.skill_problem,
                      hazards=VH.hazards)
    with pytest.raises(HazardStopped, match="the hazards cannot be checked.*this robot reports no facts"):
        gate.execute(skill)
    assert not Blind.sent
    gate = SafetyGate(Blind(), SkillPolicy(hazard_unknown="warn"), SafetySettings(), VH.skill_problem,
                      hazards=VH.hazards)
    assert gate.execute(skill).success and Blind.sent == [skill]
    assert "the hazards cannot be checked" in gate.warnings[0]


def test_a_skill_the_bridge_stops_for_a_hazard_stops_the_goal():
    class Bridge:   # what ExecutorClient returns when the bridge refuses with PreconditionFailure.HAZARD
        profile = None

        def world_state(self):
            raise RuntimeError("not asked")

        def execute(self, skill):
            return ExecutionResult.failed(ErrorType.HAZARD, "refused by the executor bridge: it would burn",
                                          "fire: it would burn")
    gate = SafetyGate(Bridge(), SkillPolicy(), SafetySettings(gate_hazards=False), VH.skill_problem,
                      hazards=VH.hazards)
    with pytest.raises(HazardStopped, match="stopped at the last hop by the executor") as stopped:
        gate.execute(Skill("SWITCHON", ("toaster",)))
    assert stopped.value.hazards == ["fire: it would burn"]


def test_a_compiled_problem_keeps_its_meaning_for_fast_downward():
    """The derived predicate forbids exactly the hazards that do not hold yet."""
    from llm_planner_ros.pddl import fast_downward
    from llm_planner_ros.pddl.problem import world_problem

    robot = mm_with("(at robot_1 dock_6) (hand_free robot_1) (in phone_19 fridge_7) (on book_17 desk_5) "
                    "(switched_on kettle_9)")
    world = robot.world_state()
    domain, problem = MM.hazards.compiled(MM.domain_text, world_problem(world, "mobile_manipulator")
                                          .replace("(:goal (and))", "(:goal (on book_17 kettle_9))"), world)
    assert "(:derived (llm_planner_hazard)" in domain and "llm_planner_hazard_2_exempt" in domain
    outcome = fast_downward.solve(domain, problem, 20.0)
    assert outcome.status == "solved", outcome.detail
    assert [a[0] for a in outcome.actions].index("switch_off") < [a[0] for a in outcome.actions].index("place")


def test_hazards_load_from_a_file_with_the_profile_schema(tmp_path: Path):
    from llm_planner_ros.safety.hazards import read_hazards

    path = tmp_path / "hazards.yaml"
    path.write_text("never:\n  - {name: x, type: fire, words: w, when: ['(switched_on ?a)'], classes: {'?a': [tv]}}\n")
    assert len(read_hazards(path, MM.domain, MM.spec.objects)) == 1
    path.write_text("never:\n  - {name: x, type: fire, words: w, when: ['(burning ?a)']}\n")
    with pytest.raises(ValueError, match=r"hazards.yaml: never\[0\] \(x\).when\[0\]: unknown predicate"):
        read_hazards(path, MM.domain, MM.spec.objects)
    path.write_text("nevr:\n  - {name: x, type: fire, words: w, when: ['(switched_on ?a)']}\n")   # a typo
    with pytest.raises(ValueError, match=r"hazards.yaml: a mapping with one key, 'never:' \(got \['nevr'\]\)"):
        read_hazards(path, MM.domain, MM.spec.objects)
    assert not Hazards([], MM.domain) and len(Hazards([HazardEntry(name="y", type="slip", words="w",
                                                                   when=("(on ?a ?b)",))], MM.domain)) == 1


def test_an_unsafe_program_reaches_its_hazard_unguarded_and_is_stopped_by_the_gate():
    """bench/hazards.py's last-hop rows on two requests: the program Fast Downward writes with no
    hazard in mind reaches the hazard straight on the simulator, and the gate stops it; the
    control's program runs whole either way."""
    from llm_planner_ros.evaluation.hazards import REQUESTS, STOPPED, run_programs

    chosen = [r for r in REQUESTS if r.task in ("Put the knife in the toaster", "Put the knife in the sink")]
    unguarded, guarded = run_programs(False, chosen), run_programs(True, chosen)
    assert [bool(r["reached"]) for r in unguarded] == [True, False], unguarded
    assert [r["outcome"] for r in guarded] == [STOPPED, "none"] and not any(r["reached"] for r in guarded)
    assert guarded[1]["success"] and guarded[0]["steps"] and "[PUTIN]" not in " ".join(guarded[0]["steps"])


def test_a_plan_only_answer_never_hands_back_a_hazardous_step():
    """A plan-only LLM-step plan is replayed on the world model before it is handed back: it
    stops before the step that makes a hazard hold, and the goal ends hazard_stopped."""
    from llm_planner_ros.core.types import PlanResult, PlanStep
    from llm_planner_ros.evaluation.hazards import REQUESTS, unsafe_program
    from llm_planner_ros.planning.plan_check import check_plan

    request = next(r for r in REQUESTS if r.task == "Put the knife in the toaster")
    program = unsafe_program(VH.executor("TrimmedTestScene1", ""), request)
    result = PlanResult(TerminationReason.END_OF_PLAN, ending="planned",
                        steps=[PlanStep(index=i, generated_text=s.text, skill=s) for i, s in enumerate(program, 1)])
    checked = check_plan(result, lambda: VH.executor("TrimmedTestScene1", ""), VH.hazards)
    assert checked.termination_reason is TerminationReason.HAZARD_STOPPED and not checked.success
    assert [s.skill.action for s in checked.steps] == [s.action for s in program][:len(checked.steps)]
    assert "PUTIN" not in [s.skill.action for s in checked.steps] and "is withheld" in checked.detail
    assert checked.hazards and "metal object" in checked.hazards[0]


def test_a_state_checked_after_a_few_changes_finds_what_a_fresh_check_finds():
    """Issue 41: a step's check patches the last state's indexes with the facts the step changed,
    and keeps the last states' hazards by content; both must find exactly what a check from
    nothing finds, state after state, whether the state comes as the same or as a new object."""
    import random

    from llm_planner_ros.profiles.loader import load_profile

    profile = load_profile(shipped("mobile_manipulator"))
    world = PddlWorldExecutor(profile).world_state()
    kept = Hazards(profile.spec.never, profile.domain)
    rng = random.Random(3)
    items = sorted(o for o, t in world.objects.items() if t == "item")
    places = sorted(o for o, t in world.objects.items() if t in ("place", "appliance", "container"))
    state = set(world.facts)
    for _ in range(60):
        for _ in range(rng.randint(1, 3)):   # a step: move an item, switch an appliance, or more
            item = rng.choice(items)
            state = {a for a in state if not (a[0] in ("on", "in") and a[1] == item)}
            state.add((rng.choice(("on", "in")), item, rng.choice(places)))
            appliance = rng.choice([p for p in places if world.objects[p] == "appliance"])
            state ^= {("switched_on", appliance)}
        fresh = [h.text() for h in Hazards(profile.spec.never, profile.domain).holding(frozenset(state), world.classes)]
        for facts in (frozenset(state), set(state), frozenset(state)):
            assert [h.text() for h in kept.holding(facts, world.classes)] == fresh


def test_a_goal_read_with_the_world_finds_what_a_check_of_the_whole_state_finds():
    """A goal's check reads only the bindings that the facts it changes take part in; it must
    find exactly the new hazards that a check of the whole state it describes finds (the world
    with the goal's atoms made true and what they exclude, or negate, made false), goal after
    goal, on random worlds of the mobile manipulator."""
    import random

    from llm_planner_ros.core.world import WorldState
    from llm_planner_ros.pddl.goals import GroundGoal
    from llm_planner_ros.profiles.loader import load_profile
    from llm_planner_ros.safety.hazards import _displaced

    profile = load_profile(shipped("mobile_manipulator"))
    start = PddlWorldExecutor(profile).world_state()
    entries = [*profile.spec.never, HazardEntry(   # and one with a negation: a goal that switches off makes it
        name="left_in_the_cold", type="appliance_misuse", words="something left in an appliance that is off",
        when=("(in ?x ?a)", "(not (switched_on ?a))"))]
    exclusive = profile.exclusive
    rng = random.Random(5)
    items = sorted(o for o, t in start.objects.items() if t == "item")
    places = sorted(o for o, t in start.objects.items() if t in ("place", "appliance", "container"))
    appliances = [p for p in places if start.objects[p] == "appliance"]
    state, refused = set(start.facts), 0
    for _ in range(80):
        item = rng.choice(items)   # a world: an item moved, an appliance switched
        state = {a for a in state if not (a[0] in ("on", "in") and a[1] == item)}
        state.add((rng.choice(("on", "in")), item, rng.choice(places)))
        state ^= {("switched_on", rng.choice(appliances))}
        world = WorldState(start.objects, frozenset(state), start.classes)
        positive = {(rng.choice(("on", "in")), rng.choice(items), rng.choice(places))
                    for _ in range(rng.randint(1, 2))} | {("switched_on", a) for a in appliances if rng.random() < 0.3}
        negative = {("switched_on", a) for a in appliances if rng.random() < 0.2} - positive
        literals = [(False, (a,)) for a in sorted(positive)] + [(True, (a,)) for a in sorted(negative)]
        goal = GroundGoal((tuple(literals),), (), frozenset())
        hazards = Hazards(entries, profile.domain)
        facts = frozenset(state)
        index, by_arg = hazards._indexes(facts)
        gone = negative | {b for a in positive for b in _displaced(a, exclusive, index, by_arg, facts)}
        whole = (facts - gone) | positive
        before = {h.text() for h in Hazards(entries, profile.domain).holding(facts, world.classes)}
        expected = sorted(h.text() for h in Hazards(entries, profile.domain).holding(whole, world.classes)
                          if h.text() not in before)
        assert sorted(h.text() for h in hazards.implied(goal, world, exclusive)) == expected, (positive, negative)
        refused += bool(expected)
    assert 10 <= refused <= 70   # both kinds of goal were tried
