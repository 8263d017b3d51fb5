"""MCAP recorder: the planner's goals (plan topics, action feedback and status, results) in MCAP
files with ROS 2 message encoding (CDR, ``ros2msg`` schemas), so Foxglove opens them.

    ros2 run llm_planner_ros mcap_recorder --ros-args -r __ns:=/robot1 -p path:=run

It records the serialized messages as they arrive (no decode and re-encode). A goal's result is
not on a topic: when ``plan_task/_action/status`` shows a goal ended, the recorder asks the
action's ``get_result`` service and records the answer on ``<action>/result``
(``PlanTask_GetResult_Response``: status and result).

A record is a folder, as rosbag2 writes one: ``run/run_0.mcap``, ``run/run_1.mcap``, ... Each file
is closed, with its summary and footer, right after a goal's result is written, and the next file
takes what follows. So a recorder that is killed leaves every file but the last complete and
readable by any MCAP reader (``mcap.reader.make_reader``, Foxglove): at most the goals that had not
ended are in the open file, which a streaming reader still reads up to the kill. Closing a file
per goal was chosen over chunking with a summary per rotation because a summary is only written
when a file ends, so both need the rotation, and a rotation per result bounds the loss to the goals
still running.

Each subscription logs ``matched <topic>: N publisher(s)`` when a publisher is matched at the DDS
level (not only seen in the ROS graph): from then on nothing that publisher sends is missed.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Optional

from action_msgs.msg import GoalStatus, GoalStatusArray
from pydantic import BaseModel, ConfigDict, Field
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import serialize_message

from llm_planner_msgs.action import PlanTask
from llm_planner_ros.ros.liveness import RESEND_S
from llm_planner_ros.ros.qos import LATCHED_EVERY
from llm_planner_ros.ros.spin import adopt_package_logs, spin_node

# type ids of type_description_interfaces/FieldType; +48 fixed array, +96 bounded and +144
# unbounded sequence
_PRIMITIVES = {2: "int8", 3: "uint8", 4: "int16", 5: "uint16", 6: "int32", 7: "uint32", 8: "int64",
               9: "uint64", 10: "float32", 11: "float64", 12: "float64", 13: "char", 14: "wchar", 15: "bool",
               16: "byte", 17: "string", 18: "wstring", 19: "string", 20: "wstring", 21: "string", 22: "wstring"}


def _type_description(type_name: str) -> dict:
    """The type description rosidl installs with a package (``share/<pkg>/<sub>/<Name>.json``)."""
    pkg, sub, name = type_name.split("/")
    top = name.split("_")[0] if sub == "action" else name
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        path = Path(prefix) / "share" / pkg / sub / f"{top}.json"
        if path.exists():
            return json.loads(path.read_text())["type_description_msg"]
    raise LookupError(f"no type description for {type_name} on AMENT_PREFIX_PATH")


def schema_name(type_name: str) -> str:
    """``type_name`` as a schema name: an action's inner types lose their underscore
    (``PlanTask_FeedbackMessage`` -> ``PlanTaskFeedbackMessage``), because ROS message-definition
    parsers (mcap-ros2-support's among them) refuse one."""
    pkg, sub, name = type_name.split("/")
    return f"{pkg}/{sub}/{name.replace('_', '')}"


def _field_text(field: dict) -> str:
    t = field["type"]
    base_id = t["type_id"] % 48
    if base_id == 1:
        pkg, _, name = schema_name(t["nested_type_name"]).split("/")
        base = f"{pkg}/{name}"
    else:
        base = _PRIMITIVES[base_id]
        if base_id in (21, 22):
            base += f"<={t['string_capacity']}"
    kind = t["type_id"] // 48
    suffix = {0: "", 1: f"[{t['capacity']}]", 2: f"[<={t['capacity']}]", 3: "[]"}[kind]
    return f"{base}{suffix} {field['name']}"


def message_definition(type_name: str) -> str:
    """The ``ros2msg`` schema text of ``type_name`` (e.g. ``llm_planner_msgs/msg/PlanState``): its
    fields, then every type it uses after a ``MSG:`` line, as rosbag2 writes them."""
    described = _type_description(type_name)
    types = {d["type_name"]: d for d in [described["type_description"], *described["referenced_type_descriptions"]]}
    if type_name not in types:
        raise LookupError(f"{type_name} is not described in its package's type description")
    order, todo = [], [type_name]
    while todo:
        name = todo.pop(0)
        if name in order:
            continue
        order.append(name)
        todo += [f["type"]["nested_type_name"] for f in types[name]["fields"] if f["type"]["type_id"] % 48 == 1]
    parts = []
    for name in order:
        fields = "\n".join(_field_text(f) for f in types[name]["fields"]
                           if f["name"] != "structure_needs_at_least_one_member")
        parts.append(fields if name == type_name else f"{'=' * 80}\nMSG: {schema_name(name)}\n{fields}")
    return "\n".join(parts) + "\n"


def type_name_of(msg_type: type) -> str:
    """``llm_planner_msgs/msg/PlanState`` for the class ``PlanState``."""
    module = msg_type.__module__.split(".")   # e.g. llm_planner_msgs.msg._plan_state
    return f"{module[0]}/{module[1]}/{msg_type.__name__}"


def records_home() -> str:
    """Where records go by default: ``$ROS_HOME/llm_planner_ros/records`` (``~/.ros`` by default)."""
    return f"{os.environ.get('ROS_HOME') or '~/.ros'}/llm_planner_ros/records"


def read_record(folder: Path | str):
    """Every message of a record, file by file in the order written, as
    ``(schema, channel, message, decoded)``. Every file but the last is complete; the last may be
    the open file of a killed recorder, read by streaming up to where it was cut."""
    from mcap.exceptions import McapError
    from mcap.reader import NonSeekingReader, make_reader
    from mcap_ros2.decoder import DecoderFactory

    folder = Path(folder)
    files = sorted(folder.glob(f"{folder.name}_*.mcap"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    for path in files:
        with open(path, "rb") as f:
            if path != files[-1]:
                yield from make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages()
                continue
            try:
                yield from NonSeekingReader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages(
                    log_time_order=False)
            except McapError:   # cut where the recorder was killed
                pass


class RecorderParams(BaseModel):
    """ROS parameters of the MCAP recorder."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field("", pattern=r"^$|.*([^p]|[^a]p|[^c]ap|[^m]cap|[^.]mcap)$",
                      description="the record's folder (one MCAP file per ended goal inside it); empty = "
                                  "~/.ros/llm_planner_ros/records/<namespace>.<date-time>")
    action: str = Field("plan_task", min_length=1, description="the planner's action (relative name)")


class McapRecorder(Node):
    def __init__(self) -> None:
        super().__init__("mcap_recorder")
        adopt_package_logs(self)
        from llm_planner_ros.ros.params import declare_and_validate, refuse_unknown_parameters

        self.params = declare_and_validate(self, RecorderParams)
        refuse_unknown_parameters(self)
        ns = ".".join(p for p in self.get_namespace().split("/") if p) or "root"
        self.folder = Path(self.params.path or f"{records_home()}/{ns}.{time.strftime('%Y%m%d-%H%M%S')}").expanduser()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._types: dict[str, type] = {}        # topic -> message type, to register it in every file
        self._schemas: dict[str, int] = {}       # in the open file
        self._channels: dict[str, int] = {}      # in the open file
        self.counts: dict[str, int] = {}
        self.files: list[Path] = []
        self._closed = False
        self._file: Any = None
        self._writer: Any = None
        self._open_next()
        self._fetched: set[bytes] = set()   # goals whose result was asked for (answered or not)
        self._asked: dict[bytes, tuple[Any, float]] = {}   # of those, not answered: goal id, when asked
        self._fetching = threading.Lock()   # status messages may arrive on two threads at once
        group = ReentrantCallbackGroup()
        from llm_planner_msgs.msg import ApprovalRequest, GoalQueue, PlanState, PlanStep, TrackerState

        action = self.params.action
        topics: list[tuple[type, str, QoSProfile | int]] = [
                  (PlanState, "plan", LATCHED_EVERY), (GoalQueue, "goal_queue", LATCHED_EVERY),
                  (PlanStep, "plan_events", 100), (TrackerState, "tracker_state", LATCHED_EVERY),
                  (ApprovalRequest, "approval_request", LATCHED_EVERY),
                  (PlanTask.Impl.FeedbackMessage, f"{action}/_action/feedback", 100)]
        for msg_type, topic, qos in topics:
            self._subscribe(msg_type, topic, qos, group)
        status_topic = self.resolve_topic_name(f"{action}/_action/status")
        self._channel(status_topic, GoalStatusArray)
        self.create_subscription(GoalStatusArray, f"{action}/_action/status",
                                 lambda m: self._on_status(status_topic, m), LATCHED_EVERY, callback_group=group)
        self._result_topic = self.resolve_topic_name(f"{action}/result")
        self._channel(self._result_topic, PlanTask.Impl.GetResultService.Response)
        self._get_result: Client[Any, Any] = self.create_client(PlanTask.Impl.GetResultService,
                                                                f"{action}/_action/get_result",
                                              callback_group=group)
        self.create_timer(1.0, self._ask_again, callback_group=group)
        self.get_logger().info(f"recording to {self.folder}")

    def _open_next(self) -> None:
        """Start the next file of the record (under ``_lock``, or before any callback runs)."""
        from mcap.writer import Writer

        path = self.folder / f"{self.folder.name}_{len(self.files)}.mcap"
        self._file = open(path, "wb")  # noqa: SIM115 (open until the next rotation or destroy_node)
        self._writer = Writer(self._file, use_chunking=False)
        self._writer.start(profile="ros2", library="llm_planner_ros mcap_recorder")
        self._schemas, self._channels = {}, {}
        self.files.append(path)

    def _close_file(self) -> None:
        self._writer.finish()   # summary and footer: the file is complete
        self._file.close()

    def _channel_id(self, topic: str) -> int:
        """The topic's channel in the open file (under ``_lock``)."""
        if topic not in self._channels:
            type_name = type_name_of(self._types[topic])
            if type_name not in self._schemas:
                self._schemas[type_name] = self._writer.register_schema(
                    name=schema_name(type_name), encoding="ros2msg", data=message_definition(type_name).encode())
            self._channels[topic] = self._writer.register_channel(
                topic=topic, message_encoding="cdr", schema_id=self._schemas[type_name])
        return self._channels[topic]

    def _channel(self, topic: str, msg_type: type) -> None:
        with self._lock:
            self._types[topic] = msg_type
            self.counts.setdefault(topic, 0)
            message_definition(type_name_of(msg_type))   # fail at start-up, not at the first message

    def _subscribe(self, msg_type: type, topic: str, qos: QoSProfile | int, group) -> None:
        resolved = self.resolve_topic_name(topic)
        self._channel(resolved, msg_type)
        events = SubscriptionEventCallbacks(matched=lambda info: self._on_matched(resolved, info))
        self.create_subscription(msg_type, topic, lambda data: self._write(resolved, data), qos,
                                 callback_group=group, raw=True, event_callbacks=events)

    def _on_matched(self, topic: str, info) -> None:
        self.get_logger().info(f"matched {topic}: {info.current_count} publisher(s)")

    def _write(self, topic: str, data: bytes, end_of_goal: bool = False) -> None:
        """Add a message; ``end_of_goal`` closes the file after it and opens the next."""
        now = time.time_ns()
        with self._lock:
            if self._closed:
                return
            self.counts[topic] += 1
            self._writer.add_message(self._channel_id(topic), log_time=now, publish_time=now, data=data,
                                     sequence=self.counts[topic])
            if end_of_goal:
                self._close_file()
                self._open_next()

    def _on_status(self, topic: str, msg: GoalStatusArray) -> None:
        self._write(topic, serialize_message(msg))
        ended = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED)
        asks = []
        with self._fetching:
            # the server lists a goal until its result expires: remember only those still listed
            listed = {bytes(s.goal_info.goal_id.uuid) for s in msg.status_list}
            self._fetched &= listed
            self._asked = {k: v for k, v in self._asked.items() if k in listed}
            for status in msg.status_list:
                goal_id = bytes(status.goal_info.goal_id.uuid)
                if status.status in ended and goal_id not in self._fetched:
                    self._fetched.add(goal_id)
                    asks.append(status.goal_info.goal_id)
        for goal_id in asks:
            self._ask(goal_id)

    def _ask(self, goal_id) -> None:
        """Ask for a goal's result; asked again every ``RESEND_S`` until it is answered (a request
        sent before the planner's service has matched this node is lost), written once."""
        key = bytes(goal_id.uuid)
        request = PlanTask.Impl.GetResultService.Request()
        request.goal_id = goal_id
        with self._fetching:
            self._asked[key] = (goal_id, time.monotonic())
        self._get_result.call_async(request).add_done_callback(lambda f: self._on_result(key, f))

    def _ask_again(self) -> None:
        with self._fetching:
            late = [goal_id for goal_id, sent in self._asked.values() if time.monotonic() - sent > RESEND_S]
        for goal_id in late:
            self._ask(goal_id)

    def _on_result(self, key: bytes, future) -> None:
        response = future.result()
        if response is None:
            return
        with self._fetching:
            if self._asked.pop(key, None) is None:   # answered already (or no longer listed)
                return
        self._write(self._result_topic, serialize_message(response), end_of_goal=True)
        self.get_logger().info(f"recorded a result ({response.result.termination_reason})")

    def destroy_node(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._close_file()
        self.get_logger().info(f"wrote {len(self.files)} file(s) in {self.folder}: "
                               + ", ".join(f"{t} {n}" for t, n in sorted(self.counts.items())))
        super().destroy_node()


def main(args: Optional[list[str]] = None) -> None:
    raise SystemExit(spin_node(McapRecorder, "mcap_recorder", args))
