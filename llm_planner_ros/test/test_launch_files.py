"""The launch files as a ROS 2 developer reads them (issue 40): every argument is described,
and each stack takes nav2's autostart, use_sim_time, log_level and use_respawn. Read from their
source, so it runs where launch is not installed; test_planner_launch.py runs them."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "launch").glob("*_launch.py")) + [ROOT / "llm_planner_ros" / "ros" / "operator_launch.py",
                                                          ROOT / "llm_planner_ros" / "ros" / "managed_launch.py"]


def calls(path: Path, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", None)) == name]


def test_every_launch_argument_is_described():
    undescribed = [f"{path.name}: {ast.literal_eval(c.args[0])}" for path in FILES
                   for c in calls(path, "DeclareLaunchArgument") if not any(k.arg == "description" for k in c.keywords)]
    assert not undescribed, undescribed


def test_each_stack_takes_the_managed_node_arguments_and_gives_them_to_every_stack_node():
    declared = {ast.literal_eval(c.args[0]) for c in calls(FILES[-1], "DeclareLaunchArgument")}
    assert declared == {"autostart", "use_sim_time", "log_level", "use_respawn"}
    for path in (ROOT / "launch").glob("*_launch.py"):
        assert calls(path, "stack_arguments"), path.name
        planner = [c for c in calls(path, "Node") if any(k.arg == "executable" and ast.literal_eval(k.value) ==
                                                          "planner_node" for k in c.keywords)]
        assert planner and all(any(k.arg is None and "stack_node" in ast.unparse(k.value) for k in c.keywords)
                               for c in planner), path.name
