"""PET's Track: a progress pointer over the subtasks, advanced by a yes/no judge over the last
d <= 3 observations (d grows by one per step and resets when the pointer moves)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.pet.judges import Answer, SubtaskJudge


@dataclass
class TrackUpdate:
    pointer: int              # index of the active subtask; len(subtasks) = past the end
    advanced: bool
    reopened: bool
    question: str             # the subtask asked about ("" when none was asked)
    answer: Optional[Answer]
    window: int               # d used for this question


@dataclass
class SubtaskTracker:
    judge: SubtaskJudge
    task: str
    subtasks: Sequence[str]
    max_window: int = 3
    reopen_undone: bool = False        # PET never revisits a finished subtask (its stated weakness)
    pointer: int = 0
    window: int = 0
    observations: list[str] = field(default_factory=list)
    history: list[TrackUpdate] = field(default_factory=list)
    cancel: Optional[CancelToken] = None   # the goal's: asked before each question to the judge

    @property
    def exhausted(self) -> bool:
        return self.pointer >= len(self.subtasks)

    def active(self) -> str:
        """The subtask to condition on; the whole task once the list is exhausted (PET's fallback)."""
        return self.task if self.exhausted else self.subtasks[self.pointer]

    def observe(self, observation: str) -> TrackUpdate:
        """Record one executed skill's observation and ask about the active subtask."""
        self.observations.append(observation)
        self.window = min(self.window + 1, self.max_window)
        reopened = self.reopen_undone and self._reopen()
        if reopened or self.exhausted:   # the observation that undid a subtask cannot also finish it
            update = TrackUpdate(self.pointer, False, reopened, "", None, self.window)
        else:
            recent = self.observations[-self.window:]
            subtask = self.subtasks[self.pointer]
            self._check()
            answer = self.judge.ask(self.task, subtask, recent, self.subtasks, self.pointer)
            update = TrackUpdate(self.pointer, answer.done, reopened, subtask, answer, self.window)
            if answer.done:
                self.pointer += 1
                self.window = 0      # d restarts: the next question sees only new observations
                update.pointer = self.pointer
        self.history.append(update)
        return update

    def _check(self) -> None:
        if self.cancel is not None:
            self.cancel.check()

    def _reopen(self) -> bool:
        """Move the pointer back to the earliest finished subtask whose opposite the last
        observation reports (e.g. "fridge is now closed" after "open the fridge")."""
        for i in range(min(self.pointer, len(self.subtasks))):
            opposite = inverse_subtask(self.subtasks[i])
            if not opposite:
                continue
            self._check()
            if self.judge.ask(self.task, opposite, self.observations[-1:], self.subtasks, i).done:
                self.pointer, self.window = i, 0
                return True
        return False


_OPPOSITES = (("switch on", "switch off"), ("turn on", "turn off"), ("plug in", "plug out"),
              ("open", "close"), ("grab", "put down"), ("take", "put down"), ("put on", "take off"),
              ("sit on", "stand up from"), ("lie on", "stand up from"))


def inverse_subtask(subtask: str) -> Optional[str]:
    """The subtask that undoes ``subtask`` ("open the fridge" -> "close the fridge"), if known."""
    text = subtask.strip().lower()
    for a, b in _OPPOSITES:
        for x, y in ((a, b), (b, a)):
            if text.startswith(x + " "):
                return y + text[len(x):]
    return None
