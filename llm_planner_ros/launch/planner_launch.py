"""Bring up the planner node (goal action server `plan_task`).

ros2 launch llm_planner_ros planner_launch.py [namespace:=/robot1] [params_file:=/path.yaml]
    [policy_file:=/path.yaml] [enclaves:=/llm_planner_ros] [autostart:=true] [use_sim_time:=false]
    [log_level:=info] [use_respawn:=false]
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from llm_planner_ros.ros.managed_launch import stack_arguments, stack_node


def generate_launch_description():
    config = PathJoinSubstitution([FindPackageShare("llm_planner_ros"), "config"])
    default_params = PathJoinSubstitution([config, "planner.yaml"])
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the stack"),
        DeclareLaunchArgument("params_file", default_value=default_params,
                              description="planner parameters (ros__parameters YAML)"),
        DeclareLaunchArgument("policy_file", default_value=PathJoinSubstitution([config, "policy.yaml"]),
                              description="skill policy (give the executor bridge the same file)"),
        DeclareLaunchArgument("enclaves", default_value="/llm_planner_ros", description="SROS2 enclave root"),
        *stack_arguments(),
        Node(package="llm_planner_ros", executable="planner_node", name="planner",
             namespace=LaunchConfiguration("namespace"),
             **stack_node([LaunchConfiguration("params_file"), LaunchConfiguration("policy_file")],
                          ["--enclave", [LaunchConfiguration("enclaves"), "/planner"]])),
    ])
