"""SkillActionClient against a real rclpy action server in this process, over DDS."""
from __future__ import annotations

import threading
import time
import uuid

import rclpy
from rclpy.action import ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from helpers.ros_client import send_goal, wait_future
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.ros import conversions
from llm_planner_ros.ros.action_goal import SpinSafeActionClient
from llm_planner_ros.ros.skill_action import GoalStops, SkillActionClient

STOPPING_S = 3.0   # how long the leftover skill takes to stop once cancelled (a robot slowing down)


class FirstCancelAnswerLost:
    """The server's action handle, except that the answer to the first cancel request is lost
    (as DDS loses one when the server has not matched the client yet). The request itself is
    processed: its goals are cancelling. Then the real handle is put back."""

    def __init__(self, server: ActionServer) -> None:
        self._server, self._real = server, server._handle

    def send_cancel_response(self, *args) -> None:
        self._server._handle = self._real

    def __getattr__(self, name: str):
        return getattr(self._real, name)


def test_a_lost_cancel_answer_is_asked_again_and_the_leftover_still_ends_first():
    """A bridge that starts cancels what the robot still runs. When the answer to that cancel is
    lost, the cancel is sent again; the second answer no longer lists the skill the first one
    cancelled (it is cancelling), so the robot's status is read too, and the new skill waits for
    the leftover to end. Before, the bridge refused its first skill as busy after 5 s."""
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    name = f"skill_{uuid.uuid4().hex[:6]}/execute_skill"
    events: list[str] = []
    executing = threading.Event()
    stops = GoalStops()

    def execute(goal_handle):
        what = " ".join(goal_handle.request.skill.objects)
        events.append(f"start {what}")
        executing.set()
        with stops.running(goal_handle) as stop:
            if what == "freezer" and stop.wait(60.0):   # the leftover runs until it is cancelled
                time.sleep(STOPPING_S)
                goal_handle.canceled()
            else:
                goal_handle.succeed()
        events.append(f"end {what}")
        return ExecuteSkill.Result(success=True)

    robot = rclpy.create_node("robot", context=context)
    bridge = rclpy.create_node("bridge", context=context)
    other = rclpy.create_node("killed_bridge", context=context)
    server = ActionServer(robot, ExecuteSkill, name, execute, callback_group=ReentrantCallbackGroup(),
                          cancel_callback=stops.on_cancel)
    for node in (robot, bridge, other):
        executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    try:
        leftover = SpinSafeActionClient(other, ExecuteSkill, name)
        assert leftover.wait_for_server(timeout_sec=30)
        skill = conversions.skill_to_msg(make_skill("WALK", ["freezer"]))
        handle = send_goal(leftover, ExecuteSkill.Goal(skill=skill))
        assert handle.accepted and executing.wait(30)
        server._handle = FirstCancelAnswerLost(server)
        client = SkillActionClient(bridge, name, "the robot", reconcile=True)
        new = ExecuteSkill.Goal(skill=conversions.skill_to_msg(make_skill("WALK", ["couch"])))
        outcome = client.run(new, "[WALK] <couch>", timeout_s=60.0, wait_s=30.0, stop_wait_s=30.0)
        assert outcome.ended == "done", outcome.message
        assert server._handle is not None and not isinstance(server._handle, FirstCancelAnswerLost)  # it was lost
        wait_future(handle.get_result_async(), 30)
        assert events == ["start freezer", "end freezer", "start couch", "end couch"], events
    finally:
        executor.shutdown()
        for node in (robot, bridge, other):
            node.destroy_node()
        rclpy.shutdown(context=context)


def test_an_action_client_made_while_its_node_spins_leaves_the_executor_running():
    """rclpy's ActionClient joins its node, which wakes the executor, before it sets the lock the
    executor takes: the executor's thread raised AttributeError and ended (ros2/rclpy#1589), and
    a skill server in that process never saw its goal. Here the executor reads the new client
    before its constructor goes on, every time, by holding the constructor there."""
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    node = rclpy.create_node("bridge", context=context)
    executor.add_node(node)
    died: list[BaseException] = []

    def spin() -> None:
        try:
            executor.spin()
        except BaseException as exc:   # the executor's thread ends with it
            died.append(exc)
    spinning = threading.Thread(target=spin, daemon=True)
    spinning.start()
    join = node.add_waitable

    def join_then_let_the_executor_read_it(waitable) -> None:
        join(waitable)
        read = threading.Event()   # set once the executor has gathered the node's entities again
        guard = node.create_guard_condition(read.set)
        guard.trigger()
        read.wait(10.0)
        node.destroy_guard_condition(guard)
    node.add_waitable = join_then_let_the_executor_read_it
    try:
        client = SpinSafeActionClient(node, ExecuteSkill, f"skill_{uuid.uuid4().hex[:6]}/execute_skill")
        node.add_waitable = join
        answered = threading.Event()
        timer = node.create_timer(0.01, answered.set)
        assert answered.wait(30.0) and spinning.is_alive(), died
        node.destroy_timer(timer)
        client.destroy()
    finally:
        node.add_waitable = join
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
