"""The shipped SROS2 policy (security/policy.xml) against the running stack: every endpoint each
node creates is allowed to it, and the dangerous ones (sending skills, resetting the executor,
answering approvals) to no one else. Keystores need the sros2 tools, which are not on PyPI;
docs/security.md says what a user runs."""
from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers.processes import ros_node, wait_until
from helpers.ros_client import RosTestClient

POLICY = Path(__file__).resolve().parents[1] / "security" / "policy.xml"


def grants(ns: str) -> dict[str, dict[str, set[str]]]:
    """node -> permission ("publish", "subscribe", "reply", "request", "execute", "call") ->
    fully qualified names, with the profiles' ns replaced by ``ns``."""
    out: dict[str, dict[str, set[str]]] = {}
    for profile in ET.parse(POLICY).getroot().iter("profile"):
        node = profile.get("node")
        mine = out.setdefault(node, {})
        for group in profile:
            for permission, rule in group.attrib.items():
                if rule != "ALLOW":
                    continue
                for item in group:
                    name = item.text.strip()
                    if name.startswith("~/"):
                        name = f"{ns}/{node}/{name[2:]}"
                    elif not name.startswith("/"):
                        name = f"{ns}/{name}"
                    mine.setdefault(permission, set()).add(name)
    return out


def endpoints(client: RosTestClient, node: str, ns: str) -> dict[str, set[str]]:
    """What ``node`` creates, as the permissions it needs; action parts become the action."""
    graph = client.node
    need: dict[str, set[str]] = {}

    def add(permission: str, name: str) -> None:
        if "/_action/" in name:   # a server replies and publishes; a client requests and subscribes
            action = name.partition("/_action/")[0]
            need.setdefault("execute" if permission in ("reply", "publish") else "call", set()).add(action)
        else:
            need.setdefault(permission, set()).add(name)
    for name, _ in graph.get_publisher_names_and_types_by_node(node, ns):
        add("publish", name)
    for name, _ in graph.get_subscriber_names_and_types_by_node(node, ns):
        add("subscribe", name)
    for name, _ in graph.get_service_names_and_types_by_node(node, ns):
        add("reply", name)
    for name, _ in graph.get_client_names_and_types_by_node(node, ns):
        add("request", name)
    return need


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    ns = f"/sec_{uuid.uuid4().hex[:6]}"
    records = tmp_path_factory.mktemp("records")   # pytest's folder: nothing left in /tmp
    with ros_node("executor_bridge", ns, "serving action 'execute_skill'"), \
            ros_node("tracker_node", ns, "serving 'check_subtask'"), \
            ros_node("planner_node", ns, "planner ready", "tracker_mode:=ros", "approval:=step",
                     "trace_log:=''"), \
            ros_node("console_node", ns, "console at", "port:=0"), \
            ros_node("mcap_recorder", ns, "recording to", f"path:={records}"):
        with RosTestClient(ns) as client:
            yield client, ns


# what each node must be seen to create before its endpoints are compared (discovery is gradual)
EXPECTED = {"planner": {("execute", "plan_task"), ("call", "execute_skill"), ("reply", "approve"),
                        ("request", "check_subtask"), ("subscribe", "heartbeat/tracker")},
            "executor_bridge": {("execute", "execute_skill"), ("reply", "get_world_state"),
                                ("publish", "heartbeat/executor_bridge")},
            "tracker": {("reply", "check_subtask"), ("request", "get_world_state"), ("publish", "tracker_state")},
            "console": {("call", "plan_task"), ("request", "approve"), ("subscribe", "goal_queue")},
            "mcap_recorder": {("call", "plan_task"), ("subscribe", "plan_events"), ("subscribe", "goal_queue")}}


@pytest.mark.parametrize("node", ["planner", "executor_bridge", "tracker", "console", "mcap_recorder"])
def test_the_policy_allows_every_endpoint_a_node_creates(stack, node):
    client, ns = stack
    allowed = grants(ns)[node]

    def discovered() -> bool:
        try:
            seen = endpoints(client, node, ns)
        except Exception:   # NodeNameNonExistentError until discovery has seen the node
            return False
        return all(f"{ns}/{name}" in seen.get(p, ()) for p, name in EXPECTED[node])
    assert wait_until(discovered, 30)
    missing = {p: sorted(names - allowed.get(p, set())) for p, names in endpoints(client, node, ns).items()}
    assert not {p: n for p, n in missing.items() if n}, f"{node} needs what security/policy.xml does not allow"


def test_the_policy_allows_what_send_goal_creates_but_approve(stack):
    """A client (send_goal, PlannerClient) creates what its profile allows, and ``approve`` beside
    it, which the policy withholds: where SROS2 denies it, the client runs without it and says,
    when asked to answer, to answer in the console."""
    from llm_planner_ros.ros.client import PlannerClient

    client, ns = stack
    sender = PlannerClient(ns, node_name="send_goal")
    try:
        def discovered() -> bool:
            try:
                seen = endpoints(client, "send_goal", ns)
            except Exception:   # NodeNameNonExistentError until discovery has seen the node
                return False
            return {f"{ns}/plan_task", f"{ns}/approve"} <= seen.get("call", set()) | seen.get("request", set()) \
                and f"{ns}/approval_request" in seen.get("subscribe", set())
        assert wait_until(discovered, 30)
        allowed = grants(ns)["send_goal"]
        missing = {p: sorted(names - allowed.get(p, set())) for p, names in endpoints(client, "send_goal", ns).items()}
        assert {p: n for p, n in missing.items() if n} == {"request": [f"{ns}/approve"]}, missing
    finally:
        sender.close()


def test_only_the_planner_sends_skills_and_only_the_operator_approves(stack):
    _, ns = stack
    allowed = grants(ns)

    def who(permission: str, name: str) -> set[str]:
        return {node for node, g in allowed.items() if f"{ns}/{name}" in g.get(permission, set())}
    assert who("call", "execute_skill") == {"planner"}
    assert who("request", "reset_scene") == {"planner"}
    assert who("request", "approve") == {"console"}
    assert who("call", "robot/execute_skill") == {"executor_bridge"}
    assert who("call", "plan_task") == {"console", "mcap_recorder", "send_goal"}
    # an approval binds to what was shown (the digest), and the request topic is the planner's alone
    assert who("publish", "approval_request") == {"planner"}


def test_a_client_whose_enclave_denies_approve_runs_and_says_where_to_answer(monkeypatch):
    """SROS2 refuses to create what an enclave denies (sros2 is not on PyPI, so the refusal is
    raised here as rmw raises it); the client starts without approve and names the console."""
    from rclpy.node import Node

    from llm_planner_msgs.msg import ApprovalRequest
    from llm_planner_msgs.srv import Approve
    from llm_planner_ros.ros.client import PlannerClient

    create = Node.create_client

    def enforced(self, srv_type, *args, **kwargs):
        if srv_type is Approve:
            raise RuntimeError("rmw: failed to create client (access denied by the permissions file)")
        return create(self, srv_type, *args, **kwargs)
    monkeypatch.setattr(Node, "create_client", enforced)
    sender = PlannerClient(f"/sec_{uuid.uuid4().hex[:6]}", node_name="send_goal")
    try:
        with pytest.raises(RuntimeError, match="may not call the planner's approve service .*answer in the operator "
                                               "console"):
            sender.answer(ApprovalRequest(request_id="r", goal_id="g", kind="goal"), True)
    finally:
        sender.close()
