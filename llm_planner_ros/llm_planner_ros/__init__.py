"""llm_planner_ros: LLM task planning grounded in admissible robot skills, for ROS 2."""
__version__ = "0.1.0"
