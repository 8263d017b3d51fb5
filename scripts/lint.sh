#!/usr/bin/env bash
# Lint and types, as ament_lint does for ROS packages: ruff (ruff.toml) over the package, the
# tests and the benchmarks; mypy (llm_planner_ros/setup.cfg) over the package. Run by `make test`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ruff check llm_planner_ros bench examples scripts docs/_ext
(cd llm_planner_ros && mypy llm_planner_ros)   # not beside llm_planner_msgs/, the interfaces' sources
