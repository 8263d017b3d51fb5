"""Console node: the operator's web page over the stack, served on localhost by default.

A ROS client like any other: it reads the planner's ``plan`` and ``goal_queue``, the tracker's
``tracker_state`` and the planner's ``approval_request`` topics, sends and cancels goals on the
``plan_task`` action (through :class:`~llm_planner_ros.ros.client.PlannerClient`) and answers
approvals on the ``approve`` service with the digest recomputed from what it shows. Past goals
come from the planner's trace log (a file on this machine).

    ros2 run llm_planner_ros console_node --ros-args -r __ns:=/robot1 -p port:=8080
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node

from llm_planner_msgs.msg import ApprovalRequest, GoalQueue, PlanState, TrackerState
from llm_planner_msgs.srv import Approve
from llm_planner_ros.console.view import ConsoleView, past_goals
from llm_planner_ros.core.errors import PlanningError
from llm_planner_ros.ros.client import PlannerClient
from llm_planner_ros.ros.conversions import to_plain
from llm_planner_ros.ros.params import declare_and_validate, refuse_unknown_parameters
from llm_planner_ros.ros.qos import LATCHED_EVERY
from llm_planner_ros.ros.spin import adopt_package_logs, spin_node
from llm_planner_ros.ros.wait import wait_for
from llm_planner_ros.trace.log import default_path, read_traces


class ConsoleParams(BaseModel):
    """ROS parameters of the console node (see config/console.yaml)."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field("127.0.0.1", min_length=1,
                      description="address the page is served on; 127.0.0.1 keeps it on this machine")
    port: int = Field(8080, ge=0, le=65535, description="TCP port of the page; 0 = any free port (logged)")
    allowed_hosts: tuple[str, ...] = Field(("127.0.0.1", "localhost"), min_length=1,
                                           description="names the page answers to (a guard against DNS "
                                                       "rebinding); add the robot's name or address when "
                                                       "host is not 127.0.0.1; '*' = any")
    trace_log: str = Field("default", description="the planner's trace log, for past goals; 'default' = "
                                                  "~/.ros/llm_planner_ros/<namespace>.planner.jsonl; empty = none")
    past_goals: int = Field(30, ge=0, le=1000, description="past goals shown from the trace log")
    service_timeout_s: float = Field(10.0, gt=0.0, le=600.0,
                                     description="limit for an answer from the planner (goal, cancel, approval)")


class ConsoleNode(Node):
    def __init__(self) -> None:
        super().__init__("console")
        adopt_package_logs(self)
        self.params = declare_and_validate(self, ConsoleParams)
        refuse_unknown_parameters(self)
        p = self.params
        self.trace_path: Optional[Path] = (default_path(self.get_namespace(), "planner")
                                           if p.trace_log == "default" else Path(p.trace_log) if p.trace_log else None)
        self.view = ConsoleView(namespace=self.get_namespace())
        group = ReentrantCallbackGroup()
        self.planner = PlannerClient(node=self)
        self._approve: Client[Any, Any] = self.create_client(Approve, "approve", callback_group=group)
        self.create_subscription(PlanState, "plan", lambda m: self.view.on_plan(to_plain(m)), LATCHED_EVERY,
                                 callback_group=group)
        self.create_subscription(GoalQueue, "goal_queue", lambda m: self.view.on_queue(to_plain(m)["goals"]),
                                 LATCHED_EVERY, callback_group=group)
        self.create_subscription(TrackerState, "tracker_state", lambda m: self.view.on_tracker(to_plain(m)),
                                 LATCHED_EVERY, callback_group=group)
        self.create_subscription(ApprovalRequest, "approval_request",
                                 lambda m: self.view.on_approval_request(to_plain(m)), LATCHED_EVERY,
                                 callback_group=group)
        self.create_timer(0.5, lambda: self.view.on_planner(self.planner.planner_alive()), callback_group=group)
        self.url = self._serve()
        self.get_logger().info(f"console at {self.url}")

    # -- what the page asks (web.StackActions) ---------------------------------------------
    def send_goal(self, task: str, method: str, execute: bool) -> str:
        run = self.planner.send(task, method, execute, timeout_s=self.params.service_timeout_s)
        return bytes(run.handle.goal_id.uuid).hex()

    def cancel(self, goal_id: str) -> bool:
        return self.planner.cancel_goal_id(goal_id, self.params.service_timeout_s)

    def answer(self, approval: dict, approve: bool, reason: str) -> tuple[bool, str]:
        if not self._approve.wait_for_service(timeout_sec=self.params.service_timeout_s):
            raise TimeoutError("the planner's 'approve' service is not available")
        request = Approve.Request(request_id=approval["request_id"], digest=approval["digest"], approve=approve,
                                  reason=reason)
        response = wait_for(self._approve.call_async(request), self.params.service_timeout_s)
        if response is None:
            raise TimeoutError(f"the planner did not answer within {self.params.service_timeout_s:g}s")
        self.get_logger().info(f"{'approved' if approve else 'denied'} request {approval['request_id']}: "
                               f"{response.message}")
        return response.accepted, response.message

    def history(self) -> list[dict]:
        if self.trace_path is None or not self.trace_path.exists():
            return []
        # the newest goals only: a robot's trace grows for as long as it runs
        return past_goals(list(read_traces(self.trace_path, tail_bytes=8 << 20)), self.params.past_goals)

    # -- the web server ----------------------------------------------------------------------
    def _serve(self) -> str:
        import uvicorn

        from llm_planner_ros.console.web import create_app

        app = create_app(self.view, self, self.params.allowed_hosts)
        config = uvicorn.Config(app, host=self.params.host, port=self.params.port,
                                log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        while not self._server.started:
            self._thread.join(0.05)
            if not self._thread.is_alive():
                raise PlanningError(f"cannot serve the console on {self.params.host}:{self.params.port} "
                                    "(is the port in use?)")
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/"

    def destroy_node(self) -> None:
        self._server.should_exit = True
        self._thread.join(5.0)
        super().destroy_node()


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(ConsoleNode, "console", args))
