"""The console's web app: FastAPI, with server-sent events for live updates.

GET /            the page (static/index.html)
GET /events      server-sent events: the view's snapshot after every change
GET /api/state   the snapshot now
GET /api/history past goals from the planner's trace log
POST /api/goals                  {"task", "method", "execute"}: send a goal
POST /api/goals/{goal_id}/cancel cancel a goal (any goal, also one another client sent)
POST /api/approvals/{request_id} {"approve", "reason", "content_digest"}: answer an approval
                                 request; ``content_digest`` is the one the page showed with the
                                 card, and an answer is refused unless the content held now has
                                 that digest (the planner then checks it against its own)

Another web site open in the operator's browser must not drive the robot: a request whose Host is
not one of ``allowed_hosts`` is refused (DNS rebinding), and so is a POST from another origin
(the API takes JSON only, which a cross-site form cannot send, and answers no CORS preflight); the
origin must match in scheme as well as host and port. No other page may frame the console and take
the operator's click on Approve: every response says ``X-Frame-Options: DENY`` and
``Content-Security-Policy: frame-ancestors 'none'``.
"""
from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from typing import Any, Protocol
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse
from starlette.middleware.trustedhost import TrustedHostMiddleware

from llm_planner_ros.console.view import ConsoleView


class StackActions(Protocol):
    """What the page may ask of the stack (the ROS side implements it)."""

    def send_goal(self, task: str, method: str, execute: bool) -> str: ...
    def cancel(self, goal_id: str) -> bool: ...
    def answer(self, approval: dict, approve: bool, reason: str) -> tuple[bool, str]: ...
    def history(self) -> list[dict]: ...


class GoalForm(BaseModel):
    task: str = Field(min_length=1, max_length=500)
    method: str = Field("", max_length=32)
    execute: bool = True


class Answer(BaseModel):
    approve: bool
    reason: str = Field("", max_length=500)
    content_digest: str = Field(min_length=64, max_length=64, pattern="^[0-9a-f]{64}$",
                                description="the digest of the content the operator saw, from the snapshot")


_NOT_FRAMED = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite as None: JSON has no inf or NaN, and the
    browser's JSON.parse refuses the ``Infinity`` that Python writes."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _same_origin(origin, request: Request) -> bool:
    """The page's own origin: the same scheme, host and port as the request's."""
    return origin.scheme == request.url.scheme and origin.netloc == request.headers.get("host")


def create_app(view: ConsoleView, stack: StackActions,
               allowed_hosts: Sequence[str] = ("127.0.0.1", "localhost")) -> FastAPI:
    app = FastAPI(title="llm_planner_ros console", docs_url=None, redoc_url=None)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))

    @app.middleware("http")
    async def same_origin(request: Request, call_next):
        origin = request.headers.get("origin")
        if request.method == "POST" and origin and not _same_origin(urlsplit(origin), request):
            response = JSONResponse({"detail": f"refused: a request from {origin}, not from this page"}, 403)
        else:
            response = await call_next(request)
        response.headers.update(_NOT_FRAMED)
        return response

    page = resources.files("llm_planner_ros.console").joinpath("static/index.html").read_text(encoding="utf-8")

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return page

    @app.get("/api/state")
    def state() -> dict:
        return view.snapshot()

    @app.get("/api/history")
    def history() -> list[dict]:
        return stack.history()

    @app.get("/events")
    async def events() -> EventSourceResponse:
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        def wake() -> None:
            loop.call_soon_threadsafe(changed.set)
        remove = view.listen(wake)

        async def stream() -> AsyncIterator[dict]:
            try:
                while True:
                    changed.clear()
                    yield {"event": "state", "data": json.dumps(_finite(view.snapshot()), allow_nan=False)}
                    try:   # approvals count down: refresh at least every second
                        await asyncio.wait_for(changed.wait(), 1.0)
                    except TimeoutError:
                        pass
            finally:
                remove()
        return EventSourceResponse(stream(), ping=15)

    @app.post("/api/goals")
    def send_goal(form: GoalForm) -> dict:
        try:
            return {"goal_id": stack.send_goal(form.task, form.method, form.execute)}
        except ValueError as exc:   # a task the goal message cannot carry (a NUL character)
            raise HTTPException(422, str(exc)) from None
        except (RuntimeError, TimeoutError) as exc:
            raise HTTPException(503, str(exc)) from None

    @app.post("/api/goals/{goal_id}/cancel")
    def cancel(goal_id: str) -> dict:
        try:
            return {"canceling": stack.cancel(goal_id)}
        except ValueError:
            raise HTTPException(400, f"not a goal id: {goal_id!r}") from None
        except (RuntimeError, TimeoutError) as exc:
            raise HTTPException(503, str(exc)) from None

    @app.post("/api/approvals/{request_id}")
    def answer(request_id: str, body: Answer) -> dict:
        shown = view.approval(request_id)
        if shown is None:
            raise HTTPException(404, f"no approval request {request_id!r} is waiting")
        if body.content_digest != shown["content_digest"]:
            raise HTTPException(409, "the request's content changed since the page showed it; nothing was "
                                     "answered: check the content shown now")
        if body.approve and shown["conflict"]:
            raise HTTPException(409, f"request {request_id!r} was published with two different contents; it "
                                     "cannot be approved here (deny it, or let it expire)")
        try:
            accepted, message = stack.answer(shown, body.approve, body.reason)
        except (RuntimeError, TimeoutError) as exc:
            raise HTTPException(503, str(exc)) from None
        if not accepted:
            raise HTTPException(409, message)
        view.answered(request_id)
        return {"accepted": True, "message": message}

    return app
