"""QoS profiles shared by the nodes."""
from __future__ import annotations

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
