"""Plan metrics of Huang et al. and Raman et al.: LCS against human programs, executability,
plan length. Programs are compared as (action, objects) steps; instance ids are ignored."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Optional

from llm_planner_ros.core.types import Skill
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.vocabulary import SkillParser

Step = tuple[str, tuple[str, ...]]


def as_steps(program: Iterable[str | Skill]) -> list[Step]:
    """Script lines or skills -> comparable steps; unparsable lines are kept as themselves."""
    out: list[Step] = []
    for item in program:
        if isinstance(item, Skill):
            out.append((item.action or item.text, item.objects))
            continue
        skill = _parse(item)
        out.append((skill.action or skill.text, skill.objects) if skill is not None else (item.strip(), ()))
    return out


def lcs_length(a: Sequence, b: Sequence) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def lcs_ratio(generated: Sequence, references: Iterable[Sequence]) -> float:
    """LCS normalised by the longer of the two programs, maximised over the references (Huang)."""
    gen = as_steps(generated)
    best = 0.0
    for ref in references:
        r = as_steps(ref)
        longer = max(len(gen), len(r))
        if longer:
            best = max(best, lcs_length(gen, r) / longer)
    return best


def executable(program: Sequence[str | Skill], graph: dict, goal: Optional[dict] = None) -> tuple[bool, Optional[bool]]:
    """(every step executes from ``graph``, goal conditions met at the end or None without a goal).
    An empty program is not executable (Raman et al.'s 'empty program' error)."""
    if not program:
        return False, (False if goal else None)
    ex = VirtualHomeExecutor(graph=graph, goal=goal)
    for item in program:
        skill = item if isinstance(item, Skill) else _parse(item)
        if skill is None or not ex.execute(skill).success:
            return False, (bool(ex.goal_met()) if goal else None)
    return True, ex.goal_met()


def _parse(line: str) -> Optional[Skill]:
    try:
        return SkillParser.parse_script(line)
    except ValueError:
        return None
