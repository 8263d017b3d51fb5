"""The executor bridge over DDS: the virtualhome backend, the robot backend through the reference
simulated robot, an absent robot, and the planner-side ROS client of the Executor protocol."""
from __future__ import annotations

import time
import uuid

import pytest
from action_msgs.msg import GoalStatus

from helpers.processes import NodeProcess, ros_node, wait_until
from helpers.ros_client import RosTestClient, lose_first_goal_answer, send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure
from llm_planner_msgs.srv import GetWorldState, ResetScene
from llm_planner_ros.core.errors import ExecutorError
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.executor_client import RosExecutor

BRIDGE_READY = "serving action 'execute_skill'"


def node(script: str, ns: str, *params: str, ready: str = BRIDGE_READY) -> NodeProcess:
    return ros_node(script, ns, ready, *params, timeout=60)


@pytest.fixture(scope="module")
def sim_bridge():
    ns = f"/bridge_{uuid.uuid4().hex[:6]}"
    with node("executor_bridge", ns, "backend:=sim"):
        with RosTestClient(ns) as client:
            yield client


def execute(client: RosTestClient, action: str, *objects: str) -> ExecuteSkill.Result:
    ac = client.action_client(ExecuteSkill, "execute_skill")
    assert ac.wait_for_server(timeout_sec=20)
    skill = make_skill(action, objects) if action != "FLY" else Skill("FLY", objects)
    goal = ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill))
    handle = send_goal(ac, goal)
    return wait_future(handle.get_result_async(), 30).result


def call(client: RosTestClient, srv, name: str, request):
    return client.call(srv, name, request)


def test_virtualhome_backend_executes_and_reports_preconditions(sim_bridge):
    reset = call(sim_bridge, ResetScene, "reset_scene", ResetScene.Request(task="Put groceries in Fridge"))
    assert reset.success and "goal conditions" in reset.message and "freezer" in reset.objects
    r = execute(sim_bridge, "GRAB", "food_food")
    assert not r.success and r.failure.type == PreconditionFailure.AGENT_PROXIMITY
    assert r.failure.cause == "I am not close to the food food"
    r = execute(sim_bridge, "WALK", "freezer")
    assert r.success and r.observation == "I am in the dining room; I am close to the freezer"
    world = call(sim_bridge, GetWorldState, "get_world_state", GetWorldState.Request(include_applicable=True))
    texts = {s.text for s in world.applicable_skills}   # one reply: the state, the goal check, the options
    assert "open freezer" in texts and "grab food food" not in texts and world.goal_status == 0
    assert world.facts and world.domain == ""   # the domain only when asked
    r = execute(sim_bridge, "FLY", "bird")   # refused by the bridge's policy before the simulator
    assert not r.success and r.failure.type == PreconditionFailure.INVALID_ACTION
    assert r.failure.message == "refused by the executor bridge: not admissible: 'FLY' is not a known action"
    bad = call(sim_bridge, ResetScene, "reset_scene", ResetScene.Request(scene_id="Mars"))
    assert not bad.success and "unknown scene 'Mars'" in bad.message


def test_robot_backend_through_the_reference_simulated_robot():
    ns = f"/robot_{uuid.uuid4().hex[:6]}"
    with node("sim_robot", f"{ns}/robot", ready="simulated robot serving"), \
            node("executor_bridge", ns, "backend:=robot", "robot_action:=robot/execute_skill"):
        with RosTestClient(ns) as client:
            r = execute(client, "WALK", "freezer")
            assert r.success and "close to the freezer" in r.observation
            r = execute(client, "SWITCHON", "television")   # the robot's own precondition failure
            assert not r.success and r.failure.type == PreconditionFailure.AGENT_PROXIMITY
            assert r.failure.cause == "I am not close to the television"


def test_a_missed_acceptance_is_recovered_from_the_robots_status_topic():
    """An acceptance that does not come in time (lost on first DDS contact, or, here, a robot
    that takes 0.8 s to accept while the bridge waits 0.3 s): the robot's status lists the goal,
    and its result is fetched."""
    ns = f"/lostaccept_{uuid.uuid4().hex[:6]}"
    with node("sim_robot", f"{ns}/robot", "accept_delay_s:=0.8", ready="simulated robot serving") as robot, \
            node("executor_bridge", ns, "backend:=robot", "robot_action:=robot/execute_skill",
                 "robot_wait_s:=0.3") as bridge:
        with RosTestClient(ns) as client:
            for _ in range(40):   # until the bridge has discovered the robot
                r = execute(client, "WALK", "freezer")
                if "is not available" not in r.failure.message:
                    break
                time.sleep(0.5)
            assert r.success and "close to the freezer" in r.observation, r
            r = execute(client, "SWITCHON", "television")
            assert not r.success and r.failure.cause == "I am not close to the television"
            assert "but its status lists the skill" in bridge.output
            assert sum("executing skill" in line for line in robot.lines) == 2   # none sent twice


def test_an_absent_robot_is_an_executor_error_and_the_bridge_survives():
    ns = f"/norobot_{uuid.uuid4().hex[:6]}"
    with node("executor_bridge", ns, "backend:=robot", "robot_action:=nobody/execute_skill",
              "robot_wait_s:=0.5") as proc:
        with RosTestClient(ns) as client:
            for _ in range(2):
                r = execute(client, "WALK", "freezer")
                assert not r.success and r.failure.type == PreconditionFailure.EXECUTOR_ERROR
                # no robot, so no world to check the skill against: nothing is sent (issue 35)
                assert "the robot's world cannot be read" in r.failure.message, r.failure.message
                assert "is not available; nothing was sent" in r.failure.message
            assert proc.proc.poll() is None
            ros = client.planner.attach(lambda n: RosExecutor(n, wait_s=2.0))
            with pytest.raises(ExecutorError, match="is not available"):
                ros.execute(make_skill("WALK", ["freezer"]))


def test_ros_executor_client_implements_the_protocol(sim_bridge):
    ros = sim_bridge.planner.attach(RosExecutor)
    objects = ros.reset("TrimmedTestScene1", task="Watch TV")
    assert "television" in objects
    r = ros.execute(make_skill("SIT", ["couch"]))
    assert not r.success and r.failure.type is ErrorType.AGENT_PROXIMITY
    assert ros.execute(make_skill("WALK", ["couch"])).success
    assert ros.goal_met() is False
    assert make_skill("SIT", ["couch"]) in ros.applicable_skills()
    # one world-state reply a step: a search checks the goal, reads its options, executes
    calls = []
    real_call = ros._call
    ros._call = lambda client, request: calls.append(client.srv_name.rsplit("/", 1)[-1]) or real_call(client, request)
    for skill in (make_skill("SIT", ["couch"]), make_skill("STANDUP", [])):
        assert ros.goal_met() is False and skill in ros.applicable_skills() and ros.execute(skill).success
        assert ros.world_state().facts
    assert calls == ["get_world_state", "get_world_state"]


def test_a_skill_whose_answer_rclpy_loses_is_read_from_the_status(sim_bridge):
    """rclpy's lost-answer race (ros/action_goal.py) on the planner's skill client: the bridge's
    status lists the skill, so its result is fetched, and the skill is not sent again."""
    ros = sim_bridge.planner.attach(RosExecutor)
    ros.reset("TrimmedTestScene1", task="Watch TV")
    sent = lose_first_goal_answer(ros.skills.client)
    r = ros.execute(make_skill("WALK", ["couch"]))
    assert r.success and "close to the couch" in r.observation, r
    assert len(sent) == 1


def test_a_skills_result_carries_its_change_and_the_world_is_not_read_again(sim_bridge):
    """What a goal-directed plan does each step (execute, then read the world and the goal check)
    makes no world-state call after the first: the result's change is applied to the world held;
    that world is the one the bridge reports when asked again."""
    ros = sim_bridge.planner.attach(RosExecutor)
    ros.reset("TrimmedTestScene1", task="Watch TV")
    before = ros.world_state()
    calls = []
    real_call = ros._call
    ros._call = lambda client, request: calls.append(client.srv_name.rsplit("/", 1)[-1]) or real_call(client, request)
    steps = [("WALK", ["television"]), ("SIT", ["couch"]), ("WALK", ["couch"]), ("SIT", ["couch"])]
    outcomes = []
    for action, objects in steps:
        outcomes.append(ros.execute(make_skill(action, objects)).success)
        held, goal = ros.world_state(), ros.goal_met()
    assert outcomes == [True, False, True, True]   # a failed precondition changes nothing
    assert calls == [] and held.facts != before.facts
    kept = ros.observe()
    ros.forget()   # ask the bridge again: by version, and its world is still the one kept from the changes
    assert ros.world_state() == held and ros.goal_met() == goal and calls == ["get_world_state"]
    assert ros.observe() is kept   # the bridge said "unchanged": nothing sent again, nothing parsed again
    ros.reset("TrimmedTestScene1", task="Watch TV")   # a new version: read whole
    assert ros.observe() is not kept and ros.world_state() == before


def set_params(client: RosTestClient, node_name: str, **values):
    """``ros2 param set`` through the node's set_parameters service; the SetParametersResults."""
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    request = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()])
    return call(client, SetParameters, f"{node_name}/set_parameters", request).results


class SkillGoal:
    """An ExecuteSkill goal sent to the bridge, cancellable."""

    def __init__(self, client: RosTestClient, skill: Skill) -> None:
        self.ac = client.action_client(ExecuteSkill, "execute_skill")
        assert self.ac.wait_for_server(timeout_sec=20)
        self.handle = send_goal(self.ac, ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill)))
        self.result = self.handle.get_result_async()


def test_cancel_reaches_the_robot_and_skills_never_overlap():
    """The probe of issue 15: a skill cancelled on the bridge ran on to its end on the robot, and
    the next one started beside it. Now the bridge cancels the robot's goal, waits for the robot to
    confirm, says so, and sends the next skill only after."""
    ns = f"/cancel_{uuid.uuid4().hex[:6]}"
    with node("sim_robot", f"{ns}/robot", "skill_delay_s:=8.0", ready="simulated robot serving") as robot, \
            node("executor_bridge", ns, "backend:=robot", "robot_action:=robot/execute_skill") as bridge:
        with RosTestClient(ns) as client:
            first = SkillGoal(client, make_skill("WALK", ["freezer"]))
            assert wait_until(lambda: "executing skill [WALK] <freezer>" in robot.output or first.result.done(), 60), \
                f"bridge:\n{bridge.output[-3000:]}\nrobot:\n{robot.output[-2000:]}"
            assert not first.result.done(), (first.result.result().result.observation, bridge.output[-3000:])
            t0 = time.monotonic()
            wait_future(first.handle.cancel_goal_async(), 10)
            response = wait_future(first.result, 10)
            assert time.monotonic() - t0 < 4.0   # not the 8 s the skill takes
            assert response.status == GoalStatus.STATUS_CANCELED
            assert "the robot confirmed that [WALK] <freezer> (1) stopped" in response.result.observation
            assert "cancelled [WALK] <freezer> (1) while it ran" in robot.output
            # two skills at once: the second waits for the first, on the bridge, not on the robot
            a = SkillGoal(client, make_skill("WALK", ["television"]))
            b = SkillGoal(client, make_skill("WALK", ["couch"]))
            assert wait_future(a.result, 40).result.success and wait_future(b.result, 40).result.success
            lines = [line.split("]: ")[-1] for line in robot.lines if "executing skill" in line or "finished" in line]
            assert lines[1:] in ([f"{what} [WALK] <{o}> (1){end}" for o in order for what, end in
                                  (("executing skill", ""), ("finished", ": done"))]
                                 for order in (("television", "couch"), ("couch", "television"))), lines


def test_the_bridge_enforces_the_policy_whoever_sends_the_skill():
    """A goal sent straight to the bridge with a denied skill never reaches the robot; the policy
    is live, and a read-only parameter refuses a change."""
    ns = f"/policy_{uuid.uuid4().hex[:6]}"
    with node("sim_robot", f"{ns}/robot", ready="simulated robot serving") as robot, \
            node("executor_bridge", ns, "backend:=robot", "robot_action:=robot/execute_skill",
                 "skill_denylist:=[GRAB]", "object_denylist:=[knife]"):
        with RosTestClient(ns) as client:
            r = execute(client, "GRAB", "knife")
            assert not r.success and r.failure.type == PreconditionFailure.INVALID_ACTION
            assert r.failure.message == "refused by the executor bridge: the action GRAB is not allowed on this robot"
            r = execute(client, "WALK", "knife")
            assert r.failure.message == ("refused by the executor bridge: the object 'knife' is not allowed "
                                         "on this robot")
            r = execute(client, "FLY", "bird")
            assert "not admissible" in r.failure.message
            assert "executing skill" not in robot.output   # nothing reached the robot
            assert execute(client, "WALK", "freezer").success
            [ok] = set_params(client, "executor_bridge", skill_denylist=["WALK"])
            assert ok.successful
            assert "the action WALK is not allowed" in execute(client, "WALK", "freezer").failure.message
            [ok] = set_params(client, "executor_bridge", skill_denylist=["GRBA"])   # misspelt: denies nothing
            assert ok.successful
            assert "the policy's skill_denylist names 'GRBA', which is no skill of this world" in \
                execute(client, "GRAB", "knife").failure.message
            [refused] = set_params(client, "executor_bridge", robot_timeout_s=1.0)
            assert not refused.successful and "read-only" in refused.reason
            assert robot.output.count("executing skill") == 1
