"""Test double beside the real ``pddl_robot`` (test_profile_dds.py runs that one): the reference
PDDL robot of a profile, whose GetWorldState sends the profile and domain texts read from files
at each request, so that a test makes it send a broken, hostile or oversized profile and then a
valid one. With ``--world-delay S`` each world-state answer takes S seconds (a slow robot); with
``--no-facts`` it reports no facts (a robot that cannot: the hazard check's ``hazard_unknown``).

Run: python -m helpers.profile_robot --profile-file P --domain-file D [--world-delay S] [--no-facts]
     [--ros-args -r __ns:=/ns/robot]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from llm_planner_msgs.srv import GetWorldState
from llm_planner_ros.ros.pddl_robot import PddlRobotNode
from llm_planner_ros.ros.spin import spin_node


class ProfileFileRobot(PddlRobotNode):
    def __init__(self, profile_file: Path, domain_file: Path, world_delay_s: float, no_facts: bool = False) -> None:
        self.profile_file, self.domain_file, self.world_delay_s = profile_file, domain_file, world_delay_s
        self.no_facts = no_facts
        super().__init__()

    def _world_state(self, request: GetWorldState.Request,
                     response: GetWorldState.Response) -> GetWorldState.Response:
        time.sleep(self.world_delay_s)
        response = super()._world_state(request, response)
        if request.include_domain or request.domain_only:
            response.profile = self.profile_file.read_text(encoding="utf-8")
            response.domain = self.domain_file.read_text(encoding="utf-8")
        if self.no_facts:   # a robot that cannot report the facts of its world
            response.facts = []
        return response


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--profile-file", type=Path, required=True)
    parser.add_argument("--domain-file", type=Path, required=True)
    parser.add_argument("--world-delay", type=float, default=0.0)
    parser.add_argument("--no-facts", action="store_true", help="report no facts (a robot that cannot)")
    own, rest = parser.parse_known_args()
    raise SystemExit(spin_node(lambda: ProfileFileRobot(own.profile_file, own.domain_file, own.world_delay,
                                                        own.no_facts),
                               "pddl_robot", [sys.argv[0], *rest]))


if __name__ == "__main__":
    main()
