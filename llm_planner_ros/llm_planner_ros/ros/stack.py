"""Start a planner stack without ``ros2 launch`` (a pip-only install: ``source env.sh`` and no
ROS 2 CLI): the same nodes with the same parameters as ``launch/robot_stack_launch.py``, each in
its own process, until Ctrl-C.

    llm_planner_stack --profile mobile_manipulator --namespace /robot1 [--console]
    llm_planner_send_goal "Turn on the light" --namespace /robot1 --execute

With ``--profile`` the reference robot of that world profile runs under ``<namespace>/robot``
(the PDDL world executor) and the planner loads no world given in code; without it the bridge
forwards each skill to your robot's ExecuteSkill server (``--robot-action``) and the planner
plans in the profile your robot declares (``--world`` names a world given in code instead).
"""
from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from llm_planner_ros.ros.stop_request import StopRequest

STOP_WAIT_S = 15.0   # after Ctrl-C: each node's time to end its goals before it is killed


@dataclass(frozen=True)
class StackNode:
    module: str        # llm_planner_ros.ros.<module>
    function: str      # its entry point
    name: str
    namespace: str
    params: tuple[str, ...] = ()         # name:=value
    params_files: tuple[str, ...] = ()

    def command(self) -> list[str]:
        argv = [sys.executable, "-c", f"from llm_planner_ros.ros.{self.module} import {self.function}; "
                                      f"{self.function}()",
                "--ros-args", "-r", f"__node:={self.name}", "-r", f"__ns:={self.namespace or '/'}"]
        for path in self.params_files:
            argv += ["--params-file", path]
        for param in self.params:
            argv += ["-p", param]
        return argv


def config_dir() -> Path:
    """The package's installed config/ (the share folder colcon installs, as launch finds it)."""
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory("llm_planner_ros")) / "config"


def stack_nodes(args: argparse.Namespace) -> list[StackNode]:
    """The nodes of ``robot_stack_launch.py`` for these arguments (and the console's)."""
    ns = args.namespace.rstrip("/") if args.namespace not in ("", "/") else ""
    config = config_dir()
    params_file = args.params_file or str(config / "planner.yaml")
    policy = args.policy_file or str(config / "policy.yaml")
    world = args.world if args.world is not None else ("none" if args.profile else "")   # "": the node's default
    nodes = [
        StackNode("executor_bridge", "main", "executor_bridge", ns,
                  ("backend:=robot", f"robot_action:={args.robot_action}", f"robot_timeout_s:={args.robot_timeout_s}"),
                  (policy,)),
        StackNode("planner_node", "main", "planner", ns, (f"world:={world}",) if world else (), (params_file, policy)),
        StackNode("tracker_node", "main", "tracker", ns, (), (params_file,)),
    ]
    if args.profile:
        nodes.insert(0, StackNode("pddl_robot", "main", "pddl_robot", f"{ns}/robot", (f"profile:={args.profile}",)))
    if args.console:
        nodes.append(StackNode("console_node", "main", "console", ns, (f"port:={args.console_port}",),
                               (str(config / "console.yaml"),)))
    return nodes


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--profile", default="", help="start the reference robot of this world profile (a shipped "
                   "profile's name, e.g. mobile_manipulator, or a profile.yaml) under <namespace>/robot")
    p.add_argument("--namespace", default="", help="the stack's namespace, e.g. /robot1")
    p.add_argument("--console", action="store_true", help="also start the operator console (a web page)")
    p.add_argument("--console-port", type=int, default=8080, help="the console's port (default 8080)")
    p.add_argument("--robot-action", default="robot/execute_skill",
                   help="your robot's ExecuteSkill action, relative to the namespace (default robot/execute_skill)")
    p.add_argument("--robot-timeout-s", type=float, default=30.0, help="the bridge's limit for one skill")
    p.add_argument("--world", default=None, help="the planner's world given in code for a robot that declares "
                   "no profile ('none' loads none; default: none with --profile, else the default world)")
    p.add_argument("--params-file", default="", help="planner parameters (default: the installed planner.yaml)")
    p.add_argument("--policy-file", default="", help="skill policy (default: the installed policy.yaml)")
    p.add_argument("--print", action="store_true", dest="print_only", help="print the commands and exit")
    return p.parse_args(argv)


def run(nodes: list[StackNode], stop: StopRequest) -> int:
    """Start ``nodes``; when ``stop`` is set or one of them exits, interrupt the others (as
    Ctrl-C would), wait for them, and return the first non-zero exit code (0 if none)."""
    procs: list[subprocess.Popen] = []
    try:
        for node in nodes:
            procs.append(subprocess.Popen(node.command()))
        while not stop.wait(0.2):
            if any(p.poll() is not None for p in procs):
                break
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_WAIT_S
        for node, p in zip(nodes, procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"llm_planner_stack: {node.name} did not stop within {STOP_WAIT_S:.0f} s of Ctrl-C; "
                      "killing it", file=sys.stderr, flush=True)
                p.kill()
                p.wait()
    codes = [p.returncode for p in procs]
    return next((c for c in codes if c not in (0, -signal.SIGINT, 130)), 0)


def main(argv: Optional[list[str]] = None) -> None:
    args = parse_args(argv)
    nodes = stack_nodes(args)
    if args.print_only:
        for node in nodes:
            print(" ".join(node.command()))
        return
    raise SystemExit(run(nodes, StopRequest().install()))


if __name__ == "__main__":
    main()
