"""The planner on a real robot: planner (plan_task) + executor bridge forwarding each skill to the
robot's own ExecuteSkill action server (`robot_action`). For a dry run against the reference
simulated robot add `sim_robot:=true` (the default world given in code), or `profile:=<name or profile.yaml>`
for the reference robot of a world profile (the PDDL world executor, e.g. the shipped
`mobile_manipulator`).

ros2 launch llm_planner_ros robot_stack_launch.py robot_action:=/my_robot/execute_skill
    [policy_file:=...] [enclaves:=/llm_planner_ros]
ros2 launch llm_planner_ros robot_stack_launch.py profile:=mobile_manipulator
    [autostart:=true] [use_sim_time:=false] [log_level:=info] [use_respawn:=false]

With profile:=..., or world:=none for a robot that declares its own profile, the planner loads no
world given in code: the stack never imports the default world's simulator.

policy_file (what may be commanded) goes to the planner and the bridge alike: the bridge refuses
what it refuses before anything reaches the robot. Each node runs in the SROS2 enclave
<enclaves>/<node>, used when ROS_SECURITY_ENABLE=true (README, "Securing a robot's DDS domain").
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from llm_planner_ros.ros.managed_launch import stack_arguments, stack_node
from llm_planner_ros.ros.operator_launch import operator_tools


def generate_launch_description():
    config = PathJoinSubstitution([FindPackageShare("llm_planner_ros"), "config"])
    ns = LaunchConfiguration("namespace")
    policy = LaunchConfiguration("policy_file")

    def enclave(node: str) -> list:
        return ["--enclave", [LaunchConfiguration("enclaves"), "/" + node]]
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the stack"),
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution([config, "planner.yaml"]),
                              description="planner and tracker parameters (ros__parameters YAML)"),
        DeclareLaunchArgument("robot_action", default_value="robot/execute_skill",
                              description="the robot's ExecuteSkill action server"),
        DeclareLaunchArgument("robot_timeout_s", default_value="30.0",
                              description="the bridge's limit for one skill on the robot, in seconds"),
        DeclareLaunchArgument("sim_robot", default_value="false",
                              description="also start the reference simulated robot under <ns>/robot"),
        DeclareLaunchArgument("profile", default_value="",
                              description="also start the reference robot of this world profile under <ns>/robot"),
        DeclareLaunchArgument("world", default_value=PythonExpression(
                                  ["'none' if '", LaunchConfiguration("profile"), "' else 'virtualhome'"]),
                              description="the planner's world given in code, for a robot that declares no "
                                          "profile; 'none' (the default with profile:=...) loads none"),
        DeclareLaunchArgument("policy_file", default_value=PathJoinSubstitution([config, "policy.yaml"]),
                              description="skill policy for the planner and the bridge"),
        DeclareLaunchArgument("enclaves", default_value="/llm_planner_ros", description="SROS2 enclave root"),
        *stack_arguments(),
        Node(package="llm_planner_ros", executable="executor_bridge", name="executor_bridge", namespace=ns,
             **stack_node([policy, {"backend": "robot", "robot_action": LaunchConfiguration("robot_action"),
                                    "robot_timeout_s": LaunchConfiguration("robot_timeout_s")}],
                          enclave("executor_bridge"))),
        Node(package="llm_planner_ros", executable="planner_node", name="planner", namespace=ns,
             **stack_node([LaunchConfiguration("params_file"), policy, {"world": LaunchConfiguration("world")}],
                          enclave("planner"))),
        Node(package="llm_planner_ros", executable="tracker_node", name="tracker", namespace=ns,
             **stack_node([LaunchConfiguration("params_file")], enclave("tracker"))),
        Node(package="llm_planner_ros", executable="sim_robot", name="sim_robot",
             namespace=[ns, "/robot"], condition=IfCondition(LaunchConfiguration("sim_robot")),
             ros_arguments=enclave("sim_robot"), output="screen", emulate_tty=True),
        Node(package="llm_planner_ros", executable="pddl_robot", name="pddl_robot",
             namespace=[ns, "/robot"], parameters=[{"profile": LaunchConfiguration("profile")}],
             condition=IfCondition(PythonExpression(["'", LaunchConfiguration("profile"), "' != ''"])),
             ros_arguments=enclave("pddl_robot"), output="screen", emulate_tty=True),
        *operator_tools(ns, enclave),
    ])
