import sys

from llm_planner_ros.cli import main

sys.exit(main())
