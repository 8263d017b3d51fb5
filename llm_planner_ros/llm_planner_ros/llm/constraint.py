"""Constrained decoding: the goal literals a world admits (or a menu of choices), as a grammar
or a JSON schema for the LLM to write under, and the reading of an answer back.

A :class:`LiteralConstraint` holds admitted literals such as ``(on television)`` or
``(obj_inside cup cupboard)``. :meth:`~LiteralConstraint.gbnf` is a llama.cpp grammar (GBNF)
whose language is exactly 1 to ``max_items`` of those literals, separated by ``separator``, on one
line (a leading space allowed, as a model writes after ``Goal:``);
:meth:`~LiteralConstraint.json_schema` is the same choice as a JSON schema (OpenAI structured
outputs, vLLM). :meth:`~LiteralConstraint.parse` reads either form back, keeping only admitted
literals: an answer written without a constraint (a server that refuses it) is validated the
same way.

The grammar stays small for thousands of literals: it is a trie over the words inside the
parentheses (the predicate, then each argument), one rule per branching node, and nodes whose
continuations are the same (``cup``, ``plate`` and ``glass`` may each go into the same three
containers) share one rule. A trie admits only its own paths: no combination of words that is not
a literal (no per-position cross product). Each node's ways on are further factored by character
(a radix tree): llama.cpp tries every grammar stack against the whole vocabulary at each token,
and this keeps one stack per next character instead of one per word (5,000 literals over 150
objects: 11 ms a token on one core rather than 65). A grammar cannot forbid a literal said twice;
:meth:`~LiteralConstraint.parse` drops repeats.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, NamedTuple, Optional, Union

LITERAL = re.compile(r"\(\s*not\s*\([^()]*\)\s*\)|\([^()]*\)")
_NEGATED = re.compile(r"\(\s*not\s*(\([^()]*\))\s*\)")
_WORDS = re.compile(r"[^\s()]+")


def canonical(literal: str) -> Optional[str]:
    """``literal`` as ``(word word ...)`` or ``(not (word word ...))`` with single spaces; None
    where it is no literal (no parentheses around it, other nesting, or no word inside)."""
    text = literal.strip()
    negated = _NEGATED.fullmatch(text)
    if negated:
        atom = canonical(negated.group(1))
        return f"(not {atom})" if atom else None
    if len(text) < 3 or text[0] != "(" or text[-1] != ")" or "(" in text[1:-1] or ")" in text[1:-1]:
        return None
    words = text[1:-1].split()
    return f"({' '.join(words)})" if words else None


class ParseReport(NamedTuple):
    kept: list[str]       # admitted literals, in the answer's order, each once, at most max_items
    rejected: list[str]   # what the answer gave that is not admitted (or came after max_items)


@dataclass(frozen=True, repr=False)
class LiteralConstraint:
    """1 to ``max_items`` literals out of ``literals`` (an ordered collection of strings such as
    ``"(on television)"``; kept as a tuple of their canonical spellings, each once, so that the
    constraint is hashable and can sit in a frozen :class:`~llm_planner_ros.llm.base.SamplingParams`)."""

    literals: tuple[str, ...]
    max_items: int = 6
    separator: str = " "

    def __post_init__(self) -> None:
        if isinstance(self.literals, str):
            raise TypeError("LiteralConstraint takes a collection of literals, not one string")
        canon: dict[str, None] = {}
        for literal in self.literals:
            c = canonical(literal)
            if c is None:
                raise ValueError(f"not a literal of the form (predicate arg ...): {literal!r}")
            canon[c] = None
        if not canon:
            raise ValueError("a literal constraint needs at least one admitted literal")
        if self.max_items < 1:
            raise ValueError(f"max_items must be at least 1, not {self.max_items}")
        if not self.separator or "(" in self.separator or ")" in self.separator:
            raise ValueError(f"the separator must be non-empty and hold no parenthesis: {self.separator!r}")
        object.__setattr__(self, "literals", tuple(canon))

    @classmethod
    def of(cls, literals: Iterable[str], max_items: int = 6, separator: str = " ") -> LiteralConstraint:
        return cls(tuple(literals), max_items, separator)

    def __repr__(self) -> str:   # SamplingParams are logged: not thousands of literals
        return f"LiteralConstraint({len(self.literals)} literals, max_items={self.max_items})"

    def __len__(self) -> int:
        return len(self.literals)

    def __contains__(self, literal: object) -> bool:
        return isinstance(literal, str) and canonical(literal) in self._admitted

    @cached_property
    def _admitted(self) -> frozenset[str]:
        return frozenset(self.literals)

    def gbnf(self) -> str:
        """The grammar (llama.cpp GBNF, root rule ``root``) of 1 to ``max_items`` admitted
        literals separated by ``separator``, ending with a newline; a leading space is allowed."""
        return _gbnf(self.literals, self.max_items, self.separator)

    def json_schema(self) -> dict[str, Any]:
        """The same choice as a JSON object ``{"goal": [literal, ...]}`` (strict: OpenAI's
        structured outputs need ``additionalProperties: false`` and every property required)."""
        return {"type": "object",
                "properties": {"goal": {"type": "array", "items": {"type": "string", "enum": list(self.literals)},
                                        "minItems": 1, "maxItems": self.max_items}},
                "required": ["goal"], "additionalProperties": False}

    def parse(self, text: str) -> list[str]:
        """The admitted literals of an answer in either form (``(a b) (c d)`` or
        ``{"goal": ["(a b)", ...]}``), in order, each once, at most ``max_items``."""
        return self.parse_report(text).kept

    def parse_report(self, text: str) -> ParseReport:
        """:meth:`parse`, and what was rejected: literals not admitted (or malformed, in the JSON
        form), and admitted ones beyond ``max_items``. Repeats are dropped, not rejected."""
        kept: list[str] = []
        rejected: list[str] = []
        for item in _candidates(text):
            c = canonical(item)
            if c is None or c not in self._admitted:
                rejected.append(item)
            elif c not in kept:
                if len(kept) < self.max_items:
                    kept.append(c)
                else:
                    rejected.append(c)
        return ParseReport(kept, rejected)


@dataclass(frozen=True, repr=False)
class ChoiceConstraint:
    """Exactly one of ``choices`` (strings with no line break), on one line: a menu the answer
    must pick from, such as the heuristic search's ``3 [NAVIGATE_TO] <kitchen_counter>``."""

    choices: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.choices, str):
            raise TypeError("ChoiceConstraint takes a collection of choices, not one string")
        choices = tuple(dict.fromkeys(c.strip() for c in self.choices))
        if not choices or any(not c or "\n" in c or "\r" in c for c in choices):
            raise ValueError("a choice constraint needs at least one choice, each non-empty and on one line")
        object.__setattr__(self, "choices", choices)

    def __repr__(self) -> str:
        return f"ChoiceConstraint({len(self.choices)} choices)"

    def __len__(self) -> int:
        return len(self.choices)

    def gbnf(self) -> str:
        """The grammar of one choice, ending with a newline; a leading space is allowed."""
        return _choice_gbnf(self.choices)

    def json_schema(self) -> dict[str, Any]:
        """The same choice as a JSON object ``{"choice": "..."}``."""
        return {"type": "object", "properties": {"choice": {"type": "string", "enum": list(self.choices)}},
                "required": ["choice"], "additionalProperties": False}

    def parse(self, text: str) -> Optional[str]:
        """The choice an answer gives in either form (the line itself, or ``{"choice": ...}``);
        None where it gives none of them."""
        data = _json_object(text)
        if data is not None and isinstance(data.get("choice"), str):
            text = data["choice"]
        answer = text.strip()
        return answer if answer in self.choices else None


Constraint = Union[LiteralConstraint, ChoiceConstraint]   # what SamplingParams.constraint may hold


def _candidates(text: str) -> list[str]:
    """The literals an answer gives: the JSON form's ``goal`` list where the answer is that
    object, otherwise every ``( ... )`` group in the text."""
    data = _json_object(text)
    if data is not None and isinstance(data.get("goal"), list):
        return [item if isinstance(item, str) else json.dumps(item) for item in data["goal"]]
    return LITERAL.findall(text)


def _json_object(text: str) -> Optional[dict[str, Any]]:
    """The JSON object from the answer's first ``{`` to its last ``}``; None where there is none."""
    start, end = text.find("{"), text.rfind("}")
    if not 0 <= start < end:
        return None
    try:
        data = json.loads(text[start:end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def quote(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_END = ""   # the trie's mark of a literal that ends at a node (words are never empty)


class _Rules:
    """GBNF rules built from alternations of texts: equal bodies share one rule."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}   # body -> rule name
        self.order: list[tuple[str, str]] = []

    def named(self, body: str) -> str:
        name = self._names.get(body)
        if name is None:
            name = self._names[body] = f"t{len(self._names)}"
            self.order.append((name, body))
        return name

    def alternation(self, ways: list[tuple[str, Optional[str]]]) -> tuple[str, Optional[str]]:
        """One of ``ways`` (text then rule), as (text, rule): factored by their common prefix,
        then by first character (a radix tree), so that llama.cpp follows one stack per next
        character rather than one per word (each stack is tried against the whole vocabulary)."""
        if len(ways) == 1:
            return ways[0]
        prefix = os.path.commonprefix([text for text, _ in ways])
        if prefix:
            text, rule = self.alternation([(text[len(prefix):], rule) for text, rule in ways])
            return prefix + text, rule
        groups: dict[str, list[tuple[str, Optional[str]]]] = {}
        for text, rule in ways:
            groups.setdefault(text[:1], []).append((text, rule))
        parts = []
        for group in groups.values():
            text, rule = self.alternation(group)
            if not text and rule is None:   # a way that is a prefix of another, and complete: never
                raise AssertionError("one way's text is a prefix of another's")   # (each ends alike)
            parts.append(" ".join(filter(None, (quote(text) if text else "", rule))))
        return "", self.named(" |\n    ".join(parts))

    def lines(self) -> list[str]:
        return [f"{name} ::= {body}" for name, body in reversed(self.order)]


@lru_cache(maxsize=16)
def _gbnf(literals: tuple[str, ...], max_items: int, separator: str) -> str:
    trie: dict[str, dict] = {}
    for literal in literals:
        node = trie
        for word in literal[1:-1].split(" "):
            node = node.setdefault(word, {})
        node[_END] = {}
    rules = _Rules()

    def continuation(node: dict[str, dict], lead: str) -> tuple[str, Optional[str]]:
        """What may follow the words that led to ``node``, as (text, rule): the text, then the
        rule (None: nothing more)."""
        ways: list[tuple[str, Optional[str]]] = []
        for word, child in node.items():
            if word == _END:
                ways.append((")", None))
            else:
                text, rule = continuation(child, " ")
                ways.append((lead + word + text, rule))
        return rules.alternation(ways)

    text, rule = continuation(trie, "")
    lit = quote("(" + text) + (f" {rule}" if rule else "")
    more = ""
    for _ in range(max_items - 1):
        more = f"({quote(separator)} lit{' ' + more if more else ''})?"
    head = [f'root ::= " "? lit {more} "\\n"' if more else 'root ::= " "? lit "\\n"', f"lit ::= {lit}"]
    return "\n".join(head + rules.lines()) + "\n"


@lru_cache(maxsize=64)
def _choice_gbnf(choices: tuple[str, ...]) -> str:
    rules = _Rules()
    text, rule = rules.alternation([(choice + "\n", None) for choice in choices])
    head = 'root ::= " "? ' + " ".join(filter(None, (quote(text) if text else "", rule)))
    return "\n".join([head] + rules.lines()) + "\n"
