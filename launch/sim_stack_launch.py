"""The whole stack on the VirtualHome simulator: planner (plan_task), executor bridge, tracker.

ros2 launch llm_planner_ros sim_stack_launch.py [namespace:=/robot1] [llm_backend:=openai]
    [llm_model:=...] [scene:=TrimmedTestScene1] [params_file:=...] [bridge_params_file:=...]
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    config = PathJoinSubstitution([FindPackageShare("llm_planner_ros"), "config"])
    ns = LaunchConfiguration("namespace")
    args = [
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the stack"),
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution([config, "planner.yaml"])),
        DeclareLaunchArgument("bridge_params_file",
                              default_value=PathJoinSubstitution([config, "executor_bridge.yaml"])),
        DeclareLaunchArgument("llm_backend", default_value="embedded", description="embedded | openai"),
        DeclareLaunchArgument("llm_model", default_value="",
                              description="GGUF path (embedded) or model name (openai)"),
        DeclareLaunchArgument("openai_base_url", default_value=""),
        DeclareLaunchArgument("scene", default_value="TrimmedTestScene1"),
    ]
    planner = Node(package="llm_planner_ros", executable="planner_node", name="planner", namespace=ns,
                   parameters=[LaunchConfiguration("params_file"), {
                       "llm_backend": LaunchConfiguration("llm_backend"),
                       "llm_model_path": LaunchConfiguration("llm_model"),
                       "openai_model": LaunchConfiguration("llm_model"),
                       "openai_base_url": LaunchConfiguration("openai_base_url"),
                       "default_scene": LaunchConfiguration("scene"),
                       "tracker_mode": "ros"}],
                   output="screen", emulate_tty=True)
    bridge = Node(package="llm_planner_ros", executable="executor_bridge", name="executor_bridge", namespace=ns,
                  parameters=[LaunchConfiguration("bridge_params_file"),
                              {"backend": "virtualhome", "default_scene": LaunchConfiguration("scene")}],
                  output="screen", emulate_tty=True)
    tracker = Node(package="llm_planner_ros", executable="tracker_node", name="tracker", namespace=ns,
                   parameters=[LaunchConfiguration("params_file")],
                   output="screen", emulate_tty=True)
    return LaunchDescription([*args, bridge, planner, tracker])
