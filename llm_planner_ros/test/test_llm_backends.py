"""The real LLM runtimes: llama.cpp in-process, and the OpenAI client against llama.cpp's
OpenAI-compatible server on loopback."""
from __future__ import annotations

import math
import socket
from dataclasses import replace

import pytest

from llm_planner_ros.core.errors import CancelToken, LLMError, PlanCanceled, PromptTooLong
from llm_planner_ros.llm.base import SamplingParams
from llm_planner_ros.llm.llama_cpp_backend import smollm2_path
from llm_planner_ros.wiring import ServiceConfig, compose

PROMPT = "Task: Watch TV\nStep 1: Walk to living room\nStep 2: Switch on television\nStep 3:"


def test_llama_cpp_samples_one_line_with_token_logprobs(smollm2):
    out = smollm2.complete(PROMPT, 3, SamplingParams(temperature=0.7, seed=5, max_tokens=16))
    assert len(out) == 3
    for c in out:
        assert "\n" not in c.text
        assert c.token_logprobs and all(lp <= 0.0 for lp in c.token_logprobs)
        assert -20 < c.mean_logprob <= 0
    again = smollm2.complete(PROMPT, 3, SamplingParams(temperature=0.7, seed=5, max_tokens=16))
    assert [c.text for c in again] == [c.text for c in out]        # seeded
    assert smollm2.stats.tokens > 0 and smollm2.stats.tokens_per_second > 0


def test_llama_cpp_greedy_logprob_is_the_top_token(smollm2):
    [c] = smollm2.complete(PROMPT, 1, SamplingParams(temperature=0.0, max_tokens=1, stop=("\n",)))
    assert c.token_logprobs is not None and len(c.token_logprobs) == 1
    assert c.token_logprobs[0] > math.log(0.05)      # the argmax token of a peaked distribution


def test_llama_cpp_cancel_and_context_errors(smollm2):
    token = CancelToken()
    token.cancel()
    with pytest.raises(PlanCanceled):
        smollm2.complete(PROMPT, 1, SamplingParams(), token)
    with pytest.raises(PromptTooLong, match="does not fit the LLM's context") as too_long:
        smollm2.complete("word " * 5000, 1, SamplingParams())
    assert too_long.value.reason.value == "invalid_goal"   # the goal must change, not the LLM


def test_llama_cpp_scores_continuations_as_it_samples_them(smollm2):
    """A continuation's log-probs are those of the same tokens sampled greedily; a sentence that
    follows the task scores above its reversal; a cached prompt state serves again."""
    prompt = "Task: Put the candle into the basket.\nEnd state:"
    [c] = smollm2.complete(prompt, 1, SamplingParams(temperature=0.0, max_tokens=10, stop=("\n",)))
    right, turned, greedy = smollm2.continuation_logprobs(
        prompt, [" The candle is in the basket.", " The basket is in the candle.", c.text])
    assert greedy == pytest.approx(c.token_logprobs, abs=1e-4)
    assert sum(right) > sum(turned) + 3
    assert smollm2.continuation_logprobs(prompt, [" The candle is in the basket."])[0] == pytest.approx(right)
    # continuations sharing their first tokens decode only the rest, and score as each does alone
    shared = [" The candle is on the table.", " The candle is in the basket.", " The candle is in the box.",
              " The candle is on the table."]
    before = smollm2.stats.prompt_evaluated
    together = smollm2.continuation_logprobs(prompt, shared)
    decoded = smollm2.stats.prompt_evaluated - before
    assert together == [pytest.approx(smollm2.continuation_logprobs(prompt, [c])[0], abs=1e-6) for c in shared]
    assert together[1] == pytest.approx(right, abs=1e-6)
    assert decoded < sum(map(len, together)) - 6   # "The candle is" (4 tokens or more) once, the repeat not at all
    token = CancelToken()
    token.cancel()
    with pytest.raises(PlanCanceled):
        smollm2.continuation_logprobs(prompt, [" x"], token)


def test_missing_gguf_is_a_clear_error(tmp_path):
    from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend

    with pytest.raises(LLMError, match="GGUF model not found"):
        LlamaCppBackend(tmp_path / "nope.gguf")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_completions_with_logprobs_and_n(openai_server):
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    backend = OpenAIBackend(openai_server, "smollm2")
    params = SamplingParams(temperature=0.7, seed=3, max_tokens=16, logprobs=True)
    out = backend.complete(PROMPT, 3, params)
    assert len(out) == 3 and backend.honours_n is False   # learnt once: llama.cpp's server ignores n > 1
    for c in out:
        assert "\n" not in c.text
        assert c.token_logprobs and all(lp <= 0 for lp in c.token_logprobs)
        assert not math.isnan(c.mean_logprob)
    # the remaining samples go as concurrent requests seeded in order: the same samples again
    assert [c.text for c in backend.complete(PROMPT, 3, params)] == [c.text for c in out]
    # log-probs only when a ranking asks for them
    [plain] = backend.complete(PROMPT, 1, SamplingParams(temperature=0.0, max_tokens=8))
    assert plain.text and math.isnan(plain.mean_logprob)


def test_openai_backend_scores_continuations_as_the_embedded_backend_does(openai_server, smollm2, embedder):
    """Issue 36: the OpenAI-compatible path scores the menu's candidates too. llama.cpp's server
    echoes wrong prompt log-probs, so each token is read from the server's top next tokens: on the
    same GGUF the scores are the embedded backend's, token for token: the same tokens, the same
    log-probs within the two runtimes' rounding (which follows how the server batches what it
    evaluates again: up to 0.13 seen), and for a token below the server's top 1,000 (about
    log-prob -9.5 here) that bound. Method interpret turns a relation the way the embedded
    backend turns it."""
    from llm_planner_ros.interpretation.conditions import Match
    from llm_planner_ros.interpretation.interpreter import GoalInterpreter
    from llm_planner_ros.llm.openai_backend import OpenAIBackend
    from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
    from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

    backend = OpenAIBackend(openai_server, "smollm2")
    prompt = "Task: Put the candle into the basket.\nEnd state:"
    sentences = [" The candle is in the basket.", " The basket is in the candle.", " I am holding the remote_control."]
    served = backend.continuation_logprobs(prompt, sentences)
    embedded = smollm2.continuation_logprobs(prompt, sentences)
    for got, want in zip(served, embedded):
        assert len(got) == len(want)
        assert all(g == pytest.approx(w, abs=0.25) or w < g < -8.0 for g, w in zip(got, want)), (got, want)
    assert sum(served[0]) > sum(served[1])                # the task's way round scores above its reversal
    token = CancelToken()
    token.cancel()
    with pytest.raises(PlanCanceled):
        backend.continuation_logprobs(prompt + " x", [" The cup is on the table."], token)

    interpreter = {b: GoalInterpreter(b, embedder, (), render_conditions, orient=True) for b in (backend, smollm2)}
    index = interpreter[backend].index(VirtualHomeExecutor().world_state())
    [relation] = [c for c in index.conditions if c.literals == ("(obj_ontop chair dvd_player)",)]
    assert index.by_literal("(obj_ontop dvd_player chair)") is not None     # the other way round exists
    match = Match(relation.text, relation, 0.9)
    task = "Task: Put the DVD player on the chair\nEnd state:"
    [turned], why = interpreter[backend].oriented([match], index, task)
    assert turned.condition.literals == ("(obj_ontop dvd_player chair)",) and "turned to" in why[0]
    assert interpreter[smollm2].oriented([match], index, task)[0] == [turned]


def test_openai_backend_asks_a_server_that_caps_log_probs_for_as_many_as_it_gives():
    """A server that gives at most 20 log-probs a token (vLLM's default) refuses 1,000 with HTTP
    400: the backend asks 20 from then on, learnt once, and a token outside them gets the last
    one's log-prob. The chat API setting cannot score, and says so. A double of the server; the
    real one is in the test above."""
    from helpers.faulty_openai import FaultyOpenAIServer
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    class CapsLogProbs(FaultyOpenAIServer):
        def __init__(self) -> None:
            super().__init__()
            self.asked: list[int] = []

        def handle(self, h, body: dict) -> None:
            self.asked.append(int(body.get("logprobs") or 0))
            if self.asked[-1] > 20:
                return self._send(h, 400, {"error": {"message": "logprobs must be at most 20",
                                                     "type": "invalid_request_error"}})
            prompt = str(body["prompt"])
            tokens = [" the", " cup", " x"] if body.get("echo") else [" x"]
            top = {" the": -1.0, " a": -2.0} if prompt.endswith(":") else {" mug": -0.5, " bowl": -3.0}
            logprobs = {"tokens": tokens, "token_logprobs": [-1.0] * len(tokens), "top_logprobs": [top] * len(tokens),
                        "text_offset": [0] * len(tokens)}
            return self._send(h, 200, {"id": "x", "object": "text_completion", "created": 0, "model": "m",
                                       "choices": [{"index": 0, "text": " x", "finish_reason": "length",
                                                    "logprobs": logprobs}]})

    with CapsLogProbs() as server:
        backend = OpenAIBackend(server.url, "m", max_retries=0)
        assert backend.continuation_logprobs("End state:", [" the cup"]) == [(-1.0, -3.0)]
        assert [n for n in server.asked if n > 0] == [1000, 20, 20]   # refused once, then 20
        assert backend.next_token_logprobs("End state:", (" the", " cup")) == [-1.0, float("-inf")]
        sent = len(server.asked)
        with pytest.raises(LLMError, match="chat API"):   # the chat API gives no scores: said, nothing sent
            OpenAIBackend(server.url, "m", api="chat", max_retries=0).continuation_logprobs("End state:", [" the cup"])
        assert len(server.asked) == sent


def test_openai_backend_sends_the_embedded_sampling_settings(openai_server, smollm2):
    """Issue 25: llama.cpp's server applies its own repeat penalty (1.1) unless told; every
    setting the embedded backend samples with is sent, so greedy answers agree with the same GGUF
    (these prompts answer differently under 1.0 and 1.1)."""
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    served = OpenAIBackend(openai_server, "smollm2")
    greedy = SamplingParams(temperature=0.0, max_tokens=24, stop=("\n", "Task:"))
    for task in ("Go to sleep", "Make coffee"):
        prompt = ("Describe the end state of each household task in short sentences.\n\nTask: Turn on light\n"
                  f"End state: The light is on. The light is plugged in.\n\nTask: {task}\nEnd state:")
        [embedded] = smollm2.complete(prompt, 1, greedy)
        [penalised] = smollm2.complete(prompt, 1, replace(greedy, repetition_penalty=1.1))
        assert embedded.text != penalised.text
        assert served.complete(prompt, 1, greedy)[0].text == embedded.text
    assert served.takes_extra is not False


def test_a_server_that_refuses_llama_cpp_fields_gets_the_standard_ones():
    """A server that answers 400 to fields beyond OpenAI's (as OpenAI's own does) is asked again
    without them, once: learnt, as for n. A double of such a server, beside the real server above."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    bodies: list[dict] = []

    class Strict(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            extra = sorted(set(body) & {"repeat_penalty", "repetition_penalty", "top_k", "min_p"})
            status, reply = (400, {"error": {"message": f"Unrecognized request argument supplied: {extra[0]}",
                                             "type": "invalid_request_error"}}) if extra else \
                (200, {"id": "x", "object": "text_completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "text": " The light is on.", "finish_reason": "stop",
                                    "logprobs": None}]})
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Strict)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        backend = OpenAIBackend(f"http://127.0.0.1:{server.server_address[1]}/v1", "m", max_retries=0)
        for _ in range(2):
            assert backend.complete(PROMPT, 1, SamplingParams(temperature=0.0))[0].text == " The light is on."
        assert backend.takes_extra is False
        assert ["repeat_penalty" in b for b in bodies] == [True, False, False]   # refused once, then learnt
    finally:
        server.shutdown()


def test_openai_chat_without_logprobs_falls_back_to_nan(openai_server):
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    backend = OpenAIBackend(openai_server, "smollm2", api="chat")
    assert backend.has_logprobs is False
    [c] = backend.complete(PROMPT, 1, SamplingParams(max_tokens=16))
    assert c.text and "\n" not in c.text
    assert math.isnan(c.mean_logprob) or c.mean_logprob <= 0


def test_openai_unreachable_server_is_an_llm_error():
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=0, timeout_s=2)
    with pytest.raises(LLMError, match="cannot connect"):
        backend.complete(PROMPT, 1, SamplingParams())
    with pytest.raises(LLMError, match="needs a model name"):
        OpenAIBackend("http://127.0.0.1:1/v1", "")


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_goal_interpretation_through_an_openai_compatible_server(openai_server, embedder, api):
    """Method interpret's LLM step over the OpenAI API (completions, or chat with its system
    prompt): what the server writes is translated to the scene's conditions, joined by the task
    text's own (the default; SmolLM2 through chat tends to answer with a heading, which matches none)."""
    from llm_planner_ros.interpretation.interpreter import GoalInterpreter
    from llm_planner_ros.llm.openai_backend import OpenAIBackend
    from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
    from llm_planner_ros.profiles.virtualhome.examples import eai_goal_demos, eai_program_goals
    from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

    interpreter = GoalInterpreter(OpenAIBackend(openai_server, "smollm2", api=api), embedder,
                                  eai_goal_demos(eai_program_goals()), render_conditions, with_task_text=True)
    found = interpreter.interpret("Watch TV", VirtualHomeExecutor().world_state(), hold_out=["Watch TV"])
    assert found.sentences and found.examples and "Watch TV" not in found.examples
    assert found.matches[0].sentence == found.sentences[0]      # the server's own sentence was translated
    assert any(line.startswith("(") and "television" in line for line in found.lines())


def test_the_same_goal_gives_the_same_plan_whatever_ran_before(embedder, demos):
    """Issue 16: a plan depended on the goals before it (reused prompt state). Goal A then B, and
    B alone on a fresh model, give the same steps, samples and scores; the second prompt of a goal
    reuses the evaluated lines of the first."""
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend

    def service():
        return compose(ServiceConfig(), llm=LlamaCppBackend(smollm2_path()), embedder=embedder, demos=demos)

    def run(s, task: str):
        r = s.plan(parse_request(task=task, method="reprompt", execute=True), lambda e: None, CancelToken())
        return [(st.generated_text, st.skill.script(), round(st.score, 6)) for st in r.steps]
    after = service()
    run(after, "Make coffee")
    run(after, "Turn on light")
    b_after = run(after, "Wash hands")
    alone = service()
    assert run(alone, "Wash hands") == b_after and b_after
    stats = alone.parts.llm.stats
    assert 0 < stats.prompt_evaluated < stats.prompt_tokens   # earlier lines came from the cache
    # with the cache off every prompt is evaluated whole, and the plan is the same
    off = compose(ServiceConfig(), llm=LlamaCppBackend(smollm2_path(), prompt_cache_mb=0), embedder=embedder,
                  demos=demos)
    stats = off.parts.llm.stats
    assert run(off, "Wash hands") == b_after and stats.prompt_evaluated == stats.prompt_tokens


def test_decoding_stops_at_the_first_sentence_said_again(smollm2, embedder):
    """A small model's loop (the real interpretation prompt of "Watch TV", its own task held out):
    decoding ends where split_sentences cuts, fewer tokens for the same sentences."""
    from llm_planner_ros.llm.base import said_again, split_sentences

    interpreter = compose(ServiceConfig(), llm=smollm2, embedder=embedder).parts.interpreted().interpreter
    prompt = interpreter.prompt("Watch TV", interpreter.examples("Watch TV", ["Watch TV"]))
    params = SamplingParams(temperature=0.0, max_tokens=48, stop=("\n", "Task:"))
    full = smollm2.complete(prompt, 1, params, None)[0]
    cut = smollm2.complete(prompt, 1, replace(params, stop_at_repeat=True), None)[0]
    assert said_again(full.text), full.text    # the premise: the model says a sentence again
    assert split_sentences(cut.text) == split_sentences(full.text)
    assert len(cut.token_logprobs) < len(full.token_logprobs) and cut.finish_reason == "stop"
