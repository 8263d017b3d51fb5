"""Issue 40, with the upstream ros2 CLI where it is installed (it ships with ROS 2, not on PyPI):
after ``ros2 launch llm_planner_ros sim_stack_launch.py``, ``ros2 lifecycle get`` reports the
planner, the bridge and the tracker ``active``."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import uuid

import pytest

from helpers.processes import wait_until


def _has_verbs(*verbs: str) -> bool:
    if shutil.which("ros2") is None:
        return False
    listed = subprocess.run(["ros2", "--help"], capture_output=True, text=True, timeout=60).stdout
    return all(f"    {v}" in listed or f" {v} " in listed for v in verbs)


pytestmark = pytest.mark.skipif(not _has_verbs("launch", "lifecycle"),
                                reason="the ros2 CLI with launch and lifecycle is not installed")


def test_ros2_lifecycle_get_reports_the_launched_stack_active():
    ns = f"/cli_{uuid.uuid4().hex[:6]}"
    launch = subprocess.Popen(["ros2", "launch", "llm_planner_ros", "sim_stack_launch.py", f"namespace:={ns}"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(iter(launch.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: any("planner ready" in line for line in out) or launch.poll() is not None, 240), \
            "".join(out[-30:])
        states: dict[str, str] = {}

        def all_active() -> bool:   # the CLI's first graph may not hold the nodes' services yet
            for node in ("planner", "executor_bridge", "tracker"):
                got = subprocess.run(["ros2", "lifecycle", "get", f"{ns}/{node}", "--no-daemon"],
                                     capture_output=True, text=True, timeout=60)
                states[node] = (got.stdout + got.stderr).strip()
            return all(s.startswith("active") for s in states.values())
        assert wait_until(all_active, 120, interval=1.0), states
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGINT)
        launch.wait(60)
        reader.join(10)
