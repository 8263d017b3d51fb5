"""Test-wide isolation: a private ROS domain and localhost-only discovery for every run."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

# Chosen before rclpy is imported anywhere; child processes inherit it.
if "LLM_PLANNER_TEST_DOMAIN" not in os.environ:
    os.environ["LLM_PLANNER_TEST_DOMAIN"] = str(random.SystemRandom().randint(1, 100))
os.environ["ROS_DOMAIN_ID"] = os.environ["LLM_PLANNER_TEST_DOMAIN"]
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_STATIC_PEERS", None)

TEST_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TEST_DIR))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TEST_DIR), os.environ.get("PYTHONPATH")]))
