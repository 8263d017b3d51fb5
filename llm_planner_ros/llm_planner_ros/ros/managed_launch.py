"""Launch arguments every stack takes, as nav2's bringup does: ``autostart`` for its managed
nodes (the planner, the bridge, the tracker), ``use_sim_time``, ``log_level`` and
``use_respawn``; and the keyword arguments that give them to a node."""
from __future__ import annotations

from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration


def stack_arguments() -> list:
    return [
        DeclareLaunchArgument("autostart", default_value="true",
                              description="configure and activate the planner, the bridge and the tracker at start "
                                          "(false: each waits for ros2 lifecycle set)"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="every node uses /clock (a simulator's time) instead of the wall clock"),
        DeclareLaunchArgument("log_level", default_value="info",
                              description="every node's log level: debug, info, warn, error or fatal"),
        DeclareLaunchArgument("use_respawn", default_value="false",
                              description="start a node again 2 s after it exits"),
    ]


def stack_node(parameters: list, ros_arguments: list, managed: bool = True) -> dict:
    """A stack node's keyword arguments: its ``parameters`` with use_sim_time (and autostart for
    a managed node), its ``ros_arguments`` with the log level, and respawn."""
    shared = {"use_sim_time": LaunchConfiguration("use_sim_time")}
    if managed:
        shared["autostart"] = LaunchConfiguration("autostart")
    return dict(parameters=[*parameters, shared], ros_arguments=[*ros_arguments, "--log-level",
                                                                 LaunchConfiguration("log_level")],
                respawn=LaunchConfiguration("use_respawn"), respawn_delay=2.0, output="screen", emulate_tty=True)
