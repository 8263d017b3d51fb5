"""WorldVersions on the real simulator: a reply's version, a skill's change, a reset."""
from llm_planner_msgs.action import ExecuteSkill
from llm_planner_msgs.srv import GetWorldState
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.vocabulary import make_skill
from llm_planner_ros.ros.executor_bridge import result_msg
from llm_planner_ros.ros.world_versions import HeldWorld, WorldVersions


def test_a_skills_change_applied_to_the_reply_gives_the_world_after_it():
    sim = VirtualHomeExecutor("TrimmedTestScene1")
    versions = WorldVersions(sim.world_state, sim.goal_met)
    unrendered = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["kitchen"]))))
    assert unrendered.world_version == 0   # no world rendered before it: the change is not told
    reply = versions.fill(GetWorldState.Response())
    result = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["television"]))))
    assert result.success and result.world_version_before == reply.world_version != result.world_version
    assert any(f.startswith("(next_to character_65 television_") for f in result.facts_added) and result.facts_removed
    facts = (set(reply.facts) - set(result.facts_removed)) | set(result.facts_added)
    after = versions.fill(GetWorldState.Response())
    assert after.world_version == result.world_version and facts == set(after.facts)
    assert WorldState.from_lines(after.objects, after.facts).facts == sim.world_state().facts
    failed = versions.skill_ran(result_msg(sim.execute(make_skill("SIT", ["couch"]))))   # not close to it
    assert not failed.success and failed.world_version == failed.world_version_before == after.world_version
    assert not failed.facts_added and not failed.facts_removed
    sim.reset("TrimmedTestScene1")
    versions.changed()
    assert versions.fill(GetWorldState.Response()).world_version == after.world_version + 1


def test_a_world_held_by_version_is_read_whole_only_after_a_change_no_skill_told():
    """HeldWorld on the simulator's real replies: read whole once; a skill's told change keeps it
    current, and the server answers "unchanged" without objects or facts; a reset, a change told
    against another version, or an untold one makes the next read whole again."""
    sim = VirtualHomeExecutor("TrimmedTestScene1")
    versions = WorldVersions(sim.world_state, sim.goal_met)
    replies: list[GetWorldState.Response] = []

    def ask(request: GetWorldState.Request) -> GetWorldState.Response:
        replies.append(versions.fill(GetWorldState.Response(success=True), request.known_version))
        return replies[-1]

    held = HeldWorld({})
    whole = lambda: [bool(r.facts) for r in replies]   # noqa: E731
    assert held.read(ask)[1].facts == sim.world_state().facts and whole() == [True]
    for action, objects in (("WALK", ["television"]), ("SIT", ["couch"]), ("WALK", ["couch"])):
        held.skill_ran(versions.skill_ran(result_msg(sim.execute(make_skill(action, objects)))))
        reply, world = held.read(ask)
        assert reply.unchanged and world.facts == sim.world_state().facts
    assert whole() == [True, False, False, False]
    sim.reset("TrimmedTestScene1")
    versions.changed()
    assert held.read(ask)[1].facts == sim.world_state().facts and whole()[-1]
    told = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["kitchen"]))))
    told.world_version_before += 7   # told against a version never held
    held.skill_ran(told)
    assert held.read(ask)[1].facts == sim.world_state().facts and whole()[-1]
    untold = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["bathroom"]))))
    untold.world_version = 0   # a robot that does not tell what its skill changed
    held.skill_ran(untold)
    assert held.read(ask)[1].facts == sim.world_state().facts and whole()[-1]
    # a server that says "unchanged" at another version than the one held: asked for its world whole
    held.skill_ran(versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["kitchen"])))))
    asked: list[int] = []

    def confused(request: GetWorldState.Request) -> GetWorldState.Response:
        asked.append(request.known_version)
        reply = ask(request)
        if request.known_version:
            reply.unchanged, reply.world_version, reply.objects, reply.facts = True, reply.world_version + 5, [], []
        return reply

    assert held.read(confused)[1].facts == sim.world_state().facts and asked[-1] == 0 and asked[-2] != 0
    assert HeldWorld({}).read(lambda r: GetWorldState.Response(success=False, message="down")) == \
        (GetWorldState.Response(success=False, message="down"), None)


def test_an_untold_change_reads_as_version_zero():
    assert ExecuteSkill.Result().world_version == 0 and ExecuteSkill.Result().goal_status == -1


def test_the_planner_side_applies_a_told_change_and_reads_again_otherwise():
    """BridgeWorld._apply_change on the simulator's real replies: a change told against the version
    held gives the world after the skill; one told against another version, or one whose removed
    facts the held world lacks, is refused, so the world is read again."""
    import rclpy

    from llm_planner_ros.ros.executor_client import BridgeWorld

    sim = VirtualHomeExecutor("TrimmedTestScene1")
    versions = WorldVersions(sim.world_state, sim.goal_met)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bridge_world_test", context=context)
    try:
        held = BridgeWorld(node)
        held._reply = versions.fill(GetWorldState.Response(success=True))
        told = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["television"]))))
        assert told.facts_added and held._apply_change(told)
        assert held.world_state().facts == sim.world_state().facts
        assert held._reply.world_version == told.world_version and held._reply.facts == []
        same = versions.skill_ran(result_msg(sim.execute(make_skill("SIT", ["couch"]))))   # fails: nothing changed
        assert held._apply_change(same) and held.world_state().facts == sim.world_state().facts

        stale = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["kitchen"]))))
        stale.world_version_before += 7   # told against a version this side never held
        assert not held._apply_change(stale)
        held._reply = versions.fill(GetWorldState.Response(success=True))
        held._parsed = None
        moved = versions.skill_ran(result_msg(sim.execute(make_skill("WALK", ["bathroom"]))))
        moved.facts_removed.append("(next_to character_65 moon_1)")   # a fact the held world lacks
        assert not held._apply_change(moved)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
