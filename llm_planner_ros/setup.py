from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

package_name = "llm_planner_ros"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(include=[package_name, f"{package_name}.*"]),
    package_data={f"{package_name}.console": ["static/*.html"],
                  f"{package_name}.profiles": ["worlds.yaml", "*/*.yaml", "*/*.pddl"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", glob("launch/*_launch.py")),
        (f"share/{package_name}/config", glob("config/*.yaml")),
        (f"share/{package_name}/security", glob("security/*.xml")),
    ] + [   # each world's domain and profile, where PlanSys2 and ros2 pkg prefix find them
        (f"share/{package_name}/profiles/{Path(d).name}", glob(f"{d}/*.pddl") + glob(f"{d}/*.yaml"))
        for d in sorted(glob(f"{package_name}/profiles/*")) if glob(f"{d}/*.pddl")
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="llm_planner_ros maintainers",
    maintainer_email="maintainers@llm-planner-ros.invalid",
    description="LLM task planning grounded in admissible robot skills, for ROS 2.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "planner_node = llm_planner_ros.ros.planner_node:main",
            "send_goal = llm_planner_ros.ros.send_goal:main",
            "executor_bridge = llm_planner_ros.ros.executor_bridge:main",
            "sim_robot = llm_planner_ros.ros.executor_bridge:sim_robot_main",
            "pddl_robot = llm_planner_ros.ros.pddl_robot:main",
            "tracker_node = llm_planner_ros.ros.tracker_node:main",
            "console_node = llm_planner_ros.ros.console_node:main",
            "mcap_recorder = llm_planner_ros.ros.recorder:main",
            # on PATH after `source env.sh` (pip-only users, no ros2 CLI)
            "llm_planner_stack = llm_planner_ros.ros.stack:main",
            "llm_planner_send_goal = llm_planner_ros.ros.send_goal:main",
        ],
    },
)
