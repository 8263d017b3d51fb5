"""Issue 40: a pip-only user, with nothing but ``source env.sh`` (no ros2 CLI), starts the
robot stack of the mobile_manipulator profile with one command and sends it a goal with another,
both as the README writes them (this test's namespace for /robot1, and any free port for the
console's 8080, so that it runs beside other tests)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from helpers.processes import wait_until

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "env.sh"


def readme_commands() -> tuple[str, str]:
    """The README's stack command and goal command."""
    text = (ROOT / "README.md").read_text()
    stack = re.search(r"^llm_planner_stack .+$", text, re.M)
    goal = re.search(r"^llm_planner_send_goal .+$", text, re.M)
    assert stack and goal, "the README names no llm_planner_stack / llm_planner_send_goal command"
    return stack.group(0), goal.group(0)


@pytest.mark.skipif(not ENV.exists(), reason="env.sh is written by scripts/bootstrap.sh")
def test_the_readmes_pip_only_commands_run_a_profile_stack_end_to_end():
    stack_cmd, goal_cmd = readme_commands()
    ns = f"/pip_{uuid.uuid4().hex[:6]}"
    stack_cmd = stack_cmd.replace("/robot1", ns).replace("--console", "--console --console-port 0")
    goal_cmd = goal_cmd.replace("/robot1", ns)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH", "VIRTUAL_ENV")}
    clean["PATH"] = "/usr/local/bin:/usr/bin:/bin"   # nothing but what env.sh gives
    stack = subprocess.Popen(["bash", "-c", f"source {ENV} && exec {stack_cmd}"], cwd=ROOT, env=clean,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(iter(stack.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: any("planner ready" in line for line in out)
                          and any("serving action 'execute_skill'" in line for line in out)
                          and any("console" in line and "http://" in line for line in out)
                          or stack.poll() is not None, 240), "".join(out[-40:])
        assert stack.poll() is None, "".join(out[-40:])
        goal = subprocess.run(["bash", "-c", f"source {ENV} && {goal_cmd}"], cwd=ROOT, env=clean,
                              capture_output=True, text=True, timeout=300)
        assert goal.returncode == 0, goal.stdout + goal.stderr
        assert "reason: goal_reached" in goal.stdout, goal.stdout
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGINT)   # Ctrl-C in the user's terminal
        code = stack.wait(60)
        reader.join(10)
    assert code == 0, "".join(out[-40:])
