"""ROS-free core: planning, translation, LLM clients, executors, tracking and metrics."""
