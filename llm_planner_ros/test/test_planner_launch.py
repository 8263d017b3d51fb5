"""launch_testing: what only the installed launch files decide. Each of the three brings its
stack up under its namespace and arguments, and a goal runs end to end on the sim and robot
stacks. The action server's own behaviour (feedback, cancel, the goal policy) is
test_action_dds.py's, over the same DDS.

Runs under pytest where launch_testing (from a ROS 2 install) is importable; skips otherwise.
"""
from __future__ import annotations

import os
import sys
import unittest
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # helpers/, also under a plain `launch_test`
pytest.importorskip(
    "launch_testing", reason="launch_testing is not installed: it ships with ROS 2, not on PyPI")
import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from action_msgs.msg import GoalStatus  # noqa: E402
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402

from helpers.ros_client import RosTestClient  # noqa: E402
from llm_planner_msgs.action import PlanTask  # noqa: E402

REAL_NS = f"/lt_real_{uuid.uuid4().hex[:6]}"
STACK_NS = f"/lt_stack_{uuid.uuid4().hex[:6]}"
ROBOT_NS = f"/lt_robot_{uuid.uuid4().hex[:6]}"


@pytest.mark.launch_test
def generate_test_description():
    share = get_package_share_directory("llm_planner_ros")
    real_stack = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, "launch", "planner_launch.py")),
        launch_arguments={"namespace": REAL_NS}.items())
    sim_stack = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, "launch", "sim_stack_launch.py")),
        launch_arguments={"namespace": STACK_NS, "llm_model": "smollm2-135m"}.items())   # the parameter's name
    robot_stack = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, "launch", "robot_stack_launch.py")),
        launch_arguments={"namespace": ROBOT_NS, "sim_robot": "true"}.items())
    return launch.LaunchDescription([real_stack, sim_stack, robot_stack, launch_testing.actions.ReadyToTest()])


class TestPlannerStack(unittest.TestCase):
    def test_real_node_serves_the_action(self, proc_output):
        proc_output.assertWaitFor("serving action 'plan_task'", timeout=30, stream="stderr")

    def test_the_planner_launch_file_serves_goals_under_its_namespace(self, proc_output):
        proc_output.assertWaitFor("planner ready", timeout=120, stream="stderr")
        with RosTestClient(REAL_NS) as client:
            goal = PlanTask.Goal(task="Watch TV", method="pddl", goal_conditions=["(facing character television)"])
            status, result = client.send_plan(goal, timeout=120).result(timeout=120)
            self.assertEqual(status, GoalStatus.STATUS_SUCCEEDED, result.detail)
            self.assertEqual(result.termination_reason, PlanTask.Result.REASON_END_OF_PLAN, result.detail)
            self.assertTrue(result.program)

    def test_sim_stack_executes_with_corrections(self, proc_output):
        proc_output.assertWaitFor("serving 'check_subtask'", timeout=60)
        with RosTestClient(STACK_NS) as client:
            run = client.send_plan(PlanTask.Goal(task="Wash hands", method="reprompt", execute=True))
            status, result = run.result(timeout=120)
            self.assertEqual(status, GoalStatus.STATUS_SUCCEEDED, result.detail)
            self.assertTrue(result.executed)
            self.assertEqual(result.goal_status, PlanTask.Result.GOAL_MET)
            self.assertEqual([f.script for f in run.feedback], list(result.program))
            self.assertTrue(all(f.executed for f in run.feedback))


    def test_robot_stack_executes_on_the_simulated_robot(self, proc_output):
        proc_output.assertWaitFor("simulated robot serving", timeout=60)
        with RosTestClient(ROBOT_NS) as client:
            run = client.send_plan(PlanTask.Goal(task="Wash hands", method="reprompt", execute=True))
            status, result = run.result(timeout=120)
            self.assertTrue(result.steps, result.detail)
            self.assertTrue(all(s.executed for s in result.steps[:-1]))
            self.assertEqual(result.goal_status, PlanTask.Result.GOAL_UNKNOWN)


    def test_the_robot_stacks_managed_nodes_are_active_and_report_on_diagnostics(self, proc_output):
        """Issue 40: after launch, each managed node is active (what ros2 lifecycle get reads), and
        /diagnostics carries the planner's, the bridge's and the tracker's status."""
        from diagnostic_msgs.msg import DiagnosticArray
        from lifecycle_msgs.srv import GetState

        from helpers.processes import wait_until

        proc_output.assertWaitFor("simulated robot serving", timeout=60)
        names = {}
        with RosTestClient(ROBOT_NS) as client:
            client.node.create_subscription(DiagnosticArray, "/diagnostics",
                                            lambda m: names.update({s.name: s for s in m.status}), 10)
            for node in ("planner", "executor_bridge", "tracker"):
                state = client.call(GetState, f"{node}/get_state", GetState.Request(), timeout=120)
                self.assertEqual(state.current_state.label, "active", node)
            wanted = {f"{ROBOT_NS[1:]}/{n}: {w}" for n, w in (("planner", "planner"),
                                                              ("executor_bridge", "executor bridge"),
                                                              ("tracker", "tracker"))}
            self.assertTrue(wait_until(lambda: wanted <= set(names), 30), sorted(names))


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, 130])
