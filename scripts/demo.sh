#!/usr/bin/env bash
# Main job: start the planner stack, send one goal, stream its feedback, print the result.
# Usage (after `source env.sh`): scripts/demo.sh ["task text"] [extra send_goal args...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=${1:-make breakfast}
shift || true
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-42} ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
lib="$root/install/llm_planner_ros/lib/llm_planner_ros"

"$lib/planner_node" --ros-args --params-file "$root/config/planner.yaml" &
node_pid=$!
trap 'kill -INT $node_pid 2>/dev/null; wait $node_pid 2>/dev/null || true' EXIT
"$lib/send_goal" "$task" --server-timeout 120 "$@"
