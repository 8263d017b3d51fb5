"""The skill bank a world offers for translation (ROS-free)."""
