"""Launch entities shared by the stack launch files: the operator console and the MCAP recorder,
each off unless asked for (``console:=true``, ``record:=true``)."""
from __future__ import annotations

from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def operator_tools(namespace, enclave) -> list:
    """Arguments console, console_host, console_port, record, record_path, and the two nodes."""
    return [
        DeclareLaunchArgument("console", default_value="false", description="serve the operator console"),
        DeclareLaunchArgument("console_host", default_value="127.0.0.1",
                              description="the console's address; 127.0.0.1 keeps it on this machine"),
        DeclareLaunchArgument("console_port", default_value="8080",
                              description="the console's port (0: any free one)"),
        DeclareLaunchArgument("record", default_value="false", description="record the goals to MCAP"),
        DeclareLaunchArgument("record_path", default_value="",
                              description="the record's folder (an MCAP file per ended goal); "
                                          "empty = ~/.ros/llm_planner_ros/records/<ns>.<time>"),
        Node(package="llm_planner_ros", executable="console_node", name="console", namespace=namespace,
             parameters=[{"host": LaunchConfiguration("console_host"),
                          "port": LaunchConfiguration("console_port")}],
             condition=IfCondition(LaunchConfiguration("console")),
             ros_arguments=enclave("console"), output="screen", emulate_tty=True),
        Node(package="llm_planner_ros", executable="mcap_recorder", name="mcap_recorder", namespace=namespace,
             parameters=[{"path": LaunchConfiguration("record_path")}],
             condition=IfCondition(LaunchConfiguration("record")),
             ros_arguments=enclave("mcap_recorder"), output="screen", emulate_tty=True),
    ]
