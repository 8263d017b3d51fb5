#!/usr/bin/env bash
# Main job: start the stack (planner + executor bridge on the VirtualHome simulator), send one
# goal, stream its feedback, print the result and the executed program, stop the stack.
# Usage (after `source env.sh`): scripts/demo.sh ["task text"] [extra send_goal args...]
# Default goal: method interpret (the task sentence -> goal conditions -> Fast Downward), executed
# on the simulator.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=${1:-Wash hands}
shift || true
extra=("$@")
# an interpreted goal the planner is unsure of waits for a confirmation: a terminal prompts for it,
# elsewhere (CI, a pipe) the demo confirms it (--yes), and the output shows what was confirmed
if [ ${#extra[@]} -eq 0 ]; then
    extra=(--method interpret --execute)
    [ -t 0 ] || extra+=(--yes)
fi
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-42} ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
lib="$root/install/llm_planner_ros/lib/llm_planner_ros"

"$lib/executor_bridge" --ros-args --params-file "$root/llm_planner_ros/config/executor_bridge.yaml" --params-file "$root/llm_planner_ros/config/policy.yaml" &
bridge_pid=$!
"$lib/planner_node" --ros-args --params-file "$root/llm_planner_ros/config/planner.yaml" --params-file "$root/llm_planner_ros/config/policy.yaml" &
node_pid=$!
trap 'kill -INT $node_pid $bridge_pid 2>/dev/null; wait $node_pid $bridge_pid 2>/dev/null || true' EXIT
"$lib/send_goal" "$task" --server-timeout 120 "${extra[@]}"
