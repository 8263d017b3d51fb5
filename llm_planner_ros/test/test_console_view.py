"""What the operator console shows (ROS-free): approvals only for the active goal, while they
can still be answered, with the digest recomputed from the content shown; past goals from a
trace log. The page itself runs in a real browser in test_console_browser.py."""
from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request

from llm_planner_ros.console.view import ConsoleView, past_goals
from llm_planner_ros.safety.policy import approval_digest


def request(request_id: str, goal_id: str, scripts: list[str], digest: str = "", timeout_s: float = 60.0) -> dict:
    return {"request_id": request_id, "goal_id": goal_id, "kind": "step", "task": "t", "scripts": scripts,
            "texts": ["x"] * len(scripts), "timeout_s": timeout_s,
            "digest": digest or approval_digest(request_id, goal_id, "step", scripts)}


def test_approvals_are_shown_for_the_active_goal_until_answered_or_expired():
    view = ConsoleView()
    changes = []
    view.listen(lambda: changes.append(view.version))
    view.on_queue([{"goal_id": "g1", "status": "awaiting_approval", "task": "t", "method": ""}])
    view.on_approval_request(request("r0", "g0", ["[WALK] <kitchen> (1)"]))   # a goal that is not active
    view.on_approval_request(request("r2", "g1", ["[OPEN] <fridge> (3)"], timeout_s=0.0))   # expired
    assert view.snapshot()["approvals"] == []
    view.on_approval_request(request("r1", "g1", ["[GRAB] <cup> (12)"]))
    shown = view.snapshot()["approvals"]
    assert [a["request_id"] for a in shown] == ["r1"] and shown[0]["content_matches_digest"]
    assert changes == [1, 2, 3, 4]
    # the operator's answer carries the digest of what is shown, recomputed, not the field copied
    assert view.approval("r1")["digest"] == approval_digest("r1", "g1", "step", ["[GRAB] <cup> (12)"])
    view.answered("r1")
    assert view.snapshot()["approvals"] == [] and view.approval("r1") is None
    # a request published with content that does not match its digest: shown, flagged, and the
    # digest the console answers with is recomputed, not the field copied
    real = approval_digest("r3", "g1", "step", ["[GRAB] <knife> (5)"])
    forged = request("r3", "g1", ["[LOOKAT] <wall> (1)"], digest=real)
    view.on_approval_request(forged)
    [shown] = view.snapshot()["approvals"]
    assert not shown["content_matches_digest"] and view.approval("r3")["digest"] != forged["digest"]
    assert shown["content_digest"] == view.approval("r3")["digest"] and not shown["conflict"]
    # the goal ends: nothing of it is left to approve
    view.on_plan({"goal_id": "g1", "status": "aborted", "steps": []})
    assert view.snapshot()["approvals"] == []


def test_only_the_goals_newest_request_is_shown_while_the_planner_waits_for_it():
    """A request answered elsewhere (the CLI, another console) is not shown once the goal's plan
    status leaves awaiting_approval, a newer request of the goal replaces it, and a console
    started late does not show the latched request of a goal no longer waiting."""
    view = ConsoleView()
    view.on_queue([{"goal_id": "g1", "status": "awaiting_approval", "task": "t", "method": ""}])
    view.on_plan({"goal_id": "g1", "status": "awaiting_approval", "steps": []})
    view.on_approval_request(request("r1", "g1", ["[WALK] <kitchen> (1)"]))
    assert [a["request_id"] for a in view.snapshot()["approvals"]] == ["r1"]
    view.on_plan({"goal_id": "g1", "status": "planning", "steps": []})   # r1 answered on /approve by another
    assert view.snapshot()["approvals"] == []
    view.on_approval_request(request("r2", "g1", ["[GRAB] <knife> (2)"]))
    view.on_plan({"goal_id": "g1", "status": "awaiting_approval", "steps": []})
    assert [a["request_id"] for a in view.snapshot()["approvals"]] == ["r2"]

    late = ConsoleView()   # started after r2 was answered: the latched topics, all at once
    late.on_approval_request(request("r2", "g1", ["[GRAB] <knife> (2)"]))
    late.on_queue([{"goal_id": "g1", "status": "planning", "task": "t", "method": ""}])
    assert late.snapshot()["approvals"] == []
    late.on_plan({"goal_id": "g1", "status": "planning", "steps": []})
    assert late.snapshot()["approvals"] == []


def test_goals_are_kept_newest_first_and_bounded():
    view = ConsoleView(keep_goals=3)
    for i in range(5):
        view.on_plan({"goal_id": f"g{i}", "status": "planning", "steps": []})
    view.on_plan({"goal_id": "g2", "status": "succeeded", "steps": [{"index": 1}]})
    assert [g["goal_id"] for g in view.snapshot()["goals"]] == ["g2", "g4", "g3"]


def test_past_goals_from_a_trace_log_newest_first():
    traces = [{"trace": "a", "request": {"task": "Watch TV", "method": "pddl"}, "started": time.time(),
               "end": {"termination": "goal_reached", "steps": [{"index": 1, "skill": "[WALK] <tv> (1)",
                                                                  "executed": True}]}},
              {"trace": "b", "request": {"task": "Wash hands", "method": None}, "started": time.time(), "end": None,
               "steps": [{"index": 1, "skill": "[WALK] <bathroom> (2)", "executed": True}]}]
    newest, oldest = past_goals(traces, 10)
    assert newest["task"] == "Wash hands" and newest["termination"] == "no end recorded" and len(newest["steps"]) == 1
    assert oldest["termination"] == "goal_reached" and oldest["steps"][0]["skill"] == "[WALK] <tv> (1)"
    assert len(past_goals(traces, 1)) == 1


class StandInStack:
    """The stack behind the web app, recording what the page asked (the real one is driven in
    test_console_browser.py)."""

    def __init__(self) -> None:
        self.sent: list = []
        self.answers: list = []

    def send_goal(self, task, method, execute):
        if "\0" in task:   # as PlannerClient.send_goal refuses it
            raise ValueError("task contains a NUL character (U+0000), which a ROS string cannot carry; remove it")
        self.sent.append(task)
        return "0" * 32

    def cancel(self, goal_id):
        return True

    def answer(self, approval, approve, reason):
        self.answers.append((approval["scripts"], approval["digest"], approve))
        return True, "approved" if approve else "denied"

    def history(self):
        return []


@contextlib.contextmanager
def serving(view: ConsoleView, stack: StandInStack):
    """The console's app on a real uvicorn; yields ``call(path, headers, body) -> status``."""
    import threading

    import uvicorn

    from llm_planner_ros.console.web import create_app

    server = uvicorn.Server(uvicorn.Config(create_app(view, stack), host="127.0.0.1", port=0,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"

    answered: dict = {}

    def call(path: str, headers: dict, body: dict | None = None) -> int:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                answered["headers"] = response.headers
                return response.status
        except urllib.error.HTTPError as exc:
            answered["headers"] = exc.headers
            return exc.code
    call.url = url   # type: ignore[attr-defined]
    call.answered = answered   # type: ignore[attr-defined]
    try:
        yield call
    finally:
        server.should_exit = True
        thread.join(10)


def test_an_approval_answers_only_the_content_the_page_showed():
    """Issue 22's probe: a rogue node republished a waiting request's id with other content, the
    page drew that, the rogue put the original back, and Approve approved what the page never
    showed. Now the page sends the digest of the card it drew, a request seen with two contents
    is flagged and cannot be approved, and a changed content is drawn anew."""
    view, stack = ConsoleView(), StandInStack()
    view.on_queue([{"goal_id": "g1", "status": "awaiting_approval", "task": "t", "method": "pddl"}])
    walk, lookat = ["[WALK] <floor> (208)"], ["[LOOKAT] <television> (248)"]
    view.on_approval_request(request("r1", "g1", walk))
    [first] = view.snapshot()["approvals"]
    assert not first["conflict"] and first["scripts"] == walk
    view.on_approval_request(request("r1", "g1", lookat))   # the rogue, with a matching digest
    [drawn] = view.snapshot()["approvals"]
    assert drawn["conflict"] and drawn["scripts"] == lookat and drawn["content_matches_digest"]
    view.on_approval_request(request("r1", "g1", walk))     # the rogue puts the original back
    [now] = view.snapshot()["approvals"]
    assert now["conflict"] and now["content_digest"] == first["content_digest"] != drawn["content_digest"]
    with serving(view, stack) as call:
        # the page drew LOOKAT: its answer names LOOKAT's content, which is no longer held
        assert call("/api/approvals/r1", {}, {"approve": True, "content_digest": drawn["content_digest"]}) == 409
        # even with the content held now, a request seen with two contents is never approved here
        assert call("/api/approvals/r1", {}, {"approve": True, "content_digest": now["content_digest"]}) == 409
        assert call("/api/approvals/r1", {}, {"approve": True}) == 422   # no digest: refused
        assert stack.answers == []
        assert call("/api/approvals/r1", {}, {"approve": False, "content_digest": now["content_digest"]}) == 200
    assert stack.answers == [(walk, approval_digest("r1", "g1", "step", walk), False)]
    # an untouched request is approved with the digest of the content the page showed
    view.on_approval_request(request("r2", "g1", lookat))
    [card] = view.snapshot()["approvals"]
    with serving(view, stack) as call:
        assert call("/api/approvals/r2", {}, {"approve": True, "content_digest": card["content_digest"]}) == 200
    assert stack.answers[-1] == (lookat, approval_digest("r2", "g1", "step", lookat), True)


def test_the_web_app_refuses_other_hosts_and_cross_origin_posts():
    """Another site in the operator's browser must not send goals or approve: a foreign Host
    (DNS rebinding) and a POST from another origin are refused. The app runs on a real uvicorn;
    the stack behind it is a stand-in (the real one is driven in test_console_browser.py)."""
    stack = StandInStack()
    with serving(ConsoleView(), stack) as call:
        url = call.url
        assert call("/api/state", {}) == 200
        assert call("/api/state", {"Host": "evil.example"}) == 400
        assert call("/api/goals", {"Origin": "http://evil.example"}, {"task": "unlock the door"}) == 403
        # the same host and port under another scheme is another origin
        assert call("/api/goals", {"Origin": url.replace("http://", "https://")}, {"task": "unlock the door"}) == 403
        assert call("/api/goals", {"Origin": url}, {"task": "Watch TV"}) == 200
        assert stack.sent == ["Watch TV"]
        # the API takes JSON only, which a cross-site form cannot send without a preflight
        form = urllib.request.Request(url + "/api/goals", data=b'{"task": "x"}', headers={"Content-Type": "text/plain"})
        try:
            urllib.request.urlopen(form, timeout=10)
            raise AssertionError("a text/plain body was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 422
        assert stack.sent == ["Watch TV"]


def test_a_task_with_a_nul_is_refused_and_infinite_numbers_reach_the_page_as_null():
    """A task ROS cannot carry is answered 422 with why (not a 500); an infinite number in the
    state (a step's score) is null in /api/state and /events, which the browser's JSON.parse reads."""
    def strict(text):
        return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    view, stack = ConsoleView(), StandInStack()
    view.on_plan({"goal_id": "g1", "task": "t", "status": "planning", "steps": [{"score": float("-inf")}],
                  "confidence": float("inf")})
    with serving(view, stack) as call:
        nul = urllib.request.Request(call.url + "/api/goals", data=json.dumps({"task": "Watch\u0000TV"}).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(nul, timeout=10)
            raise AssertionError("a task with a NUL was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 422 and "NUL character" in json.loads(exc.read())["detail"]
        assert stack.sent == []
        with urllib.request.urlopen(call.url + "/api/state", timeout=10) as response:
            [goal] = strict(response.read())["goals"]
        assert goal["steps"][0]["score"] is None and goal["confidence"] is None
        with urllib.request.urlopen(call.url + "/events", timeout=10) as events:
            data = next(line for line in events if line.startswith(b"data:"))
        [goal] = strict(data[5:])["goals"]
        assert goal["steps"][0]["score"] is None and goal["confidence"] is None


def test_no_other_page_may_frame_the_console():
    """A page on another origin must not frame the console and take the operator's click on
    Approve (clickjacking): every answer, the page, the API and a refusal, forbids framing."""
    with serving(ConsoleView(), StandInStack()) as call:
        for path, headers, body, status in (("/", {}, None, 200), ("/api/state", {}, None, 200),
                                            ("/api/goals", {"Origin": "http://evil.example"}, {"task": "x"}, 403)):
            assert call(path, headers, body) == status
            assert call.answered["headers"]["X-Frame-Options"] == "DENY", path
            assert call.answered["headers"]["Content-Security-Policy"] == "frame-ancestors 'none'", path


def test_past_goals_read_from_the_end_of_a_long_trace(tmp_path):
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.trace.log import TraceLog, read_traces

    log = TraceLog(tmp_path / "trace.jsonl")
    for i in range(50):
        log.begin(parse_request(task=f"task {i}"), goal_id=f"goal{i:02d}")
        log.write("llm", prompt="x" * 2000)
        log.end(None, error="stopped")
    everything = list(read_traces(log.path))
    tail = list(read_traces(log.path, tail_bytes=20_000))
    assert len(everything) == 50 and 0 < len(tail) < 50
    assert [g["trace"] for g in tail] == [g["trace"] for g in everything[-len(tail):]]
    assert past_goals(tail, 3)[0]["task"] == "task 49"


def test_a_long_running_console_remembers_a_bounded_number_of_requests():
    from llm_planner_ros.console.view import KEEP_APPROVALS

    view = ConsoleView()
    view.on_queue([{"goal_id": "g", "status": "awaiting_approval", "task": "t", "method": ""}])
    for i in range(3 * KEEP_APPROVALS):
        view.on_approval_request(request(f"r{i}", "g", ["[WALK] <kitchen> (1)"]))
        view.answered(f"r{i}")
    view.on_approval_request(request("last", "g", ["[GRAB] <cup> (12)"]))
    assert len(view._approvals) == KEEP_APPROVALS and len(view._answered) < KEEP_APPROVALS
    assert [a["request_id"] for a in view.snapshot()["approvals"]] == ["last"]


def test_past_goals_keep_every_end_reason_refused_and_cancelled_ones_included(tmp_path):
    """Issue 27: a malformed, refused or cancelled goal is in the past goals with its own reason,
    not as "error"; an active goal waiting for approval is still the active one."""
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.trace.log import TraceLog, read_traces

    log = TraceLog(tmp_path / "trace.jsonl")
    log.unplanned("a1", {"task": "", "method": None}, "invalid_goal", "task is empty")
    log.unplanned("a2", {"task": "Watch TV", "method": None}, "rejected", "goal_policy 'reject': a goal is running")
    log.begin(parse_request(task="Wash hands"), "a3")
    log.end(None, error="the goal was cancelled", termination="canceled")
    shown = past_goals(list(read_traces(tmp_path / "trace.jsonl")), 10)
    assert [(g["goal_id"], g["termination"], g["success"]) for g in shown] == \
        [("a3", "canceled", False), ("a2", "rejected", False), ("a1", "invalid_goal", False)]
    assert shown[1]["detail"].startswith("goal_policy") and all(g["ended"] for g in shown)

    view = ConsoleView(namespace="/robot1")
    view.on_queue([{"goal_id": "g", "status": "awaiting_approval", "task": "t", "method": ""}])
    view.on_approval_request(request("r", "g", ["[WALK] <kitchen> (1)"]))
    state = view.snapshot()
    assert state["namespace"] == "/robot1" and state["active"] == "g" and len(state["approvals"]) == 1
