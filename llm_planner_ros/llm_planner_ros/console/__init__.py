"""The operator console: a web page over the running stack (see ``llm_planner_ros.ros.console_node``).

``view`` holds what the console shows (ROS-free), ``web`` serves it (FastAPI, server-sent events)."""
