"""Skill vocabulary, templates and admissible skill banks (ROS-free)."""
