"""Goal-directed planning over DDS: the real planner node plans with Fast Downward from the world
the executor bridge reports (GetWorldState) and executes through it."""
from __future__ import annotations

import uuid

from action_msgs.msg import GoalStatus

from helpers.processes import ros_node
from helpers.ros_client import RosTestClient
from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.srv import GetWorldState

BRIDGE_READY = "serving action 'execute_skill'"


def test_the_bridge_reports_its_world_as_pddl():
    ns = f"/world_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=virtualhome"):
        with RosTestClient(ns) as client:
            assert client.call(GetWorldState, "get_world_state", GetWorldState.Request()).domain == ""   # asked once
            reply = client.call(GetWorldState, "get_world_state", GetWorldState.Request(include_domain=True))
            assert reply.success and reply.domain_name == "virtualhome"
            assert "(define (domain virtualhome)" in reply.domain and "; skill walk_to: WALK ?o" in reply.domain
            assert "character_65 - character" in reply.objects
            assert any(f.startswith("(inside character_65 ") for f in reply.facts)
            assert reply.goal_status == -1   # the canonical scene has no goal conditions


def test_a_pddl_goal_is_planned_executed_and_reported_over_ros():
    ns = f"/pddl_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=virtualhome"), \
            ros_node("planner_node", ns, "planner ready", "executor_mode:=bridge") as planner:
        with RosTestClient(ns) as client:
            goal = PlanTask.Goal(task="Watch TV", method="pddl", execute=True,
                                 goal_conditions=["(on television.410)", "(plugged_in television.410)",
                                                  "(facing character television.410)"],
                                 action_goals=["LOOKAT|WATCH"])
            run = client.send_plan(goal, timeout=60)
            status, result = run.result(timeout=120)
            assert status == GoalStatus.STATUS_SUCCEEDED, result.detail
            assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED
            # the bridge started from Watch TV's EAI graph; its own goal check agrees
            assert result.goal_status == PlanTask.Result.GOAL_MET
            assert result.executed and all(s.executed for s in result.steps)
            assert "[SWITCHON] <television> (410)" in result.program
            assert [f.script for f in run.feedback if f.executed] == list(result.program)

            bad = PlanTask.Goal(task="Watch TV", method="pddl", execute=True, goal_conditions=["(on spaceship)"])
            status, result = client.send_plan(bad, timeout=60).result(timeout=60)
            assert status == GoalStatus.STATUS_ABORTED
            assert result.termination_reason == PlanTask.Result.REASON_INVALID_GOAL
            assert "unknown object 'spaceship'" in result.detail

            bad = PlanTask.Goal(task="Watch TV", method="pddl", goal_conditions=["on tv"])
            status, result = client.send_plan(bad, timeout=60).result(timeout=60)
            assert result.termination_reason == PlanTask.Result.REASON_INVALID_GOAL and "not a literal" in result.detail
        assert "goal ended: goal_reached" in planner.output


def test_a_robot_backend_passes_the_robots_own_world_through():
    ns = f"/robotworld_{uuid.uuid4().hex[:6]}"
    with ros_node("sim_robot", f"{ns}/robot", "simulated robot serving"), \
            ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=robot", "robot_action:=robot/execute_skill",
                     "robot_world_service:=robot/get_world_state"):
        with RosTestClient(ns) as client:
            reply = client.call(GetWorldState, "get_world_state", GetWorldState.Request())
            assert reply.success, reply.message
            assert reply.domain_name == "virtualhome" and any(f.startswith("(inside character_") for f in reply.facts)


def test_the_task_sentence_alone_is_interpreted_planned_and_executed_over_ros():
    """Method interpret through the real node and bridge: what "done" means travels in the
    feedback and the result."""
    ns = f"/interpret_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, BRIDGE_READY, "backend:=virtualhome"), \
            ros_node("planner_node", ns, "planner ready", "executor_mode:=bridge"):
        with RosTestClient(ns) as client:
            goal = PlanTask.Goal(task="Watch TV", method=PlanTask.Goal.METHOD_INTERPRET, execute=True)
            run = client.send_plan(goal, timeout=60)
            status, result = run.result(timeout=300)
            assert status == GoalStatus.STATUS_SUCCEEDED, result.detail
            assert result.termination_reason == PlanTask.Result.REASON_GOAL_REACHED
            assert result.goal_status == PlanTask.Result.GOAL_MET
            assert any(c.startswith("(on television") for c in result.goal_conditions)
            assert run.feedback and all(list(f.goal_conditions) == list(result.goal_conditions) for f in run.feedback)
