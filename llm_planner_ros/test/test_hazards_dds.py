"""Hazards over DDS (issue 38), with the real nodes: a hazardous interpreted goal is refused; a
plan that would pass through a hazard is planned again around it; an LLM-step goal's hazardous
skill is stopped at the executor bridge; a robot's profile whose ``never:`` entry names an
unknown predicate is refused, with the entry's path."""
from __future__ import annotations

import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

from action_msgs.msg import GoalStatus

from helpers.faulty_openai import FaultyOpenAIServer
from helpers.processes import NodeProcess, ros_node
from helpers.ros_client import RosTestClient, execute_skill
from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import PreconditionFailure
from llm_planner_ros.core.types import Skill
from llm_planner_ros.profiles.loader import shipped

R = PlanTask.Result
READY = "serving action 'execute_skill'"


def test_a_plan_through_a_hazard_is_planned_around_it_and_a_hazardous_goal_refused_over_dds():
    """Scene 1's toaster is on: the knife goes in, the toaster off at the end, only once it is
    off. Then a goal that switches it on with the knife inside is refused before anything runs."""
    ns = f"/hazplan_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, READY) as bridge, ros_node("planner_node", ns, "planner ready"), \
            RosTestClient(ns) as client:
        goal = PlanTask.Goal(task="Put the knife in the toaster", method="pddl", execute=True,
                             goal_conditions=["(obj_inside knife toaster)", "(off toaster)"])
        status, result = client.send_plan(goal, timeout=60).result(timeout=180)
        assert status == GoalStatus.STATUS_SUCCEEDED and result.termination_reason == R.REASON_GOAL_REACHED, \
            result.detail
        program = list(result.program)
        assert program.index("[SWITCHOFF] <toaster> (292)") < program.index("[PUTIN] <knife> (2003) <toaster> (292)")
        assert "re-planned around the hazard fire: a metal object inside a microwave or a toaster" in result.detail
        assert len(result.hazards) == 1 and "(obj_inside knife_2003 toaster_292)" in result.hazards[0]
        assert "stopped" not in bridge.output

        goal = PlanTask.Goal(task="Toast the knife", method="pddl", execute=True,
                             goal_conditions=["(obj_inside knife toaster)", "(on toaster)"])
        status, result = client.send_plan(goal, timeout=60).result(timeout=120)
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_HAZARDOUS_GOAL
        assert not result.steps and result.detail.startswith(
            "refused: the goal, with the rest of the world as it is, would make a hazard hold: fire"), result.detail
        assert "executing skill [SWITCHON]" not in bridge.output


def test_a_hazardous_interpreted_goal_is_refused_over_dds():
    """The task text alone, on the mobile manipulator: the embedded model and the profile's
    words make it a goal, and the goal is the world model's to refuse: nobody is asked."""
    ns = f"/hazint_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", READY, "profile:=mobile_manipulator") as robot, \
            ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill"), \
            ros_node("planner_node", ns, "planner ready", "interpret_confirm:=always"), \
            RosTestClient(ns) as client:
        goal = PlanTask.Goal(task="Put my phone in the fridge", method="interpret", execute=True)
        status, result = client.send_plan(goal, timeout=60).result(timeout=300)
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_HAZARDOUS_GOAL, \
            result.detail
        assert "(in phone_19 fridge_7)" in result.goal_conditions, list(result.goal_conditions)
        assert result.hazards == ["small_item_damage: an electronic device in the fridge ((in phone_19 fridge_7))"]
        assert not result.steps and "executing skill" not in robot.output


@contextmanager
def knife_into_the_running_toaster(name: str, *planner_params: str):
    """Method translated on a scripted OpenAI-compatible server (the real model plans in the other
    tests) whose program puts the knife into scene 1's toaster, which is on: (the bridge, a
    client, the goal's status and result)."""
    ns = f"/{name}_{uuid.uuid4().hex[:6]}"
    with FaultyOpenAIServer() as server, ros_node("executor_bridge", ns, READY) as bridge, \
            ros_node("planner_node", ns, "planner ready", "llm_backend:=openai", f"openai_base_url:={server.url}",
                     "openai_model:=m", "epsilon:=0.0", "max_steps:=6", *planner_params), \
            RosTestClient(ns) as client:
        server.mode = "steps:Walk to knife|Grab knife|Walk to toaster|Put knife in toaster|Walk to kitchen"
        status, result = client.send_plan(PlanTask.Goal(task="Put the knife in the toaster", method="translated",
                                                        execute=True), timeout=60).result(timeout=180)
        yield bridge, client, status, result


def test_an_llm_step_goals_hazardous_skill_is_stopped_at_the_bridge():
    """The planner leaves the hazard check to the bridge (gate_hazards false); the bridge asks the
    simulator what the skill would do and refuses it; the goal ends there."""
    with knife_into_the_running_toaster("hazllm", "gate_hazards:=false") as (bridge, client, status, result):
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_HAZARD_STOPPED, \
            result.detail
        assert "stopped at the last hop by the executor" in result.detail and "metal object" in result.detail
        last = result.steps[-1]
        assert last.skill.action == "PUTIN" and not last.executed, [s.script for s in result.steps]
        assert last.error.type == PreconditionFailure.HAZARD and "metal object" in last.error.cause
        assert [s.executed for s in result.steps[:-1]] == [True, True, True], [s.script for s in result.steps]
        assert result.hazards and "toaster" in result.hazards[0]
        assert "executing skill [PUTIN]" not in bridge.output and "stopped '[PUTIN]" in bridge.output, \
            [line for line in bridge.output.splitlines() if "PUTIN" in line]
        # the same skill sent straight to the bridge, as any other sender would: refused the same way
        reply = execute_skill(client, Skill("PUTIN", ("knife", "toaster"), text="put knife in toaster"))
        assert not reply.success and reply.failure.type == PreconditionFailure.HAZARD, reply.failure.message
        assert "executing skill [PUTIN]" not in bridge.output


def test_an_llm_step_goals_hazardous_skill_is_stopped_at_the_planners_gate():
    """The same program with the gate checking (the default): the planner predicts the skill from
    the facts the bridge reports and stops it; the bridge never sees it."""
    with knife_into_the_running_toaster("hazgate") as (bridge, _, status, result):
        assert status == GoalStatus.STATUS_ABORTED and result.termination_reason == R.REASON_HAZARD_STOPPED, \
            result.detail
        assert "stopped at the last hop by the planner's gate" in result.detail and "metal object" in result.detail
        last = result.steps[-1]
        assert last.skill.action == "PUTIN" and not last.executed and last.error.type == PreconditionFailure.HAZARD
        assert "PUTIN" not in bridge.output   # it never left the planner


def test_a_robot_profile_whose_never_entry_names_an_unknown_predicate_is_refused_with_its_path(tmp_path: Path):
    """The robot sends its profile over GetWorldState; the bridge and the planner validate it
    against its domain, and neither plans nor sends anything on it."""
    text = shipped("mobile_manipulator").read_text()
    text = text[:text.index("never:")] + ("never:\n  - {name: hot_kettle, type: fire, words: w, "
                                          "when: ['(burning ?k)'], classes: {'?k': [kettle]}}\n")
    (tmp_path / "profile.yaml").write_text(text)
    (tmp_path / "domain.pddl").write_text((shipped("mobile_manipulator").parent / "domain.pddl").read_text())
    ns = f"/hazprofile_{uuid.uuid4().hex[:6]}"
    robot = NodeProcess([sys.executable, "-m", "helpers.profile_robot", "--profile-file",
                         str(tmp_path / "profile.yaml"), "--domain-file", str(tmp_path / "domain.pddl"),
                         "--ros-args", "-r", f"__ns:={ns}/robot"], ready=READY, timeout=120)
    path = "never[0] (hot_kettle).when[0]: unknown predicate 'burning'"
    with robot, ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill"), \
            ros_node("planner_node", ns, "planner ready"), RosTestClient(ns) as client:
        reply = execute_skill(client, Skill("NAVIGATE_TO", ("kitchen_counter",), (2,)))
        assert not reply.success and "the robot's profile is invalid" in reply.failure.message
        assert path in reply.failure.message, reply.failure.message
        status, result = client.send_plan(PlanTask.Goal(task="Boil water", method="pddl", execute=True,
                                                        goal_conditions=["(switched_on kettle)"]),
                                          timeout=60).result(timeout=120)
        assert status == GoalStatus.STATUS_ABORTED and path in result.detail, result.detail
        assert "executing skill" not in robot.output


def test_the_bridge_stops_a_hazardous_skill_on_a_robot_from_the_facts_it_reports():
    """The robot backend: the bridge reads the robot's profile and facts over GetWorldState and
    predicts the skill by the profile's domain; the phone never goes in the fridge."""
    ns = f"/hazrobot_{uuid.uuid4().hex[:6]}"
    with ros_node("pddl_robot", f"{ns}/robot", READY, "profile:=mobile_manipulator") as robot, \
            ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill") as bridge, \
            RosTestClient(ns) as client:
        for skill in (Skill("NAVIGATE_TO", ("fridge",), (7,)), Skill("OPEN", ("fridge",), (7,)),
                      Skill("NAVIGATE_TO", ("desk",), (5,)), Skill("PICK", ("phone",), (19,)),
                      Skill("NAVIGATE_TO", ("fridge",), (7,))):
            reply = execute_skill(client, skill)
            assert reply.success, (skill, reply.failure.message)
        reply = execute_skill(client, Skill("PLACE_IN", ("phone", "fridge"), (19, 7)))
        assert not reply.success and reply.failure.type == PreconditionFailure.HAZARD, reply.failure.message
        assert "an electronic device in the fridge ((in phone_19 fridge_7))" in reply.failure.cause
        assert "executing skill [PLACE_IN]" not in robot.output and "stopped '[PLACE_IN]" in bridge.output
        assert execute_skill(client, Skill("NAVIGATE_TO", ("desk",), (5,))).success
        assert execute_skill(client, Skill("PLACE", ("phone", "desk"), (19, 5))).success   # a safe place is fine


def test_the_bridges_world_by_version_never_hides_a_change_no_skill_told():
    """The bridge keeps the robot's world it read and brings it up to date with each skill's
    result, asking the robot only whether it is still at that version. The robot's world set
    behind the bridge's back (its own reset service, as a person moving things) is a new version:
    the bridge reads it whole, and the hazard it would bring about is still stopped."""
    from llm_planner_msgs.srv import GetWorldState, ResetScene

    ns = f"/hazheld_{uuid.uuid4().hex[:6]}"
    to_fridge = (Skill("NAVIGATE_TO", ("fridge",), (7,)), Skill("OPEN", ("fridge",), (7,)),
                 Skill("NAVIGATE_TO", ("desk",), (5,)), Skill("PICK", ("phone",), (19,)),
                 Skill("NAVIGATE_TO", ("fridge",), (7,)))
    with ros_node("pddl_robot", f"{ns}/robot", READY, "profile:=mobile_manipulator") as robot, \
            ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill") as bridge, \
            RosTestClient(ns) as client:
        for skill in to_fridge:
            assert execute_skill(client, skill).success, skill
        at_fridge = client.call(GetWorldState, "robot/get_world_state", GetWorldState.Request())
        held = client.call(GetWorldState, "robot/get_world_state",
                           GetWorldState.Request(known_version=at_fridge.world_version))
        assert held.unchanged and not held.objects and not held.facts   # still at that version: nothing sent
        for skill in (Skill("NAVIGATE_TO", ("desk",), (5,)), Skill("PLACE", ("phone", "desk"), (19, 5)),
                      Skill("NAVIGATE_TO", ("fridge",), (7,))):   # the bridge holds: the phone on the desk
            assert execute_skill(client, skill).success, skill
        assert client.call(ResetScene, "robot/reset_scene", ResetScene.Request(facts=at_fridge.facts)).success
        reply = execute_skill(client, Skill("PLACE_IN", ("phone", "fridge"), (19, 7)))
        assert not reply.success and reply.failure.type == PreconditionFailure.HAZARD, reply.failure.message
        assert "executing skill [PLACE_IN]" not in robot.output and "stopped '[PLACE_IN]" in bridge.output


def test_a_robot_that_reports_no_facts_gets_its_skills_refused_or_sent_with_a_warning(tmp_path: Path):
    """Its hazards cannot be checked: hazard_unknown refuse (the default) refuses every skill
    with the reason; set live to warn, the bridge sends it and says so in its log."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    (tmp_path / "profile.yaml").write_text(shipped("mobile_manipulator").read_text())
    (tmp_path / "domain.pddl").write_text((shipped("mobile_manipulator").parent / "domain.pddl").read_text())
    ns = f"/hazblind_{uuid.uuid4().hex[:6]}"
    robot = NodeProcess([sys.executable, "-m", "helpers.profile_robot", "--profile-file",
                         str(tmp_path / "profile.yaml"), "--domain-file", str(tmp_path / "domain.pddl"), "--no-facts",
                         "--ros-args", "-r", f"__ns:={ns}/robot"], ready=READY, timeout=120)
    skill = Skill("NAVIGATE_TO", ("kitchen_counter",), (2,))
    with robot, ros_node("executor_bridge", ns, READY, "backend:=robot", "robot_action:=robot/execute_skill") \
            as bridge, RosTestClient(ns) as client:
        reply = execute_skill(client, skill)
        assert not reply.success and reply.failure.type == PreconditionFailure.HAZARD, reply.failure.message
        assert "the hazards cannot be checked: the executor reports no facts" in reply.failure.message
        assert "(hazard_unknown: refuse)" in reply.failure.message and "executing skill" not in robot.output
        warn = Parameter(name="hazard_unknown", value=ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                                      string_value="warn"))
        answer = client.call(SetParameters, "executor_bridge/set_parameters", SetParameters.Request(parameters=[warn]))
        assert answer.results[0].successful, answer.results[0].reason
        reply = execute_skill(client, skill)
        assert reply.success, reply.failure.message
        assert "sent anyway (hazard_unknown: warn)" in bridge.output and "executing skill [NAVIGATE_TO]" in robot.output
