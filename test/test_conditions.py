"""Goal conditions as sentences (groundwork of goal interpretation): rendering from a world,
translation of free text to the nearest condition, contradiction resolution."""
from __future__ import annotations

from llm_planner_ros.executors.virtualhome import VirtualHomeExecutor
from llm_planner_ros.interpretation.conditions import ConditionIndex, render_conditions, resolve, spec_of


def test_rendering_translation_and_contradictions(embedder):
    conditions = render_conditions(VirtualHomeExecutor().world_state())
    texts = {c.text: c for c in conditions}
    assert texts["The television is on."].literals == ("(on television)",)
    assert texts["I watch the television."].actions == ("WATCH",)
    assert "The pillow is on." not in texts                        # a pillow has no switch
    index = ConditionIndex([c for c in conditions if "television" in c.text or "couch" in c.text], embedder)
    matches = index.translate(["the TV is switched on", "I sit down on the sofa", "the TV is switched off",
                               "purple elephants sing"], threshold=0.5)
    assert matches[0].condition.literals == ("(on television)",)
    assert "(sitting character)" in matches[1].condition.literals
    assert matches[3].condition is None                            # nothing near enough
    kept, dropped = resolve(matches)
    on_off = [c for c in kept if c.literals and c.literals[0].startswith(("(on television", "(off television"))]
    assert len(on_off) == 1 and dropped and "contradicts" in dropped[0]
    assert spec_of(kept).literals
