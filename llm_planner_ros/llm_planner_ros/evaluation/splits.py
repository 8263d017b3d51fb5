"""The benchmarks' halves: a setting is chosen on one half of a list of tasks and reported on the
other, the same split wherever it is asked for (`bench/interpret.py --tasks-split`,
`bench/behavior.py --split`)."""
from __future__ import annotations

from collections.abc import Sequence

SPLITS: tuple[str, ...] = ("all", "dev", "test")


def half(names: Sequence[str], split: str) -> list[str]:
    """``names`` as given for "all"; sorted, those at even ("dev") or odd ("test") positions."""
    ordered = sorted(names)
    return {"all": list(names), "dev": ordered[0::2], "test": ordered[1::2]}[split]
