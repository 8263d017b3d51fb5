#!/usr/bin/env bash
# Lint and types, as ament_lint does for ROS packages: ruff (ruff.toml) over the package, the
# tests and the benchmarks; mypy (setup.cfg) over the package. Run by `make test`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ruff check llm_planner_ros test bench
mypy llm_planner_ros
