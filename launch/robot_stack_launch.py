"""The planner on a real robot: planner (plan_task) + executor bridge forwarding each skill to the
robot's own ExecuteSkill action server (`robot_action`). For a dry run against the reference
simulated robot add `sim_robot:=true`.

ros2 launch llm_planner_ros robot_stack_launch.py robot_action:=/my_robot/execute_skill
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    config = PathJoinSubstitution([FindPackageShare("llm_planner_ros"), "config"])
    ns = LaunchConfiguration("namespace")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value=""),
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution([config, "planner.yaml"])),
        DeclareLaunchArgument("robot_action", default_value="robot/execute_skill",
                              description="the robot's ExecuteSkill action server"),
        DeclareLaunchArgument("robot_timeout_s", default_value="30.0"),
        DeclareLaunchArgument("sim_robot", default_value="false",
                              description="also start the reference simulated robot under <ns>/robot"),
        Node(package="llm_planner_ros", executable="executor_bridge", name="executor_bridge", namespace=ns,
             parameters=[{"backend": "robot", "robot_action": LaunchConfiguration("robot_action"),
                          "robot_timeout_s": LaunchConfiguration("robot_timeout_s")}],
             output="screen", emulate_tty=True),
        Node(package="llm_planner_ros", executable="planner_node", name="planner", namespace=ns,
             parameters=[LaunchConfiguration("params_file")], output="screen", emulate_tty=True),
        Node(package="llm_planner_ros", executable="tracker_node", name="tracker", namespace=ns,
                   parameters=[LaunchConfiguration("params_file")],
             output="screen", emulate_tty=True),
        Node(package="llm_planner_ros", executable="sim_robot", name="sim_robot",
             namespace=[ns, "/robot"], condition=IfCondition(LaunchConfiguration("sim_robot")),
             output="screen", emulate_tty=True),
    ])
