"""The world an in-process skill server reports, with a version that changes with it.

A ``get_world_state`` reply carries the version (``world_version``), and each skill's result the
change from the version before it to the one after (``facts_added``, ``facts_removed``, the goal
check), so a client that keeps the world it read applies the change instead of reading and
parsing the whole world again (about 10,000 facts in the default world's scene). A change that cannot be
told (objects that came or went, a world not rendered before the skill) is reported as version 0,
and the client reads the world again.
"""
from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Optional

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.srv import GetWorldState
from llm_planner_ros.core.world import WorldState, fact_line, parse_fact


class WorldVersions:
    """Call under the server's lock: ``fill`` for a reply, ``changed`` after a reset, ``skill_ran``
    after each skill."""

    def __init__(self, world: Callable[[], WorldState], goal: Callable[[], Optional[bool]]) -> None:
        self._world, self._goal = world, goal
        # a random start: a client's version from a server before a restart never matches this one's
        self.version = secrets.randbits(62) + 1
        self._seen: Optional[tuple[int, WorldState]] = None            # the last world rendered, its version
        self._lines: Optional[tuple[int, list[str], list[str]]] = None   # the last reply's lines, their version

    def changed(self) -> None:
        """The world changed in a way no skill result reports (a reset)."""
        self.version += 1

    def _current(self) -> WorldState:
        if self._seen is None or self._seen[0] != self.version:
            self._seen = (self.version, self._world())
        return self._seen[1]

    def fill(self, response: GetWorldState.Response, known_version: int = 0) -> GetWorldState.Response:
        """The world's objects, facts, goal check and version, into ``response``; only the goal
        check and the version (``unchanged``) while the world is still at ``known_version``."""
        if known_version and known_version == self.version:
            response.unchanged, response.world_version = True, self.version
            goal = self._goal()
            response.goal_status = -1 if goal is None else int(goal)
            return response
        if self._lines is None or self._lines[0] != self.version:
            self._lines = (self.version, *self._current().to_lines())
        response.objects, response.facts = self._lines[1], self._lines[2]
        goal = self._goal()
        response.goal_status = -1 if goal is None else int(goal)
        response.world_version = self.version
        return response

    def skill_ran(self, result: ExecuteSkill.Result) -> ExecuteSkill.Result:
        """Into ``result``: the change the skill made to the world as last rendered."""
        was = self.version
        before = self._seen[1] if self._seen is not None and self._seen[0] == was else None
        self.version += 1
        if before is None:
            return result   # world_version 0: the client reads the world again
        after = self._current()
        if after.objects != before.objects:
            return result
        if after.facts == before.facts:   # nothing changed (a failed precondition): the same version
            self.version = was
            self._seen = (was, before)
        result.world_version_before, result.world_version = was, self.version
        result.facts_added = [fact_line(a) for a in sorted(after.facts - before.facts)]
        result.facts_removed = [fact_line(a) for a in sorted(before.facts - after.facts)]
        goal = self._goal()
        result.goal_status = -1 if goal is None else int(goal)
        return result


def with_change(world: WorldState, result: ExecuteSkill.Result) -> Optional[WorldState]:
    """``world`` with the change a skill's ``result`` reports; None where the facts it removed are
    not all in ``world`` (the two disagree: read the world again)."""
    removed = {parse_fact(f) for f in result.facts_removed}
    if not removed <= world.facts:
        return None
    return replace(world, facts=(world.facts - removed) | {parse_fact(f) for f in result.facts_added})


class HeldWorld:
    """A client's copy of a server's world, kept by version: read whole once, then brought up to
    date with the changes that skills' results report, and asked for by version
    (``known_version``), so that a world still at that version is not sent or parsed again. A
    world that changed in another way (a reset, a person) is read whole again."""

    def __init__(self, declared: Mapping[str, str]) -> None:
        self.declared = declared
        self._held: Optional[tuple[int, WorldState]] = None   # (version, world): replaced whole, never changed

    def read(self, ask: Callable[[GetWorldState.Request], GetWorldState.Response]) -> tuple[GetWorldState.Response,
                                                                                             Optional[WorldState]]:
        """The server's reply to ``ask`` and its world now (None when the reply failed)."""
        held = self._held
        reply = ask(GetWorldState.Request(known_version=held[0] if held else 0))
        if not reply.success:
            return reply, None
        if held is not None and reply.unchanged and reply.world_version == held[0]:
            return reply, held[1]
        if reply.unchanged and held is not None:   # "unchanged" from another version: ask for it whole
            self._held = None
            return self.read(ask)
        world = WorldState.from_lines(reply.objects, reply.facts, self.declared)
        self._held = (reply.world_version, world) if reply.world_version else None
        return reply, world

    def skill_ran(self, result: ExecuteSkill.Result) -> None:
        """Apply the change ``result`` reports to the world held; forget it where that cannot be
        (no version reported, another version than the one held, or a disagreement)."""
        held = self._held
        if held is None or not result.world_version or result.world_version_before != held[0]:
            self._held = None
            return
        after = with_change(held[1], result)
        self._held = (result.world_version, after) if after is not None else None
