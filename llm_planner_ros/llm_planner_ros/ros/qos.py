"""QoS profiles shared by the nodes, and the topics they publish with them (the interface
reference, docs/interfaces.md, is generated from :data:`TOPICS`)."""
from __future__ import annotations

from dataclasses import dataclass

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Latched topics (plan, tracker_state, approval_request): late joiners get the last message.
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)

# Heartbeats: only the newest matters, and a lost one is not worth a resend.
HEARTBEAT = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)

# A reader of a latched topic that must see every message, not only the newest (the recorder,
# the console): the last one on joining, then each one as published, with room for bursts.
LATCHED_EVERY = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                           reliability=ReliabilityPolicy.RELIABLE)

# Events: every message matters while a reader is there; nothing is kept for late joiners.
EVENTS = QoSProfile(depth=10, durability=DurabilityPolicy.VOLATILE, reliability=ReliabilityPolicy.RELIABLE)


@dataclass(frozen=True)
class Topic:
    name: str        # relative to the node's namespace unless it starts with /
    type: str
    publishers: str
    qos: str         # the name of its profile in this module
    what: str


TOPICS = (
    Topic("plan", "llm_planner_msgs/msg/PlanState", "planner", "LATCHED",
          "the current goal: status, the whole plan, its steps, conditions and whether each holds, its end"),
    Topic("goal_queue", "llm_planner_msgs/msg/GoalQueue", "planner", "LATCHED",
          "the active goal, then the queued ones"),
    Topic("plan_events", "llm_planner_msgs/msg/PlanStep", "planner", "EVENTS", "each step as it is decided"),
    Topic("approval_request", "llm_planner_msgs/msg/ApprovalRequest", "planner", "LATCHED",
          "a skill, plan or interpreted goal waiting for an operator (answered with the `approve` service)"),
    Topic("tracker_state", "llm_planner_msgs/msg/TrackerState", "tracker", "LATCHED",
          "subtasks and the progress pointer"),
    Topic("heartbeat/<node>", "builtin_interfaces/msg/Time", "planner, executor_bridge, tracker", "HEARTBEAT",
          "every 0.25 s: the node is alive (docs/safety.md)"),
    Topic("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", "planner, executor_bridge, tracker", "EVENTS",
          "each node's health once a second (docs/stack.md, Health)"),
)
