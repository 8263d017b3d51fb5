"""MCAP recorder: the planner's goals (plan topics, action feedback and status, results) in MCAP
files with ROS 2 message encoding (CDR, ``ros2msg`` schemas), so Foxglove opens them.

    ros2 run llm_planner_ros mcap_recorder --ros-args -r __ns:=/robot1 -p path:=run

It records the serialized messages as they arrive (no decode and re-encode). A goal's result is
not on a topic: when ``plan_task/_action/status`` shows a goal ended, the recorder asks the
action's ``get_result`` service and records the answer on ``<action>/result``
(``PlanTask_GetResult_Response``: status and result).

A record is a folder, as rosbag2 writes one: ``run/run_0.mcap``, ``run/run_1.mcap``, ... Each file
is closed, with its summary and footer, right after a goal's result is written, and the next file
takes what follows. A recorder started again on the same folder goes on after its highest
number and never overwrites a file. Each message is flushed as it is written. So a recorder that is
killed leaves every goal that ended in complete files, readable by any MCAP reader
(``mcap.reader.make_reader``, Foxglove): only the goals that had not ended are in the file it had
open, which a streaming reader still reads up to the kill. Closing a file
per goal was chosen over chunking with a summary per rotation because a summary is only written
when a file ends, so both need the rotation, and a rotation per result bounds the loss to the goals
still running.

Each subscription logs ``matched <topic>: N publisher(s)`` when a publisher is matched at the DDS
level (not only seen in the ROS graph): from then on nothing that publisher sends is missed.

On SIGINT/SIGTERM (``shutdown_goals``) the recorder waits, up to ``SHUTDOWN_WAIT_S``, until every
goal it saw running has its result written or the planner is gone, so the goals a planner ends
because it is stopped too are in the record.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Optional

from action_msgs.msg import GoalStatus, GoalStatusArray
from pydantic import BaseModel, ConfigDict, Field, field_validator
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

SHUTDOWN_WAIT_S = 5.0   # on shutdown, the longest wait for the results of the goals seen running

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


def record_files(folder: Path) -> list[tuple[int, Path]]:
    """The record's files ``<folder name>_<N>.mcap``, as (N, path), by N."""
    pattern = re.compile(rf"{re.escape(folder.name)}_(\d+)\.mcap")
    found = [(int(m.group(1)), p) for p in folder.glob(f"{folder.name}_*.mcap") if (m := pattern.fullmatch(p.name))]
    return sorted(found)


def read_record(folder: Path | str):
    """Every message of a record, file by file in the order written, as
    ``(schema, channel, message, decoded)``, each file read by streaming. A file a killed recorder
    had open (the last, or any before a restart) is read up to where it was cut, with a warning
    that names it."""
    from mcap.exceptions import McapError
    from mcap.reader import NonSeekingReader
    from mcap_ros2.decoder import DecoderFactory

    for _, path in record_files(Path(folder)):
        with open(path, "rb") as f:
            try:
                yield from NonSeekingReader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages(
                    log_time_order=False)
            except McapError as exc:   # no footer: its recorder was killed
                warnings.warn(f"{path} is cut (its recorder was killed): read up to the cut "
                              f"({type(exc).__name__}{f': {exc}' if str(exc) else ''})", stacklevel=2)


class RecorderParams(BaseModel):
    """ROS parameters of the MCAP recorder."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field("", description="the record's folder (one MCAP file per ended goal inside it); empty = "
                                      "~/.ros/llm_planner_ros/records/<namespace>.<date-time>")
    action: str = Field("plan_task", min_length=1, description="the planner's action (relative name)")

    @field_validator("path")
    @classmethod
    def _a_folder(cls, path: str) -> str:
        if path.endswith(".mcap"):
            raise ValueError(f"{path!r} names a file: give the record's folder (its files are "
                             "<folder>/<folder name>_0.mcap, _1.mcap, ...)")
        return path


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
        # a restarted recorder goes on after the files already there
        self._number = max((n for n, _ in record_files(self.folder)), default=-1) + 1
        self._open_next()
        self._fetched: set[bytes] = set()   # goals whose result was asked for (answered or not)
        self._asked: dict[bytes, tuple[Any, float]] = {}   # of those, not answered: goal id, when asked
        self._running: dict[bytes, Any] = {}   # goals the last status listed as not ended: their ids
        self._planners = 0   # status publishers matched (0: the planner is gone)
        self._fetching = threading.Lock()   # status messages may arrive on two threads at once
        self._settled = threading.Condition(self._fetching)   # notified when a goal or the planner goes
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
                                 lambda m: self._on_status(status_topic, m), LATCHED_EVERY, callback_group=group,
                                 event_callbacks=SubscriptionEventCallbacks(
                                     matched=lambda info: self._on_planners(status_topic, info)))
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

        while True:   # "x": never over a file already there (another recorder's on the same folder)
            path = self.folder / f"{self.folder.name}_{self._number}.mcap"
            self._number += 1
            try:
                self._file = open(path, "xb")  # noqa: SIM115 (open until the next rotation or destroy_node)
                break
            except FileExistsError:
                continue
        self._writer = Writer(self._file, use_chunking=False)
        self._writer.start(profile="ros2", library="llm_planner_ros mcap_recorder")
        self._file.flush()
        self._schemas, self._channels = {}, {}
        self.files.append(path)

    def _close_file(self) -> None:
        self._writer.finish()   # summary and footer: the file is complete
        self._file.flush()
        os.fsync(self._file.fileno())
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
            self._file.flush()   # a killed recorder's file holds everything written before the kill
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
            self._running = {}
            for status in msg.status_list:
                goal_id = bytes(status.goal_info.goal_id.uuid)
                if status.status not in ended:
                    self._running[goal_id] = status.goal_info.goal_id
                elif goal_id not in self._fetched:
                    self._fetched.add(goal_id)
                    self._asked[goal_id] = (status.goal_info.goal_id, time.monotonic())
                    asks.append(status.goal_info.goal_id)
            self._settled.notify_all()
        for goal_id in asks:
            self._ask(goal_id)

    def _on_planners(self, topic: str, info) -> None:
        self._on_matched(topic, info)
        with self._fetching:
            self._planners = info.current_count
            self._settled.notify_all()

    def _pending(self) -> set[bytes]:
        """Goals seen running or ended whose result is not written yet (under ``_fetching``)."""
        return (set(self._running) - self._fetched) | set(self._asked)

    def shutdown_goals(self) -> None:
        """On SIGINT/SIGTERM, while the executor still spins (``spin_node``): wait, up to
        ``SHUTDOWN_WAIT_S``, until every goal seen running has its result written or the planner
        is gone. Their results are asked for now: the planner answers as soon as each ends (a
        request sent only once the status shows the end may come after the planner is gone)."""
        with self._fetching:
            early = {k: g for k, g in self._running.items() if k not in self._fetched}
            self._fetched |= set(early)
            self._asked.update({k: (g, time.monotonic()) for k, g in early.items()})
        for goal_id in early.values():
            self._ask(goal_id)
        with self._fetching:
            if not self._settled.wait_for(lambda: not self._pending() or self._planners == 0, SHUTDOWN_WAIT_S):
                self.get_logger().warning(f"stopping without the results of {len(self._pending())} goal(s), "
                                          f"not written within {SHUTDOWN_WAIT_S:g}s")

    def _ask(self, goal_id) -> None:
        """Ask for a goal's result (the caller has put it in ``_asked``); asked again every
        ``RESEND_S`` until it is answered (a request sent before the planner's service has matched
        this node is lost), written once."""
        key = bytes(goal_id.uuid)
        request = PlanTask.Impl.GetResultService.Request()
        request.goal_id = goal_id
        self._get_result.call_async(request).add_done_callback(lambda f: self._on_result(key, f))

    def _ask_again(self) -> None:
        now = time.monotonic()
        with self._fetching:
            late = [goal_id for goal_id, sent in self._asked.values() if now - sent > RESEND_S]
            self._asked.update({bytes(goal_id.uuid): (goal_id, now) for goal_id in late})
        for goal_id in late:
            self._ask(goal_id)

    def _on_result(self, key: bytes, future) -> None:
        response = future.result()
        if response is None:
            return
        with self._fetching:
            if self._asked.pop(key, None) is None:   # answered already (or no longer listed)
                return
            # written under the lock: shutdown_goals counts the goal until its result is in the file
            self._write(self._result_topic, serialize_message(response), end_of_goal=True)
            self._settled.notify_all()
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
