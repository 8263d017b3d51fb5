"""Facts that cannot hold together: a world's pairs of predicates (on/off), and the invariants that
Fast Downward's translator proves of a domain (an item is on one place, in one container, held or
handed over: never two of these at once).

An interpreted goal keeps the better-matched of two conditions that exclude each other, and a goal
whose atoms exclude each other ends before it is planned. The invariants come from the domain's
actions (Helmert's invariant synthesis, the translator's own code, run in a child process that
has the translator on its path): a profile that declares no ``exclusive`` pair still gets them.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

Atom = tuple[str, ...]     # (predicate, argument, ...)


@dataclass(frozen=True)
class Exclusive:
    """Atoms of which at most one holds at a time for each value of their shared arguments.
    ``parts``: each predicate with, per argument, the shared parameter it is (-1: free), or None
    for "every argument, in order" (a pair of predicates over the same objects)."""

    parts: tuple[tuple[str, Optional[tuple[int, ...]]], ...]

    @classmethod
    def pair(cls, p: str, q: str) -> Exclusive:
        """``p`` and ``q`` never hold of the same arguments (on/off, inside/ontop)."""
        return cls(((p, None), (q, None)))

    @property
    def is_pair(self) -> bool:
        return all(where is None for _, where in self.parts)

    def key(self, atom: Atom) -> Optional[tuple[str, ...]]:
        """The shared arguments of ``atom`` under this invariant (None: not one of its atoms)."""
        for predicate, where in self.parts:
            if predicate != atom[0]:
                continue
            args = atom[1:]
            if where is None:
                return args
            if len(where) == len(args):
                return tuple(a for _, a in sorted((w, a) for w, a in zip(where, args) if w >= 0))
        return None

    def excludes(self, a: Atom, b: Atom, broken: frozenset[tuple[str, ...]] = frozenset()) -> bool:
        """Whether two different atoms cannot both hold (``broken``: shared arguments for which a
        world already holds two of its atoms, where it proves nothing)."""
        if a == b:
            return False
        key = self.key(a)
        return key is not None and key == self.key(b) and key not in broken

    def broken(self, facts: Iterable[Atom]) -> frozenset[tuple[str, ...]]:
        """The shared arguments for which ``facts`` hold more than one of its atoms."""
        seen: set[tuple[str, ...]] = set()
        twice: set[tuple[str, ...]] = set()
        for atom in facts:
            key = self.key(atom)
            if key is not None:
                (twice if key in seen else seen).add(key)
        return frozenset(twice)

    def __str__(self) -> str:
        return " | ".join(f"({p}{'' if w is None else ' ' + ' '.join('?' if i < 0 else f'?{i}' for i in w)})"
                          for p, w in self.parts)


def excluded(a: Atom, b: Atom, exclusive: Sequence[Exclusive], facts: Iterable[Atom] = ()) -> bool:
    """Whether ``a`` and ``b`` cannot both hold, by any of ``exclusive`` that ``facts`` (a world,
    read only where two atoms are excluded) do not break for them."""
    return any(x.excludes(a, b) and x.excludes(a, b, x.broken(facts)) for x in exclusive)


def pairs(names: Iterable[Sequence[str]]) -> tuple[Exclusive, ...]:
    return tuple(Exclusive.pair(p, q) for p, q in names)


@lru_cache(maxsize=16)
def domain_invariants(domain_text: str, timeout_s: float = 10.0) -> tuple[Exclusive, ...]:
    """The invariants Fast Downward's translator proves of a domain, among predicates that some
    action adds (one no action adds holds where the world says, and its "at most one" would be the
    world's, not the domain's), with two atoms at least (two predicates, or one with a free
    argument). () where the translator cannot read the domain, or runs past ``timeout_s`` or
    1 GiB (a domain is untrusted input: the translator stops its search after 5 s on its own)."""
    from llm_planner_ros.pddl.fast_downward import _translator_env
    try:
        done = subprocess.run([sys.executable, "-S", "-c", _FIND], input=domain_text, capture_output=True,
                              text=True, timeout=timeout_s, env=_translator_env())
    except subprocess.TimeoutExpired:
        return ()
    if done.returncode != 0:
        return ()
    found = json.loads(done.stdout.splitlines()[-1])
    return tuple(Exclusive(tuple((p, tuple(args)) for p, args in parts)) for parts in found)


# the child: the domain on stdin, one JSON line out (the invariants' parts)
_FIND = r"""
import contextlib, io, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from fast_downward.translate import invariant_finder, normalize, options
from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions
domain = sys.stdin.read()
tokens = lisp_parser.parse_nested_list(domain.splitlines(True))
name = tokens[1][1]
problem = lisp_parser.parse_nested_list([f"(define (problem p) (:domain {name}) (:init) (:goal (and)))"])
options.set_options(["domain.pddl", "problem.pddl", "--invariant-generation-max-time", "5"])
with contextlib.redirect_stdout(io.StringIO()):
    task = parsing_functions.parse_task(tokens, problem)
    normalize.normalize(task)
    added = {e.literal.predicate for a in task.actions for e in a.effects if not e.literal.negated}
    found = []
    for inv in invariant_finder.find_invariants(task, None):
        parts = [(p.predicate, list(p.args)) for p in sorted(inv.parts, key=lambda p: p.predicate)]
        if all(p in added for p, _ in parts) and (len(parts) > 1 or -1 in parts[0][1]):
            found.append(parts)
print(json.dumps(found))
"""
