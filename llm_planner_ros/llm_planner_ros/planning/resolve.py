"""The resolve stage: a request is checked once, against the method's registry entry and the
world it plans over, and its defaults are filled in, before anything runs (the executor's reset
is the first side effect)."""
from __future__ import annotations

from collections.abc import Mapping

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.pddl.goals import parse_goal
from llm_planner_ros.planning.methods import DEFAULT_METHOD, Goal, MethodRunner, method_entry
from llm_planner_ros.planning.worlds import WorldMethods


def resolve(request: PlanRequest, world: WorldMethods, runners: Mapping[str, MethodRunner],
            approval: str) -> Goal:
    """The goal in ``world``, or :class:`InvalidGoal` naming the field; ``approval``: the safety
    settings' approval mode."""
    method = request.method or DEFAULT_METHOD
    entry = method_entry(method)
    scenes = world.scenes
    if request.scene_id and scenes and request.scene_id not in scenes:
        raise InvalidGoal(f"scene_id: unknown scene {request.scene_id!r}; available: {', '.join(scenes)}")
    if entry.closed_loop and not request.execute:
        raise InvalidGoal(f"execute: method '{method}' corrects failed steps, so it needs "
                          "execute=true (closed loop)")
    if approval == "plan" and request.execute and not entry.plans_first:
        raise InvalidGoal(f"method: '{method}' executes while it plans, so it cannot wait for approval "
                          "of the whole plan; use approval 'step' or an open-loop method")
    profile = world.profile
    if profile is not None and entry.not_on_profiles:
        raise InvalidGoal(f"method: '{method}' does not plan over the {profile.name} profile's world: "
                          f"{entry.not_on_profiles}")
    o = request.options
    fields = type(o).model_fields
    unread = sorted(k for k, v in o if k not in entry.options and v != fields[k].default)
    if unread:
        raise InvalidGoal(f"options: {', '.join(unread)} {'does' if len(unread) == 1 else 'do'} not apply to method "
                          f"'{method}'; it reads: {', '.join(sorted(entry.options))}")
    on_profiles = entry.profile_goal_fields   # its registry line says which goal fields it reads
    reads = entry.goal_fields | (on_profiles if profile is not None else frozenset())
    ignored = [k for k in ("goal_conditions", "action_goals", "objects") if getattr(request, k) and k not in reads]
    if ignored:
        it, they = ("it", "it") if len(ignored) == 1 else ("them", "they")
        where = " on this world (on a profile's world only)" if on_profiles & set(ignored) else ""
        raise InvalidGoal(f"{', '.join(ignored)}: method '{method}' does not read {it}{where}, so {they} would be "
                          "ignored; method 'pddl' plans to a given goal")
    if profile is not None and (o.plan_subtasks or o.track_subtasks or o.eliminate_objects):
        raise InvalidGoal(f"options: PET (plan_subtasks, track_subtasks, eliminate_objects) does not run on the "
                          f"{profile.name} profile's world yet")
    req = request.model_copy(update={"method": method, "scene_id": request.scene_id or (scenes[0] if scenes else "")})
    goal = Goal(method, req, world, parse_goal(req.goal_conditions, req.action_goals, world.vocabulary))
    runners[method].check(goal)
    return goal
