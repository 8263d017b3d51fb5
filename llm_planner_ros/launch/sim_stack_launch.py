"""The whole stack on the VirtualHome simulator: planner (plan_task), executor bridge, tracker.

ros2 launch llm_planner_ros sim_stack_launch.py [namespace:=/robot1] [llm_backend:=openai]
    [llm_model:=NAME | llm_model_path:=GGUF] [openai_model:=NAME [openai_base_url:=URL]]
    [scene:=NAME] [params_file:=...] [bridge_params_file:=...]
    [policy_file:=...] [enclaves:=/llm_planner_ros] [console:=true [console_port:=8080]]
    [record:=true [record_path:=run]] [autostart:=true] [use_sim_time:=false] [log_level:=info]
    [use_respawn:=false]

An argument left empty leaves the parameter as params_file sets it; each is the planner's
parameter of the same name (scene: default_scene). policy_file (what may be commanded) goes to
the planner and the bridge alike. Each node runs in
the SROS2 enclave <enclaves>/<node>; it is used only when ROS_SECURITY_ENABLE=true (README,
"Securing a robot's DDS domain").
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from llm_planner_ros.ros.managed_launch import stack_arguments, stack_node
from llm_planner_ros.ros.operator_launch import operator_tools


def generate_launch_description():
    config = PathJoinSubstitution([FindPackageShare("llm_planner_ros"), "config"])
    ns = LaunchConfiguration("namespace")
    args = [
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the stack"),
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution([config, "planner.yaml"]),
                              description="planner and tracker parameters (ros__parameters YAML)"),
        DeclareLaunchArgument("bridge_params_file",
                              default_value=PathJoinSubstitution([config, "executor_bridge.yaml"]),
                              description="executor bridge parameters (ros__parameters YAML)"),
        DeclareLaunchArgument("llm_backend", default_value="", description="embedded | openai"),
        DeclareLaunchArgument("llm_model", default_value="",
                              description="the embedded backend's model by name (python -m llm_planner_ros "
                                          "model list)"),
        DeclareLaunchArgument("llm_model_path", default_value="",
                              description="any GGUF file for the embedded backend (wins over llm_model)"),
        DeclareLaunchArgument("openai_model", default_value="", description="the model on an OpenAI-compatible "
                                                                             "server (llm_backend:=openai)"),
        DeclareLaunchArgument("openai_base_url", default_value="",
                              description="an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1"),
        DeclareLaunchArgument("scene", default_value="", description="the world's scene (default_scene)"),
        DeclareLaunchArgument("policy_file", default_value=PathJoinSubstitution([config, "policy.yaml"]),
                              description="skill policy for the planner and the bridge"),
        DeclareLaunchArgument("enclaves", default_value="/llm_planner_ros", description="SROS2 enclave root"),
        *stack_arguments(),
    ]
    policy = LaunchConfiguration("policy_file")

    def enclave(node: str) -> list:
        return ["--enclave", [LaunchConfiguration("enclaves"), "/" + node]]
    def nodes(context) -> list:
        # only the arguments given override params_file ('' would replace its value)
        given = {param: LaunchConfiguration(arg).perform(context) for arg, param in (
            ("llm_backend", "llm_backend"), ("llm_model", "llm_model"), ("llm_model_path", "llm_model_path"),
            ("openai_model", "openai_model"), ("openai_base_url", "openai_base_url"), ("scene", "default_scene"))}
        given = {param: value for param, value in given.items() if value}
        scene = {k: v for k, v in given.items() if k == "default_scene"}
        planner = Node(package="llm_planner_ros", executable="planner_node", name="planner", namespace=ns,
                       **stack_node([LaunchConfiguration("params_file"), policy, {**given, "tracker_mode": "ros"}],
                                    enclave("planner")))
        bridge = Node(package="llm_planner_ros", executable="executor_bridge", name="executor_bridge", namespace=ns,
                      **stack_node([LaunchConfiguration("bridge_params_file"), policy, {"backend": "sim", **scene}],
                                   enclave("executor_bridge")))
        tracker = Node(package="llm_planner_ros", executable="tracker_node", name="tracker", namespace=ns,
                       **stack_node([LaunchConfiguration("params_file")], enclave("tracker")))
        return [bridge, planner, tracker]
    return LaunchDescription([*args, OpaqueFunction(function=nodes), *operator_tools(ns, enclave)])
