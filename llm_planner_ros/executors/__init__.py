"""Skill executors: the VirtualHome simulator (and, through ROS, robots)."""
