"""A skill bank: the admissible skills a step is translated to (a world builds it)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from llm_planner_ros.core.types import Skill


@dataclass(frozen=True)
class SkillBank:
    skills: tuple[Skill, ...]

    def __len__(self) -> int:
        return len(self.skills)

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.skills]

    @property
    def digest(self) -> str:
        """Content hash, the cache key of the bank's embeddings."""
        h = hashlib.sha256()
        for s in self.skills:
            h.update(s.text.encode())
            h.update(b"\n")
        return h.hexdigest()[:16]

    def objects(self) -> set[str]:
        return {o for s in self.skills for o in s.objects}
