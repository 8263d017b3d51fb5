"""World profiles (issue 23 groundwork): the shipped mobile manipulator's profile loads and
validates against its domain; a broken profile is refused with what is wrong; its skills run on
the PDDL world executor, and a precondition failure comes back in the profile's words."""
from __future__ import annotations

import re
import shutil

import pytest

from helpers.generated_profiles import NAMED, named_profile
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.profiles.loader import ProfileError, load_profile, shipped, synonyms
from llm_planner_ros.wiring import ServiceConfig, compose


def test_the_shipped_mobile_manipulator_profile_validates():
    profile = load_profile(shipped("mobile_manipulator"))
    assert profile.name == "mobile_manipulator" and len(profile.spec.examples) >= 10
    assert {a.skill for a in profile.spec.actions.values()} >= {"NAVIGATE_TO", "PICK", "PLACE", "OPEN", "HAND_OVER"}
    assert profile.say("(holding robot_1 cup_13)") == "I am holding the cup"
    assert profile.say("(not (open fridge_7))") == "the fridge is closed"
    assert profile.why_not("(holding robot_1 cup_13)") == "I am not holding the cup"
    assert profile.why_not("(not (open fridge_7))") == "the fridge is open"
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
    (("agent: robot_1", "agent: robot_1\ngoal_classes: all"), "goal_classes: Input should be 'any' or 'every'"),
    (('exclusive: [[in, "on"]]', "exclusive: [[open, ajar]]"),
     "exclusive: ajar is not a predicate of the domain"),
    (("  plate: [dish]\n", "  plate: [dish]\n  plate: [platter]\n"), "the key 'plate' is given twice"),
    (("  plate: [dish]\n", "  plate: [dish, '  ']\n"), "objects.plate.1: String should have at least 1 character"),
    (("  plate: [dish]\n", "  plate: [dish]\n  coffee table: [table]\n"), "objects.coffee table.[key]: String "
     "should match pattern"),
    (('args: ["?i"], words: "pick up the {0}"', 'args: ["?i", "?i"], words: "pick up the {0}"'),
     "actions.pick.args: ?i is given twice"),
    (('args: ["?i"], words: "pick up the {0}"', 'args: ["?i"], words: "pick up the {x}"'),
     "actions.pick.words: 'pick up the {x}' has a brace outside a slot"),
    (('{task: "Open the fridge",', '{task: "  ",'), "examples.5.task: String should have at least 1 character"),
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


def test_a_world_file_that_is_not_pddl_is_refused_naming_the_file(tmp_path):
    source = shipped("mobile_manipulator").parent
    for f in source.iterdir():
        shutil.copy(f, tmp_path / f.name)
    world = tmp_path / "world.pddl"
    world.write_text(world.read_text().rstrip().removesuffix(")"))   # one parenthesis short
    with pytest.raises(ProfileError, match=re.escape(f"{tmp_path / 'profile.yaml'}: world: not a PDDL problem: ")):
        load_profile(tmp_path / "profile.yaml")


@pytest.mark.parametrize("fact,problem", [
    ("(hand_free robot_1 robot_1)", "world: the fact (hand_free robot_1 robot_1): hand_free takes 1 argument(s)"),
    ("(flying robot_1)", "world: the fact (flying robot_1): flying is no predicate of the domain"),
])
def test_a_world_fact_the_domain_cannot_state_is_refused_when_the_profile_loads(tmp_path, fact, problem):
    source = shipped("mobile_manipulator").parent
    for f in source.iterdir():
        shutil.copy(f, tmp_path / f.name)
    world = tmp_path / "world.pddl"
    world.write_text(world.read_text().replace("(:init", f"(:init {fact}", 1))
    with pytest.raises(ProfileError, match=re.escape(problem)):
        load_profile(tmp_path / "profile.yaml")


def test_a_fact_marked_unobserved_in_the_profile_is_not_checked_after_a_skill(tmp_path):
    source = shipped("mobile_manipulator").parent
    for f in source.iterdir():
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "profile.yaml"
    text = path.read_text()
    assert 'hand_free: {words: "my hand is free", negated: "my hand is not free"}' in text
    path.write_text(text.replace('negated: "my hand is not free"}', 'negated: "my hand is not free", observed: false}'))
    assert load_profile(path).planning_domain().unobserved == {"hand_free"}
    assert load_profile(shipped("mobile_manipulator")).planning_domain().unobserved == frozenset()


def test_skills_run_on_the_pddl_world_and_failures_come_back_in_the_profiles_words():
    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    assert "cup" in executor.objects and "robot" in executor.objects
    failed = executor.execute(Skill("PLACE", ("cup", "dining_table")))
    assert not failed.success and failed.failure.type is ErrorType.OTHER_PRECONDITION
    assert failed.failure.cause == "I am not at the dining table", failed.failure
    absent = executor.execute(Skill("PLACE", ("cup", "unicorn"))).failure.cause
    assert absent == "I cannot put the cup on the unicorn: there is no unicorn here", absent
    assert executor.execute(Skill("NAVIGATE_TO", ("kitchen_counter",))).success
    picked = executor.execute(Skill("PICK", ("cup",)))
    assert picked.success and "I am holding the cup" in picked.observation
    again = executor.execute(Skill("PICK", ("apple",)))
    assert not again.success and again.failure.cause == "I am not at the dining table"   # where the apple is
    assert executor.execute(Skill("NAVIGATE_TO", ("person",))).success
    handed = executor.execute(Skill("HAND_OVER", ("cup", "person")))
    assert handed.success and "the person has the cup" in handed.observation
    world = executor.world_state()
    assert ("has", "person_12", "cup_13") in world.facts
    assert world.classes["cup_13"] == "cup" and world.ids["cup_13"] == 13
    closed = executor.execute(Skill("PICK_FROM", ("milk", "fridge")))
    assert not closed.success
    assert executor.execute(Skill("FLY", ("cup",))).failure.type is ErrorType.PARSE_ERROR
    skills = executor.applicable_skills()
    assert Skill("NAVIGATE_TO", ("fridge",), text="go to the fridge") in skills
    assert all(s.action != "PICK" for s in skills)   # nothing to pick where the robot stands
    executor.reset()
    assert ("at", "robot_1", "dock_6") in executor.world.state and not executor.history


def test_a_plan_by_fast_downward_runs_on_the_profiles_world():
    """The domain and world are what Fast Downward reads: its plan for an example goal runs, skill
    by skill through the profile's mapping, to the goal."""
    from llm_planner_ros.pddl.fast_downward import solve

    profile = load_profile(shipped("mobile_manipulator"))
    executor = PddlWorldExecutor(profile)
    problem = profile.world_text.replace("(:goal (and))",
                                         "(:goal (and (has person_12 apple_15) (in milk_16 cupboard_8)))")
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
    assert {("has", "person_12", "apple_15"), ("in", "milk_16", "cupboard_8")} <= executor.world.state


# -- the planner over a profile's world ---------------------------------------------------------
def profile_service(smollm2, embedder, demos, executor, approver=None):

    def reset(scene: str, task: str) -> PddlWorldExecutor:
        executor.reset()
        return executor
    return compose(ServiceConfig(), llm=smollm2, embedder=embedder, demos=demos, executor_factory=reset,
                   robot_world=lambda executes: executor, approver=approver)


def test_pddl_plans_and_executes_over_a_profiles_world(smollm2, embedder, demos):
    """The probe's robot world: goal literals over its own predicates and classes, the agent by
    its words; each skill passes the gate against the profile and runs on the PDDL executor."""
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.types import TerminationReason

    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    service = profile_service(smollm2, embedder, demos, executor)
    steps = []
    result = service.plan(parse_request(task="Bring me the apple and put the milk away", method="pddl", execute=True,
                                        goal_conditions=["(has person apple)", "(in milk cupboard)",
                                                         "(at robot dock)"]),
                          steps.append, CancelToken())
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert [s.skill.action for s in result.steps][:1] == ["NAVIGATE_TO"]
    assert result.steps[0].skill.text.startswith("go to the ")
    assert {("has", "person_12", "apple_15"), ("in", "milk_16", "cupboard_8"), ("at", "robot_1", "dock_6")} \
        <= executor.world.state
    planned = service.plan(parse_request(task="Turn on the light", method="pddl",
                                         goal_conditions=["(switched_on light)"]), lambda e: None, CancelToken())
    assert planned.termination_reason is TerminationReason.END_OF_PLAN, planned.detail
    assert planned.steps[-1].skill.script() == "[SWITCH_ON] <lamp> (10)"


@pytest.mark.parametrize("fields, message", [
    ({"goal_conditions": ["(on tv)"]}, "'on' takes 2 argument"),
    ({"goal_conditions": ["(teleported robot)"]}, "unknown predicate 'teleported'"),
    ({"goal_conditions": ["(at robot spaceship)"], "execute": True}, "unknown object 'spaceship'"),
    ({"action_goals": ["WATCH"]}, "this world has no action goals"),
])
def test_a_goal_is_checked_against_the_profiles_world(smollm2, embedder, demos, fields, message):
    from llm_planner_ros.core.errors import CancelToken, InvalidGoal
    from llm_planner_ros.core.request import parse_request

    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    service = profile_service(smollm2, embedder, demos, executor)
    with pytest.raises(InvalidGoal, match=message):
        service.plan(parse_request(task="Do it", method="pddl", **fields), lambda e: None, CancelToken())


def test_the_gate_checks_a_skill_against_the_profile():
    from llm_planner_ros.safety.policy import SkillPolicy

    profile = load_profile(shipped("mobile_manipulator"))
    executor = PddlWorldExecutor(profile)
    policy = SkillPolicy(object_denylist=["kettle"])
    check = profile.skill_problem
    assert policy.refusal(Skill("PICK", ("cup",), (13,)), check, executor.instance_class) == ""
    assert "not a skill of the mobile_manipulator profile" in policy.refusal(Skill("GRAB", ("cup",)), check)
    assert "is a 'mug', not a 'cup'" in policy.refusal(Skill("PICK", ("cup",), (14,)), check, executor.instance_class)
    assert "'kettle' is not allowed" in policy.refusal(Skill("SWITCH_ON", ("kettle",)), check)
    assert "'spaceship' is not an object class" in policy.refusal(Skill("PICK", ("spaceship",)), check)


def test_a_named_instance_is_checked_by_its_class_for_hazards_and_the_policys_lists(tmp_path):
    """A skill that names a named instance (no ids: as the LLM-step methods send it) is held to
    the hazards and deny lists of its declared class, on a robot that cannot predict (the
    bridge's path) as on the planner's gate."""
    from llm_planner_ros.safety.hazards import last_hop
    from llm_planner_ros.safety.policy import SkillPolicy

    path = named_profile(tmp_path, NAMED + "  bobs_lamp: lamp\n")
    world = tmp_path / "world.pddl"
    world.write_text(world.read_text().replace("lamp_10", "bobs_lamp"))
    profile = load_profile(path)
    executor = PddlWorldExecutor(profile)
    executor.start_from(facts=["(at robot_1 bobs_lamp)", "(holding robot_1 book_17)", "(switched_on bobs_lamp)"])

    class Robot:   # a robot's world as the bridge reads it (ros/executor_bridge.RobotWorld): nothing predicted
        def __init__(self) -> None:
            self.profile = profile

        def world_state(self):
            return executor.world_state()
    place = Skill("PLACE", ("book", "bobs_lamp"))
    assert [h.hazard.name for h in last_hop(Robot(), place, profile.hazards)[0]] == ["object_on_hot_appliance"]
    policy = SkillPolicy(object_denylist=["lamp"])
    assert policy.refusal(Skill("SWITCH_OFF", ("bobs_lamp",)), profile.skill_problem, executor.instance_class,
                          profile.class_of) == "the object 'bobs_lamp' (a lamp) is not allowed on this robot"
    named = Skill("SWITCH_OFF", ("bobs_lamp",), (-1,))
    assert "(a lamp) is not allowed" in policy.list_refusal(named, profile.class_of)


class RecordingPddlExecutor(PddlWorldExecutor):
    """The real PDDL world executor, keeping each result (to see the failures the planner got)."""

    def __init__(self, profile) -> None:
        self.results: list = []
        super().__init__(profile)

    def execute(self, skill):
        result = super().execute(skill)
        self.results.append((skill, result))
        return result


def test_reprompt_corrects_a_failure_given_in_the_profiles_words(smollm2, embedder, demos):
    """The LLM methods over a profile: its skill bank, its examples planned into demonstrations.
    The embedded model first picks up the phone where it is not; the executor says why in the
    profile's words, the re-prompt carries it, and the corrected step runs."""
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request

    executor = RecordingPddlExecutor(load_profile(shipped("mobile_manipulator")))
    service = profile_service(smollm2, embedder, demos, executor)
    result = service.plan(parse_request(task="Give me my phone", method="reprompt", execute=True,
                                        options={"max_corrections_per_step": 3}), lambda e: None, CancelToken())
    failures = [(s.script(), r.failure.cause) for s, r in executor.results if not r.success]
    assert failures, [s.script() for s, _ in executor.results]
    assert all(cause.startswith(("I am", "the ", "my ")) for _, cause in failures), failures   # the profile's words
    corrected = [s for s in result.steps if s.corrections > 0 and s.executed]
    assert corrected, [(s.skill.script(), s.corrections) for s in result.steps]
    assert ("has", "person_12", "phone_19") in executor.world.state, result.program


def test_heuristic_searches_a_profiles_world_to_the_given_goal(smollm2, embedder, demos):
    """Borro et al.'s search over the applicable actions of the PDDL world, stopped by the goal
    conditions (a profile's world has no goal check of its own, so they are required)."""
    from llm_planner_ros.core.errors import CancelToken, InvalidGoal
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.types import TerminationReason

    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    service = profile_service(smollm2, embedder, demos, executor)
    with pytest.raises(InvalidGoal, match="give goal_conditions"):
        service.plan(parse_request(task="Go to the counter", method="heuristic", execute=True),
                     lambda e: None, CancelToken())
    with pytest.raises(InvalidGoal, match="guide: the heuristic's guide prompt shows the default world's"):
        service.plan(parse_request(task="Go to the counter", method="heuristic", execute=True,
                                   goal_conditions=["(at robot counter)"], options={"guide": "high_level"}),
                     lambda e: None, CancelToken())
    result = service.plan(parse_request(task="Go to the kitchen counter", method="heuristic", execute=True,
                                        goal_conditions=["(at robot counter)"]), lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert result.program[-1] == "[NAVIGATE_TO] <kitchen_counter> (1)"
    assert ("at", "robot_1", "kitchen_counter_2") in executor.world.state


def test_a_profiles_goal_conditions_are_said_in_its_words():
    """What interpret translates to: each fact over the classes its types admit, negated where the
    profile says how, with the acts that bring it about and the objects' other words."""
    from llm_planner_ros.profiles.conditions import profile_conditions, profile_goal_demos
    from llm_planner_ros.profiles.skills import reference_world

    profile = load_profile(shipped("mobile_manipulator"))
    conditions = {c.literals[0]: c for c in profile_conditions(profile, reference_world(profile))}
    assert conditions["(on milk dining_table)"].text == "The milk is on the dining table."
    assert {"The milk is on the table.", "Put the milk on the dining table.", "Put the milk on the table."} \
        <= set(conditions["(on milk dining_table)"].aliases)
    assert conditions["(not (switched_on tv))"].text == "The tv is off."
    assert "Switch off the television." in conditions["(not (switched_on tv))"].aliases
    assert conditions["(holding robot cup)"].aliases[-1] == "Pick up the glass."   # the fact's own objects only
    assert "(on milk person)" in conditions and "(in milk dining_table)" not in conditions   # types admit
    assert not any("(not (on" in lit and "Pick up" in " ".join(c.aliases) for lit, c in conditions.items())
    demos = profile_goal_demos(profile, list(conditions.values()))
    assert demos[0].task == "Bring me the apple" and demos[0].sentences == ("The person has the apple.",)


def test_interpret_reads_the_task_in_a_profiles_words_and_reaches_it(smollm2, embedder, demos):
    """Method interpret on a profile: the embedded model says the end state after the profile's
    examples; each sentence is translated to the profile's conditions, grounded, planned and run."""
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.types import TerminationReason

    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    service = profile_service(smollm2, embedder, demos, executor)
    result = service.plan(parse_request(task="Put the mug in the fridge", method="interpret", execute=True),
                          lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert "(in mug_14 fridge_7)" in result.goal_conditions and ("in", "mug_14", "fridge_7") in executor.world.state
    assert result.detail.startswith("interpreted 'The mug is in the fridge.'"), result.detail


def test_interpret_on_a_profile_without_examples_is_zero_shot_and_says_so(smollm2, embedder, demos, tmp_path):
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.types import TerminationReason

    shutil.copytree(shipped("mobile_manipulator").parent, tmp_path / "mm")
    path = tmp_path / "mm" / "profile.yaml"
    text = path.read_text()
    path.write_text(text[:text.index("examples:")])
    executor = PddlWorldExecutor(load_profile(path))
    service = profile_service(smollm2, embedder, demos, executor)
    result = service.plan(parse_request(task="Open the fridge", method="interpret", execute=True),
                          lambda e: None, CancelToken())
    assert result.detail.startswith("zero-shot (the mobile_manipulator profile has no example goals)"), result.detail
    # no example calibrates the confidence: the goal waits for an operator, and nobody can be asked
    assert result.termination_reason is TerminationReason.UNCONFIRMED, result.detail
    assert "(open fridge_7)" in result.detail and ("open", "fridge_7") not in executor.world.state
    confirmed = profile_service(smollm2, embedder, demos, executor, lambda *args, **kw: (True, ""))
    result = confirmed.plan(parse_request(task="Open the fridge", method="interpret", execute=True),
                            lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert ("open", "fridge_7") in executor.world.state


def test_a_profile_too_large_to_validate_quickly_is_refused_unread(tmp_path):
    """Issue 35: a valid profile holding one 50 MB example took 14.5 s and 181 MB to validate. A
    profile, its domain and its world are bounded; a larger one is refused by its size alone."""
    from llm_planner_ros.profiles.loader import MAX_PROFILE_BYTES, MAX_WORLD_BYTES, profile_from_texts

    source = shipped("mobile_manipulator")
    for name in ("profile.yaml", "domain.pddl", "world.pddl"):
        shutil.copy(source.parent / name, tmp_path / name)
    load_profile(tmp_path / "profile.yaml")
    for name, limit in (("domain.pddl", MAX_PROFILE_BYTES), ("world.pddl", MAX_WORLD_BYTES),
                        ("profile.yaml", MAX_PROFILE_BYTES)):
        original = (tmp_path / name).read_text()
        with open(tmp_path / name, "a") as f:
            f.write(";" + "x" * limit + "\n" if name.endswith(".pddl") else "#" + "x" * limit + "\n")
        with pytest.raises(ProfileError, match=f"the limit is {limit:,}"):
            load_profile(tmp_path / "profile.yaml")
        (tmp_path / name).write_text(original)
    with pytest.raises(ProfileError, match=f"its profile is .* bytes; the limit is {MAX_PROFILE_BYTES:,}"):
        profile_from_texts(source.read_text() + "#" * MAX_PROFILE_BYTES, (source.parent / "domain.pddl").read_text())


# -- instances with their own names (issue 40) ---------------------------------------------------
def test_a_profile_whose_instances_keep_their_own_names_validates_and_plans(tmp_path, smollm2, embedder, demos):
    """Instances named as a real map names them (bob_desk, alice), their classes declared: the
    profile validates, says them in its words, and pddl plans and runs goals that name them, or
    their class."""
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.types import TerminationReason

    profile = load_profile(named_profile(tmp_path, NAMED))
    assert profile.class_of("bob_desk") == "desk" and profile.class_of("cup_13") == "cup"
    assert profile.say("(on book_17 bob_desk)") == "the book is on Bob's desk"
    assert synonyms(profile)["alice"] == "alice" and synonyms(profile)["bob's desk"] == "bob_desk"
    executor = PddlWorldExecutor(profile)
    world = executor.world_state()
    assert world.classes["alice"] == "person" and "alice" not in world.ids and world.instances_of("desk") == [
        "bob_desk", "carol_desk"]
    service = profile_service(smollm2, embedder, demos, executor)
    result = service.plan(parse_request(task="Take the book to Carol's desk and give Alice the apple", method="pddl",
                                        execute=True, goal_conditions=["(on book carol_desk)", "(has alice apple)"]),
                          lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.GOAL_REACHED, result.detail
    assert {("on", "book_17", "carol_desk"), ("has", "alice", "apple_15")} <= executor.world.state
    scripts = [s.skill.script() for s in result.steps]
    assert "[NAVIGATE_TO] <bob_desk> (-1)" in scripts and "[PLACE] <book> (17) <carol_desk> (-1)" in scripts, scripts
    assert "[HAND_OVER] <apple> (15) <alice> (-1)" in scripts, scripts
    by_class = service.plan(parse_request(task="Give the person the cup", method="pddl", execute=True,
                                          goal_conditions=["(has person cup)"]), lambda e: None, CancelToken())
    assert by_class.termination_reason is TerminationReason.GOAL_REACHED, by_class.detail
    assert ("has", "alice", "cup_13") in executor.world.state
    from llm_planner_ros.profiles.conditions import profile_conditions

    said = {c.text for c in profile_conditions(profile, world, profile.named_in("Give Alice the book from Bob's desk"))}
    assert "Alice has the book." in said and "The book is on Bob's desk." in said, sorted(said)[:20]


def test_which_desk_is_asked_when_a_profile_has_two_and_the_task_names_neither(tmp_path, smollm2, embedder, demos):
    """A robot's world says no rooms: a class of several instances that the task does not name
    ("the desk", Bob's or Carol's) is bound to one of them, and the goal's confidence is at most 1
    in 2; at the shipped threshold it waits for an operator (nobody here: unconfirmed), naming both."""
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.types import TerminationReason

    executor = PddlWorldExecutor(load_profile(named_profile(tmp_path, NAMED)))
    service = profile_service(smollm2, embedder, demos, executor)
    result, report = service.plan_with_report(parse_request(task="Put the apple on the desk", method="interpret",
                                                            execute=True), lambda e: None, CancelToken())
    assert "which desk: bob_desk (1 of 2: nothing says which), or carol_desk" in report.stats["which"], report.stats
    assert report.stats["confidence"] <= 0.5 and result.termination_reason is TerminationReason.UNCONFIRMED
    assert not result.steps and "which desk" in result.detail, result.detail
    named, report = service.plan_with_report(parse_request(task="Put the apple on Bob's desk", method="interpret",
                                                           execute=True), lambda e: None, CancelToken())
    assert "which" not in report.stats and "bob_desk" in " ".join(named.goal_conditions), named.detail


@pytest.mark.parametrize("instances, problem", [
    ("", "world: 'bob_desk' is not named <class>_<id> (or declared in instances)"),
    (NAMED.replace("class: desk", "class: bureau"), "instances.bob_desk: its class 'bureau' is not an entry"),
    (NAMED + "  cup: cup\n", "instances.cup: also an object class"),
])
def test_a_named_instance_must_be_declared_with_a_class_of_the_profile(tmp_path, instances, problem):
    with pytest.raises(ProfileError, match=re.escape(problem)):
        load_profile(named_profile(tmp_path, instances))


# -- a start state per reset (issue 40) -----------------------------------------------------------
def test_the_reference_robot_starts_from_the_facts_or_world_it_is_given(tmp_path):
    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    facts = ["(at robot_1 sofa_4)", "(hand_free robot_1)", "(on cup_13 sofa_4)", "(in milk_16 fridge_7)"]
    executor.start_from(facts=facts)
    assert executor.world.state == {("at", "robot_1", "sofa_4"), ("hand_free", "robot_1"), ("on", "cup_13", "sofa_4"),
                                    ("in", "milk_16", "fridge_7")}
    assert executor.execute(Skill("PICK", ("cup",))).success   # the robot is where the cup is
    assert ("holding", "robot_1", "cup_13") in executor.world.state
    executor.reset()   # back to the start state given
    assert ("on", "cup_13", "sofa_4") in executor.world.state and len(executor.world.state) == 4
    before = set(executor.world.state)
    with pytest.raises(ProfileError, match=r"\(on cup_13 attic_9\): no object 'attic_9'.*\(teleported robot_1\): "
                                           r"unknown predicate 'teleported'"):
        executor.start_from(facts=["(on cup_13 attic_9)", "(teleported robot_1)"])
    assert executor.world.state == before   # refused: the world is as it was
    named = named_profile(tmp_path, NAMED)
    with pytest.raises(ProfileError, match="the start world: world: 'bob_desk' is not named"):
        executor.start_from((named.parent / "world.pddl").read_text())   # not declared in this profile
    other = shipped("mobile_manipulator").with_name("world.pddl").read_text().replace("(on cup_13 kitchen_counter_2)",
                                                                                     "(on cup_13 desk_5)")
    executor.start_from(other)
    assert ("on", "cup_13", "desk_5") in executor.world.state
    executor.reset()   # a reset without a start state goes back to the last one given
    assert ("on", "cup_13", "desk_5") in executor.world.state


def test_a_task_names_named_instances_by_their_words_the_longest_first(tmp_path):
    """Issue 41: "Bob's desk" is the desk, and a name alone (``carol desk``) names it too."""
    profile = load_profile(named_profile(tmp_path, NAMED))
    assert profile.named_in("Put the book on Bob's desk") == ("bob_desk",)
    assert profile.named_in("Bring ALICE the book, then tidy the carol desk") == ("carol_desk", "alice")
    assert profile.named_in("Put the book on the desk") == ()
    assert profile.named_in("Ask Alicea for it") == ()


def test_interpret_conditions_name_only_the_named_instances_a_task_names(tmp_path):
    """The classes' conditions never combine the world's named instances; a task's named
    instances get their own, by their words, the other objects classes or those it names."""
    from llm_planner_ros.interpretation.interpreter import InstancePrior
    from llm_planner_ros.pddl.goals import GoalSpec, Literal
    from llm_planner_ros.profiles.conditions import profile_conditions

    profile = load_profile(named_profile(tmp_path, NAMED))
    world = PddlWorldExecutor(profile).world_state()
    classes = profile_conditions(profile, world)
    assert not [c for c in classes if any(n in lit for lit in c.literals for n in ("bob_desk", "carol_desk", "alice"))]
    named = profile_conditions(profile, world, ("bob_desk",))
    assert named and all("bob_desk" in c.literals[0] for c in named)
    assert "The book is on Bob's desk." in [c.text for c in named]
    assert not [c for c in named if "carol_desk" in c.literals[0]]
    # a class in an interpreted condition is the instance of it that the task names
    spec = GoalSpec((Literal("on", ("book", "desk")),))
    bound = InstancePrior(()).bind(spec, world, (), named=("carol_desk",))
    assert bound.literals[0].args[1] == "carol_desk"
