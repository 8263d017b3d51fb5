"""What a fault case observed, for bench/faults.py's table: with FAULTS_REPORT set, each case
appends its goal, status, reason, detail and time to that JSONL file."""
from __future__ import annotations

import json
import os
import time

from action_msgs.msg import GoalStatus

from helpers.ros_client import RosTestClient
from llm_planner_msgs.action import PlanTask


def report(**fields) -> None:
    """With FAULTS_REPORT set (bench/faults.py), append what a case observed to that JSONL file."""
    path = os.environ.get("FAULTS_REPORT")
    if path:
        case = os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[-1].rsplit(" ", 1)[0]
        with open(path, "a") as f:
            f.write(json.dumps({"case": case, **fields}) + "\n")


def outcome(client: RosTestClient, goal: PlanTask.Goal, timeout: float = 120) -> tuple[int, PlanTask.Result, float]:
    t0 = time.monotonic()
    run = client.send_plan(goal, timeout=60)   # discovery and acceptance under CI's load (30 s once fell short)
    assert run.handle.accepted
    status, result = run.result(timeout=timeout)
    seconds = time.monotonic() - t0
    report(task=goal.task[:60], status=STATUS.get(status, str(status)), reason=result.termination_reason,
           detail=result.detail[:160], seconds=round(seconds, 2))
    return status, result, seconds


STATUS = {GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED", GoalStatus.STATUS_ABORTED: "ABORTED",
          GoalStatus.STATUS_CANCELED: "CANCELED"}
