"""Start the package's console scripts (as `ros2 run` would) in their own processes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from ament_index_python.packages import get_package_prefix


def console_script(name: str) -> Path:
    """Path of an installed console script of llm_planner_ros (what `ros2 run` executes)."""
    path = Path(get_package_prefix("llm_planner_ros")) / "lib" / "llm_planner_ros" / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run scripts/bootstrap.sh")
    return path


class NodeProcess:
    """A node in a child process; collects its output and waits for a ready line."""

    def __init__(self, argv: Sequence[str], ready: Optional[str] = None, timeout: float = 30.0) -> None:
        self.argv = list(argv)
        self.ready = ready
        self.timeout = timeout
        self.lines: list[str] = []
        self._ready_event = threading.Event()
        self.proc: Optional[subprocess.Popen[str]] = None

    def __enter__(self) -> NodeProcess:
        env = dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_LOGGING_BUFFERED_STREAM="0")
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env)
        threading.Thread(target=self._pump, daemon=True).start()
        if self.ready is not None:
            deadline = time.monotonic() + self.timeout
            while not self._ready_event.wait(0.05):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{self.argv[0]} exited or was not ready after "
                                       f"{self.timeout}s:\n{self.output}")
        return self

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if self.ready is not None and self.ready in line:
                self._ready_event.set()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def stop(self) -> Optional[int]:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ros_node(script: str, ns: str, ready: str, *params: str, timeout: float = 120) -> NodeProcess:
    """An installed console script in namespace ``ns`` with ``-p name:=value`` parameters."""
    argv = [str(console_script(script)), "--ros-args", "-r", f"__ns:={ns}"]
    for p in params:
        argv += ["-p", p]
    return NodeProcess(argv, ready=ready, timeout=timeout)


def python_module(module: str) -> list[str]:
    return [sys.executable, "-m", module]


def wait_until(predicate, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
