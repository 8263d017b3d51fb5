"""Constrained decoding: goal literals written under a grammar (GBNF) or a JSON schema, through the
embedded llama.cpp and through the OpenAI client against llama.cpp's real server; the grammar's
language checked in pure Python and by llama.cpp's own grammar engine."""
from __future__ import annotations

import ctypes
import json
import random
import re
import time
from dataclasses import replace

import pytest

from helpers.faulty_openai import FaultyOpenAIServer
from llm_planner_ros.core.errors import LLMError
from llm_planner_ros.llm.base import SamplingParams
from llm_planner_ros.llm.constraint import ChoiceConstraint, LiteralConstraint, canonical

LITERALS = ("(on television)", "(off television)", "(on light)", "(off light)",
            "(holds_rh character remote_control)", "(sitting character sofa)",
            "(obj_inside cup cupboard)", "(obj_inside plate cupboard)", "(obj_inside cups sink)")
SMALL = LiteralConstraint(LITERALS, max_items=3)
PROMPTS = [f"Write the goal of each task as literals.\nTask: Turn on light\nGoal: (on light)\nTask: {task}\nGoal:"
           for task in ("Watch TV", "Sit on the sofa", "Put the cup away")]
GREEDY = SamplingParams(temperature=0.0, max_tokens=24, constraint=SMALL)
ANSWER = re.compile(r" ?\([^()]+\)( \([^()]+\))*")   # what the grammar writes: literals and single spaces


# --- the grammar's language, read back from its text by a small GBNF reader (the subset it uses) ---

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<name>[A-Za-z][A-Za-z0-9-]*)|(?P<op>[()|?]))')


def _unquote(s: str) -> str:
    return re.sub(r"\\(x[0-9A-Fa-f]{2}|.)",
                  lambda m: chr(int(m[1][1:], 16)) if m[1][0] == "x" else {"n": "\n", "r": "\r", "t": "\t"}.get(
                      m[1], m[1]), s[1:-1])


def language(gbnf: str, rule: str = "root") -> set[str]:
    """Every string of a finite grammar (string literals, rule names, groups, ``|``, ``?``)."""
    rules: dict[str, str] = {}
    for line in gbnf.splitlines():
        if "::=" in line and not line.startswith(" "):
            name, _, body = line.partition("::=")
            current = name.strip()
            rules[current] = body
        elif line.strip():
            rules[current] += " " + line
    memo: dict[str, set[str]] = {}

    def of_rule(name: str) -> set[str]:
        if name not in memo:
            tokens = [(m.lastgroup, m[m.lastgroup]) for m in _TOKEN.finditer(rules[name])]
            out, end = alternates(tokens, 0)
            assert end == len(tokens), f"rule {name} not read to its end"
            memo[name] = out
        return memo[name]

    def alternates(tokens, i):
        out, i = sequence(tokens, i)
        while i < len(tokens) and tokens[i] == ("op", "|"):
            more, i = sequence(tokens, i + 1)
            out |= more
        return out, i

    def sequence(tokens, i):
        out = {""}
        while i < len(tokens) and tokens[i] not in (("op", "|"), ("op", ")")):
            kind, text = tokens[i]
            if kind == "str":
                item, i = {_unquote(text)}, i + 1
            elif kind == "name":
                item, i = of_rule(text), i + 1
            else:
                assert text == "(", tokens[i]
                item, i = alternates(tokens, i + 1)
                assert tokens[i] == ("op", ")")
                i += 1
            if i < len(tokens) and tokens[i] == ("op", "?"):
                item, i = item | {""}, i + 1
            out = {a + b for a in out for b in item}
        return out, i

    return of_rule(rule)


def test_the_grammar_admits_exactly_the_literals():
    """The language of the literal rule is the set, and the root's is 1..max_items of them, one
    space apart, a newline after, a leading space allowed: words that prefix others (cup, cups),
    a literal inside another's path, shared continuations and characters GBNF must escape."""
    odd = ("(label jar \"x\\y)", "(on tv)", "(on tv remote)", "(tab\x01 a)")
    c = LiteralConstraint(LITERALS + odd, max_items=2)
    assert language(c.gbnf(), "lit") == set(c.literals)
    lits = set(c.literals)
    pairs = {f"{a} {b}" for a in lits for b in lits}
    assert language(c.gbnf()) == {f"{lead}{body}\n" for lead in ("", " ") for body in lits | pairs}
    # "on" and "off" go on the same ways: one shared rule
    assert SMALL.gbnf().count('"television)"') == 1


def test_random_literal_sets_give_exactly_their_language():
    """A trie admits only its own paths: random sets over few words (so that words, prefixes and
    continuations collide), none of their cross products."""
    rng = random.Random(7)
    words = ["a", "ab", "abc", "b", "ba", "on", "off", "cup", "cups", "x_y", "x-y"]
    for _ in range(60):
        lits = {"(" + " ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) + ")"
                for _ in range(rng.randint(1, 25))}
        c = LiteralConstraint(sorted(lits), max_items=1)
        assert language(c.gbnf(), "lit") == lits
        assert language(c.gbnf()) == {lead + lit + "\n" for lead in ("", " ") for lit in lits}


def test_the_constraint_is_hashable_canonical_and_reads_both_forms():
    c = LiteralConstraint.of(["(on  television )", "(on television)", "( on light)"], max_items=2)
    assert c.literals == ("(on television)", "(on light)") and len(c) == 2 and "(on   light)" in c
    params = SamplingParams(constraint=c)
    assert hash(params) == hash(replace(params)) and params == SamplingParams(constraint=LiteralConstraint(
        ("(on television)", "(on light)"), max_items=2))
    assert "2 literals" in repr(params)                       # not thousands of literals in a log line
    assert c.parse(" (on light) (on light)\n") == ["(on light)"]       # said twice: kept once
    assert c.parse_report("I think (on light) and (fly character) then (on  television) (on tv)") == \
        (["(on light)", "(on television)"], ["(fly character)", "(on tv)"])
    assert c.parse_report('{"goal": ["(on light)", "(on light)", 3, "on television", "(on television)"]}') == \
        (["(on light)", "(on television)"], ["3", "on television"])
    assert c.parse('{"goal": ["(on light)", ') == ["(on light)"]       # cut JSON: its literals still read
    three = LiteralConstraint(("(a)", "(b)", "(c)"), max_items=2)
    assert three.parse_report("(a) (b) (c)") == (["(a)", "(b)"], ["(c)"])  # beyond max_items
    schema = c.json_schema()
    assert schema["properties"]["goal"]["items"]["enum"] == list(c.literals)
    assert schema["properties"]["goal"]["maxItems"] == 2 and schema["additionalProperties"] is False
    assert canonical("(a (b))") is None and canonical("()") is None and canonical("on tv") is None
    for bad in ([], ["on tv"], ["(a)"] * 0):
        with pytest.raises(ValueError):
            LiteralConstraint.of(bad)
    with pytest.raises(TypeError):
        LiteralConstraint("(on tv)")   # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LiteralConstraint(("(a)",), max_items=0)


# --- llama.cpp's own grammar engine ---

def admits(llm, gbnf: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler lets ``text`` (as the model's tokens) through, and then
    the end of generation: token by token, each offered alone to the sampler."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode(), b"root")
    assert sampler, "llama.cpp does not parse the grammar"
    try:
        for token in llm.tokenize(text.encode(), add_bos=False, special=False) + [llm.token_eos()]:
            data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
            candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
            if data[0].logit == float("-inf"):
                return False
            if token != llm.token_eos():
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


def test_llama_cpp_parses_the_grammar_and_admits_exactly_the_literals(smollm2):
    llm, gbnf = smollm2.llm, SMALL.gbnf()
    for lit in LITERALS:
        assert admits(llm, gbnf, lit + "\n") and admits(llm, gbnf, f" {lit} {LITERALS[0]}\n"), lit
    crossed = ["(on sofa)", "(obj_inside cup sink)", "(obj_inside plate sink)", "(obj_inside cups cupboard)",
               "(sitting character remote_control)", "(on television light)", "(on)", "(obj_inside cup)"]
    for text in crossed:
        assert not admits(llm, gbnf, text + "\n"), text
    assert not admits(llm, gbnf, "(on light)")                            # no newline: not finished
    assert not admits(llm, gbnf, "(on light)  (off light)\n")             # one space between
    assert not admits(llm, gbnf, " ".join(LITERALS[:4]) + "\n")           # max_items is 3
    assert smollm2.grammar(SMALL) is smollm2.grammar(SMALL)               # kept, not rebuilt


def test_a_grammar_of_thousands_of_literals_stays_small_and_exact(smollm2):
    """A world's worth: 150 objects under six unary predicates, containers, surfaces, hands."""
    rng = random.Random(3)
    objs = [f"{rng.choice(['cup', 'plate', 'book', 'box', 'lamp'])}_{i}" for i in range(150)]
    lits = [f"({p} {o})" for p in ("on", "off", "open", "closed", "dirty", "clean") for o in objs]
    lits += [f"(obj_inside {o} {c})" for o in objs for c in objs[:12] if rng.random() < 0.7 and o != c]
    lits += [f"(obj_ontop {o} {c})" for o in objs[:100] for c in objs[100:130]]
    lits += [f"(holds_{h} character {o})" for h in ("rh", "lh") for o in objs]
    c = LiteralConstraint(tuple(lits))
    started = time.perf_counter()
    gbnf = c.gbnf()
    assert time.perf_counter() - started < 2.0
    assert len(lits) > 5000 and len(gbnf) < 0.25 * sum(len(lit) for lit in lits)   # no list of literals
    assert language(gbnf, "lit") == set(c.literals)
    inside = {lit for lit in lits if lit.startswith("(obj_inside")}
    outside = next(f"(obj_inside {o} {x})" for o in objs for x in objs[:12] if f"(obj_inside {o} {x})" not in inside)
    assert admits(smollm2.llm, gbnf, f"{lits[0]} {next(iter(inside))}\n")
    assert not admits(smollm2.llm, gbnf, outside + "\n")


ACTIONS = ChoiceConstraint(("[NAVIGATE_TO] <kitchen_counter>", "[NAVIGATE_TO] <kitchen>", "[PICK] <apple>",
                            "[PLACE] <apple> <kitchen_counter>", "[PLACE] <apple> <sofa>", "[SWITCH_ON] <tv>"))


def test_a_choice_grammar_admits_exactly_its_choices(smollm2):
    """The heuristic search's menu: one listed line, nothing else (not a prefix of a longer
    choice, not two), checked by the GBNF reader and by llama.cpp's grammar engine."""
    assert language(ACTIONS.gbnf()) == {p + c + "\n" for c in ACTIONS.choices for p in ("", " ")}
    for choice in ACTIONS.choices:
        assert admits(smollm2.llm, ACTIONS.gbnf(), choice + "\n"), choice
    for text in ("[NAVIGATE_TO] <kitchen_co>\n", "[PLACE] <apple>\n", "[PICK] <apple> [PICK] <apple>\n",
                 "[NAVIGATE_TO] <kitchen>"):
        assert not admits(smollm2.llm, ACTIONS.gbnf(), text), text
    menu = ChoiceConstraint(tuple(f"[WALK] <thing_{i}>" for i in range(300)))
    assert language(menu.gbnf()) == {p + c + "\n" for c in menu.choices for p in ("", " ")}
    assert len(menu.gbnf()) < 0.5 * sum(len(c) for c in menu.choices)     # factored, not listed
    assert ACTIONS.parse(" [PICK] <apple>\n") == "[PICK] <apple>" and ACTIONS.parse("[FLY] <moon>") is None
    assert ACTIONS.parse('{"choice": "[SWITCH_ON] <tv>"}') == "[SWITCH_ON] <tv>"
    with pytest.raises(ValueError, match="on one line"):
        ChoiceConstraint(("[A] <b>\n[C] <d>",))
    assert repr(menu) == "ChoiceConstraint(300 choices)" and hash(menu) == hash(ChoiceConstraint(menu.choices))


def test_embedded_answers_under_a_choice_grammar_are_choices(smollm2):
    params = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=40, seed=5, constraint=ACTIONS)
    prompt = "Task: put the apple on the counter.\nActions:\n" + "\n".join(ACTIONS.choices) + "\nNext action:"
    for sample in smollm2.complete(prompt, 4, params) + smollm2.chat(prompt, 2, params):
        assert sample.constrained and ACTIONS.parse(sample.text), sample.text


# --- the embedded backend ---

def test_embedded_greedy_and_sampled_answers_are_admitted_literals(smollm2):
    for prompt in PROMPTS:
        [greedy] = smollm2.complete(prompt, 1, GREEDY)
        assert greedy.constrained and ANSWER.fullmatch(greedy.text), greedy.text
        kept, rejected = SMALL.parse_report(greedy.text)
        assert kept and not rejected
        assert greedy.token_logprobs and all(lp <= 0 for lp in greedy.token_logprobs)
    sampled = smollm2.complete(PROMPTS[0], 3, replace(GREEDY, temperature=1.0, top_p=1.0, seed=11))
    again = smollm2.complete(PROMPTS[0], 3, replace(GREEDY, temperature=1.0, top_p=1.0, seed=11))
    assert [c.text for c in again] == [c.text for c in sampled]     # seeded
    for c in sampled:                          # each sample from the grammar's first state
        assert c.constrained and ANSWER.fullmatch(c.text) and SMALL.parse(c.text), c.text
    # without "\n" among the stops the grammar ends the answer: a newline, then only the end of text
    [ended] = smollm2.complete(PROMPTS[1], 1, replace(GREEDY, stop=("Task:",), max_tokens=40))
    assert ended.text.endswith("\n") and ended.finish_reason == "stop" and ANSWER.fullmatch(ended.text[:-1])
    [plain] = smollm2.complete(PROMPTS[0], 1, replace(GREEDY, constraint=None))
    assert not plain.constrained


# --- the OpenAI-compatible backend ---

def test_the_server_writes_under_the_grammar_and_agrees_with_the_embedded_model(openai_server, smollm2):
    """The grammar goes in the request's ``grammar`` field (llama_cpp.server's completions and chat
    APIs). Greedy, the same GGUF and the same sampler chain give the same literals, but the embedded
    backend evaluates a prompt line by line (its cached prefixes) and the server in one batch, so
    a near tie may break the other way: most prompts must agree (all do today)."""
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    served = OpenAIBackend(openai_server, "smollm2")
    agree = 0
    for prompt in PROMPTS:
        [answer] = served.complete(prompt, 1, GREEDY)
        assert answer.constrained and ANSWER.fullmatch(answer.text), answer.text
        [embedded] = smollm2.complete(prompt, 1, GREEDY)
        agree += SMALL.parse(answer.text) == SMALL.parse(embedded.text)
    assert agree >= len(PROMPTS) - 1 and served.takes_constraint is True and served.takes_extra is not False
    [chat] = OpenAIBackend(openai_server, "smollm2", api="chat").chat("Which goal? Watch TV.", 1, GREEDY)
    assert chat.constrained and ANSWER.fullmatch(chat.text) and SMALL.parse(chat.text), chat.text


def test_json_schema_through_the_chat_api(openai_server):
    """llama_cpp.server refuses OpenAI's ``{"type": "json_schema"}`` (HTTP 500, a validation
    error: it knows text and json_object), and takes its own ``{"type": "json_object", "schema"}``:
    the second spelling, learnt once."""
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    with pytest.raises(LLMError, match="chat API"):
        OpenAIBackend(openai_server, "smollm2", constraint="json_schema")
    backend = OpenAIBackend(openai_server, "smollm2", api="chat", constraint="json_schema", max_retries=0)
    params = replace(GREEDY, max_tokens=64)
    for prompt in PROMPTS[:2]:
        [answer] = backend.complete(prompt, 1, params)
        goal = json.loads(answer.text)["goal"]
        assert answer.constrained and goal and set(goal) <= set(LITERALS), answer.text
        assert SMALL.parse(answer.text) == list(dict.fromkeys(goal))
    assert backend.takes_constraint is True and backend._form == 1
    [choice] = backend.chat("Task: watch TV. Actions:\n" + "\n".join(ACTIONS.choices), 1,
                            replace(params, constraint=ACTIONS))
    assert json.loads(choice.text)["choice"] in ACTIONS.choices and ACTIONS.parse(choice.text), choice.text


class RefusesConstraints(FaultyOpenAIServer):
    """A server that refuses ``grammar`` and ``response_format`` as OpenAI's does fields it does
    not know, and otherwise says its scripted answer; the bodies it got are kept."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict] = []

    def handle(self, h, body: dict) -> None:
        self.bodies.append(body)
        refused = sorted({"grammar", "response_format"} & set(body))
        if refused:
            return self._send(h, 400, {"error": {"message": f"Unrecognized request argument supplied: {refused[0]}",
                                                 "type": "invalid_request_error"}})
        return super().handle(h, body)


@pytest.mark.parametrize("api,constraint,tries", [("completions", "grammar", 1), ("chat", "json_schema", 2)])
def test_a_server_that_refuses_the_constraint_gets_the_plain_prompt(api, constraint, tries):
    """Refused once per spelling (json_schema has two: OpenAI's, then llama-cpp-python's), then
    the plain prompt, learnt; the answer is validated by parse."""
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    with RefusesConstraints() as server:
        server.mode = "say:(on light) (fly character) (on light)"
        backend = OpenAIBackend(server.url, "m", api=api, constraint=constraint, max_retries=0)
        [first] = backend.complete(PROMPTS[0], 1, GREEDY)
        assert not first.constrained and backend.takes_constraint is False
        assert SMALL.parse_report(first.text) == (["(on light)"], ["(fly character)"])
        [again] = backend.complete(PROMPTS[0], 1, GREEDY)     # learnt: one request
        assert again.text == first.text and not again.constrained
        sent = [bool({"grammar", "response_format"} & set(b)) for b in server.bodies]
        assert sent == [True] * tries + [False, False] and all("repeat_penalty" in b for b in server.bodies)
        assert backend.takes_extra is not False                 # the sampling fields were not the trouble
        # constraint "none" sends nothing, and says so
        none = OpenAIBackend(server.url, "m", api=api, constraint="none", max_retries=0)
        [plain] = none.complete(PROMPTS[0], 1, GREEDY)
        assert not plain.constrained and not {"grammar", "response_format"} & set(server.bodies[-1])
