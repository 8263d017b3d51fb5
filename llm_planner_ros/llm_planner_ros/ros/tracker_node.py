"""Tracker node: serves ``check_subtask`` (CheckSubtask), publishes the progress pointer on
``tracker_state`` (latched) and its liveness on ``heartbeat/tracker``.

A question about the whole task is answered from the goal conditions the executor bridge
reports. A question about a subtask is PET's "Did you finish the task of X?" over the given
observations, answered by the judge ``pet_judge`` names (the LLM's p(yes) > p(no), or embedding
similarity); the pointer moves past the subtask when the answer is yes. A question about another
text than the subtask at ``pointer`` is PET's reopen check (the opposite of that finished subtask,
e.g. "close the fridge"): a yes moves the pointer back to it, a no leaves the pointer where it was.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Optional

from rclpy.callback_groups import ReentrantCallbackGroup

from llm_planner_msgs.msg import TrackerState
from llm_planner_msgs.srv import CheckSubtask
from llm_planner_ros.core.errors import ExecutorError
from llm_planner_ros.core.settings import ManagedNodeParams
from llm_planner_ros.pet.judges import Answer, SubtaskJudge
from llm_planner_ros.ros.conversions import redacted
from llm_planner_ros.ros.diagnostics import OK, WARN, publish_diagnostics
from llm_planner_ros.ros.executor_client import BridgeWorld
from llm_planner_ros.ros.liveness import publish_heartbeat
from llm_planner_ros.ros.managed import ManagedNode
from llm_planner_ros.ros.qos import LATCHED
from llm_planner_ros.ros.spin import adopt_package_logs, spin_node


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


class TrackerNode(ManagedNode):
    """PET's tracker. A managed node: configure loads its judge (the LLM or the embedder); while
    it is not active a question is answered "not done", saying why."""

    def __init__(self) -> None:
        super().__init__("tracker")
        adopt_package_logs(self)
        from llm_planner_ros.pet.session import PetSettings
        from llm_planner_ros.ros.params import declare_and_validate, refuse_unknown_parameters
        from llm_planner_ros.wiring import BackendSettings

        params = declare_and_validate(self, ManagedNodeParams)   # its judge's: PetSettings, BackendSettings
        self._pet = declare_and_validate(self, PetSettings)
        self._backend = declare_and_validate(self, BackendSettings)
        refuse_unknown_parameters(self)
        self.judge: Optional[SubtaskJudge] = None
        self.bridge = BridgeWorld(self, timeout_s=30.0, wait_s=5.0)
        self.state = TrackerState(pointer=-1)
        self._asking: dict[tuple, Future] = {}   # the judge's questions being answered, by content
        self._asking_lock = threading.Lock()
        self._pub = self.create_publisher(TrackerState, "tracker_state", LATCHED)
        self._pub.publish(self.state)
        self.create_service(CheckSubtask, "check_subtask", self._check, callback_group=ReentrantCallbackGroup())
        publish_heartbeat(self, "tracker")
        publish_diagnostics(self, "tracker", self._health)
        self.start(params.autostart)

    def configure(self) -> None:
        """The judge: the LLM, or the embedder, as pet_judge says."""
        from llm_planner_ros.wiring import build_embedder, build_llm

        if self._pet.pet_judge == "llm":
            from llm_planner_ros.pet.judges import LLMSubtaskJudge

            self.judge = LLMSubtaskJudge(build_llm(self._backend))
        else:
            from llm_planner_ros.pet.judges import EmbeddingSubtaskJudge

            self.judge = EmbeddingSubtaskJudge(build_embedder(self._backend), self._pet.pet_completion_threshold)

    def activate(self) -> None:
        self.get_logger().info(f"serving 'check_subtask' (whole task: goal conditions from the executor bridge; "
                               f"subtasks: {type(self.judge).__name__})")

    def cleanup(self) -> None:
        self.judge = None

    def _health(self) -> tuple[bytes, str, dict[str, object]]:
        heard = self.bridge.bridge.heard()
        values = {"judge": type(self.judge).__name__ if self.judge is not None else "", "executor_bridge heard": heard}
        if not self.serving:
            return WARN, "not active (lifecycle): questions are answered 'not done'", values
        return (OK, "serving", values) if heard else (WARN, "serving; the executor bridge is not heard", values)

    def _check(self, request: CheckSubtask.Request, response: CheckSubtask.Response) -> CheckSubtask.Response:
        judge = self.judge
        if not self.serving or judge is None:
            response.done, response.probability, response.source = False, 0.5, "unknown"
            response.detail = "the tracker is not active (lifecycle)"
            return response
        whole_task = not request.subtask.strip() or normalise(request.subtask) == normalise(request.task)
        goal: Optional[bool] = None
        if whole_task:
            try:
                self.bridge.forget()   # ask the bridge now, not a reply from an earlier question
                goal = self.bridge.goal_met()
            except ExecutorError as exc:
                response.detail = f"cannot reach the executor bridge: {exc}"
        if goal is not None:
            response.done, response.probability = goal, 1.0 if goal else 0.0
            response.source = "goal_check"
            response.detail = "the executor reports the goal conditions " + ("met" if goal else "not met")
        elif not whole_task:
            try:
                answer = self._ask_once(judge, request)
                response.done, response.probability, response.source = answer.done, answer.probability, answer.source
                response.detail = (f"asked 'Did you finish the task of {request.subtask}?' over "
                                   f"{len(request.observations)} observation(s)")
            except Exception as exc:   # a failing judge answers 'unknown', the node keeps serving
                response.done, response.probability, response.source = False, 0.5, "unknown"
                response.detail = f"the {type(judge).__name__} failed: {exc}"
        else:
            response.done, response.probability, response.source = False, 0.5, "unknown"
            response.detail = response.detail or "the executor cannot check goal conditions for this task"
        if request.task != self.state.task:
            self.state.goal_met = False
        self.state.task = request.task
        self.state.subtasks = list(request.subtasks)
        if 0 <= request.pointer < len(request.subtasks) and \
                normalise(request.subtask) != normalise(request.subtasks[request.pointer]):
            if response.done:   # a reopen check said yes: the planner moves its pointer back to that subtask
                self.state.pointer = request.pointer
        else:
            self.state.pointer = request.pointer + 1 if response.done and request.pointer >= 0 else request.pointer
        if goal is not None:
            self.state.goal_met = goal
        self.state.source = response.source
        self.state.last_question = request.subtask or request.task
        self.state.last_answer = response.done
        self._pub.publish(redacted(self.state))
        return redacted(response)

    def _ask_once(self, judge: SubtaskJudge, request: CheckSubtask.Request) -> Answer:
        """The judge's answer. A copy of a question still being answered (the client sends an
        unanswered request again every few seconds) waits for that answer: a slow judge is not
        asked again, and the copies do not queue up ahead of the next question."""
        key = (request.task, request.subtask, tuple(request.observations))
        with self._asking_lock:
            pending = self._asking.get(key)
            first = pending is None
            if pending is None:
                pending = self._asking[key] = Future()
        if not first:
            return pending.result()
        try:
            answer = judge.ask(request.task, request.subtask, list(request.observations))
            pending.set_result(answer)
            return answer
        except BaseException as exc:
            pending.set_exception(exc)
            raise
        finally:
            with self._asking_lock:
                del self._asking[key]


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(TrackerNode, "tracker", args))

