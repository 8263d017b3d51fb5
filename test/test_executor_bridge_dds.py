"""The executor bridge over DDS: the virtualhome backend, the robot backend through the reference
simulated robot, an absent robot, and the planner-side ROS client of the Executor protocol."""
from __future__ import annotations

import time
import uuid

import pytest

from helpers.processes import NodeProcess, ros_node
from helpers.ros_client import RosTestClient, wait_future
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.msg import PreconditionFailure
from llm_planner_msgs.srv import GetApplicableSkills, ResetScene
from llm_planner_ros.core.errors import ExecutorError
from llm_planner_ros.core.types import ErrorType, Skill
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.executor_client import RosExecutor
from llm_planner_ros.skills.vocabulary import make_skill

BRIDGE_READY = "serving action 'execute_skill'"


def node(script: str, ns: str, *params: str, ready: str = BRIDGE_READY) -> NodeProcess:
    return ros_node(script, ns, ready, *params, timeout=60)


@pytest.fixture(scope="module")
def sim_bridge():
    ns = f"/bridge_{uuid.uuid4().hex[:6]}"
    with node("executor_bridge", ns, "backend:=virtualhome"):
        with RosTestClient(ns) as client:
            yield client


def execute(client: RosTestClient, action: str, *objects: str) -> ExecuteSkill.Result:
    from rclpy.action import ActionClient

    ac = ActionClient(client.node, ExecuteSkill, "execute_skill")
    assert ac.wait_for_server(timeout_sec=20)
    skill = make_skill(action, objects) if action != "FLY" else Skill("FLY", objects)
    goal = ExecuteSkill.Goal(skill=conversions.skill_to_msg(skill))
    handle = wait_future(ac.send_goal_async(goal), 20)
    result = wait_future(handle.get_result_async(), 30).result
    ac.destroy()
    return result


def call(client: RosTestClient, srv, name: str, request):
    c = client.node.create_client(srv, name)
    assert c.wait_for_service(timeout_sec=20)
    response = wait_future(c.call_async(request), 30)
    client.node.destroy_client(c)
    return response


def test_virtualhome_backend_executes_and_reports_preconditions(sim_bridge):
    reset = call(sim_bridge, ResetScene, "reset_scene", ResetScene.Request(task="Put groceries in Fridge"))
    assert reset.success and "goal conditions" in reset.message and "freezer" in reset.objects
    r = execute(sim_bridge, "GRAB", "food_food")
    assert not r.success and r.failure.type == PreconditionFailure.AGENT_PROXIMITY
    assert r.failure.cause == "I am not close to the food food"
    r = execute(sim_bridge, "WALK", "freezer")
    assert r.success and r.observation == "I am in the dining room; I am close to the freezer"
    applicable = call(sim_bridge, GetApplicableSkills, "get_applicable_skills", GetApplicableSkills.Request())
    texts = {s.text for s in applicable.skills}
    assert "open freezer" in texts and "grab food food" not in texts and applicable.goal_met is False
    r = execute(sim_bridge, "FLY", "bird")
    assert not r.success and r.failure.type == PreconditionFailure.PARSE_ERROR
    bad = call(sim_bridge, ResetScene, "reset_scene", ResetScene.Request(scene_id="Mars"))
    assert not bad.success and "unknown scene 'Mars'" in bad.message


def test_robot_backend_through_the_reference_simulated_robot():
    ns = f"/robot_{uuid.uuid4().hex[:6]}"
    with node("sim_robot", f"{ns}/robot", ready="simulated robot serving"), \
            node("executor_bridge", ns, "backend:=robot", "robot_action:=robot/execute_skill"):
        with RosTestClient(ns) as client:
            r = execute(client, "WALK", "freezer")
            assert r.success and "close to the freezer" in r.observation
            r = execute(client, "SWITCHON", "table")
            assert not r.success and r.failure.type == PreconditionFailure.INVALID_ACTION
            assert r.failure.cause == "the table has no switch"


def test_a_missed_acceptance_is_recovered_from_the_robots_status_topic():
    """An acceptance that does not come in time (lost on first DDS contact, or, here, a wait
    shorter than one round trip): the robot's status lists the goal, and its result is fetched."""
    ns = f"/lostaccept_{uuid.uuid4().hex[:6]}"
    with node("sim_robot", f"{ns}/robot", ready="simulated robot serving") as robot, \
            node("executor_bridge", ns, "backend:=robot", "robot_action:=robot/execute_skill",
                 "robot_wait_s:=0.001") as bridge:
        with RosTestClient(ns) as client:
            for _ in range(40):   # until the bridge has discovered the robot
                r = execute(client, "WALK", "freezer")
                if "is not available" not in r.failure.message:
                    break
                time.sleep(0.5)
            assert r.success and "close to the freezer" in r.observation, r
            r = execute(client, "SWITCHON", "table")
            assert not r.success and r.failure.cause == "the table has no switch"
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
                assert "'nobody/execute_skill' is not available" in r.failure.message
            assert proc.proc.poll() is None
            ros = RosExecutor(client.node, wait_s=2.0)
            with pytest.raises(ExecutorError, match="is not available"):
                ros.execute(make_skill("WALK", ["freezer"]))


def test_ros_executor_client_implements_the_protocol(sim_bridge):
    ros = RosExecutor(sim_bridge.node)
    objects = ros.reset("TrimmedTestScene1", task="Watch TV")
    assert "television" in objects
    r = ros.execute(make_skill("SIT", ["couch"]))
    assert not r.success and r.failure.type is ErrorType.AGENT_PROXIMITY
    assert ros.execute(make_skill("WALK", ["couch"])).success
    assert ros.goal_met() is False
    assert make_skill("SIT", ["couch"]) in ros.applicable_skills()
