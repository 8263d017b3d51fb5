"""Thin rclpy nodes over the ROS-free core."""
