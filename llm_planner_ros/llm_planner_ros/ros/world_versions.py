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
from collections.abc import Callable
from typing import Optional

from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.srv import GetWorldState
from llm_planner_ros.core.world import WorldState, fact_line


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

    def fill(self, response: GetWorldState.Response) -> GetWorldState.Response:
        """The world's objects, facts, goal check and version, into ``response``."""
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
