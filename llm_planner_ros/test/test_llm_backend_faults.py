"""The LLM backends under faults: a cancel in the middle of a long prompt line (the real embedded
llama.cpp), and an OpenAI-compatible server that trickles, stalls, or answers what it should not
(a double of such a server in this process; the real server is in test_llm_backends.py)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from helpers.faulty_openai import FaultyOpenAIServer
from llm_planner_ros.core.errors import CancelToken, LLMError, PlanCanceled, PromptTooLong
from llm_planner_ros.llm.base import SamplingParams
from llm_planner_ros.llm.constraint import ChoiceConstraint

LONG_LINE = "Observed: the robot picks up the red cup and puts it on the kitchen table. " * 90   # ~1,500 tokens
GREEDY = SamplingParams(temperature=0.0, max_tokens=8, stop=("\n",))
CANCEL_AFTER_S = 0.5
PROMPT_BOUND_S = 2.0   # a cancel ends the call within this (a loaded machine: ~0.1 s seen)


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result (or raise its error), failing the test if it takes over ``seconds``."""
    got: dict[str, Any] = {}

    def run() -> None:
        try:
            got["value"] = call()
        except BaseException as exc:
            got["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds}s"
    if "error" in got:
        raise got["error"]
    return got["value"]


def cancelled_after(seconds: float) -> tuple[CancelToken, dict[str, float]]:
    """A token cancelled ``seconds`` from now; the dict gets the time it was."""
    token, at = CancelToken(), {}

    def cancel() -> None:
        at["t"] = time.monotonic()
        token.cancel()
    timer = threading.Timer(seconds, cancel)
    timer.daemon = True
    timer.start()
    return token, at


@pytest.mark.parametrize("call", ["complete", "next_token_logprobs", "continuation_logprobs"])
def test_llama_cpp_cancel_stops_within_a_long_prompt_line(smollm2, call):
    """llama.cpp's abort callback asks the goal's token while it decodes a line (of ~1,500 tokens
    here, many seconds on one thread): the call ends within a second of the cancel, no part of the
    line is kept as a prompt state, and the backend then gives bit for bit what it gave before."""
    prompt = "Task: Turn on light\nStep 1:"
    question = "Is the light on?\nAnswer:"
    reference = (smollm2.complete(prompt, 1, GREEDY), smollm2.next_token_logprobs(question, (" Yes", " No")))
    token, at = cancelled_after(CANCEL_AFTER_S)
    run = {"complete": lambda: smollm2.complete(LONG_LINE, 1, GREEDY, token),
           "next_token_logprobs": lambda: smollm2.next_token_logprobs(LONG_LINE, (" Yes", " No"), token),
           "continuation_logprobs": lambda: smollm2.continuation_logprobs(LONG_LINE, [" yes"], token)}[call]
    with pytest.raises(PlanCanceled):
        within(120, run)
    assert time.monotonic() - at["t"] < PROMPT_BOUND_S
    line = tuple(smollm2.llm.tokenize(LONG_LINE.encode("utf-8"), add_bos=True, special=False))
    assert not any(line[:len(k)] == k for k in smollm2._states._states)   # the line has no newline: no state of it
    smollm2._states.clear()   # evaluated from the start, then from the kept states: the same numbers
    for token in (None, None, CancelToken()):   # a token asked during decodes changes no number
        assert (smollm2.complete(prompt, 1, GREEDY, token),
                smollm2.next_token_logprobs(question, (" Yes", " No"), token)) == reference


def test_llama_cpp_scoring_checks_the_prompt_fits(smollm2):
    """Yes/no scoring of a prompt over the context is the goal's error, said as for a completion
    (not llama_decode's RuntimeError); a continuation over llama.cpp's batch says the batch."""
    with pytest.raises(PromptTooLong, match="does not fit the LLM's context of 2048 tokens"):
        smollm2.next_token_logprobs("word " * 2100, (" Yes", " No"))
    with pytest.raises(PromptTooLong, match="llama.cpp's batch of 512 tokens; shorten the candidates"):
        smollm2.continuation_logprobs("End state:", [" word" * 600])


class MisbehavingServer(FaultyOpenAIServer):
    """The double, with more faults: ``trickle`` (a 200 whose body comes a byte every 0.2 s),
    ``stall`` (no answer until released), ``status:<code>:<message>`` (an error, each time),
    ``once:<code>:<message>`` (an error, then ok). The bodies it got are kept."""

    def __init__(self, slow_s: float = 5.0) -> None:
        super().__init__(slow_s)
        self.bodies: list[dict] = []
        self.release = threading.Event()

    def handle(self, h, body: dict) -> None:
        self.bodies.append(body)
        mode = self.mode
        if mode == "trickle":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "100000")
            h.end_headers()
            for _ in range(1000):
                try:
                    h.wfile.write(b" ")
                    h.wfile.flush()
                except OSError:
                    return   # the client gave up
                time.sleep(0.2)
            return
        if mode == "stall":
            self.release.wait(30)
            return self._send(h, 500, {"error": {"message": "released"}})
        if mode.startswith(("status:", "once:")):
            kind, code, message = mode.split(":", 2)
            if kind == "once":
                self.mode = "ok"
            return self._send(h, int(code), {"error": {"message": message, "type": "invalid_request_error"}})
        return super().handle(h, body)

    def __exit__(self, *exc) -> None:
        self.release.set()
        super().__exit__(*exc)


def backend(server: MisbehavingServer, **kw):
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    return OpenAIBackend(server.url, "m", **{"max_retries": 0, "timeout_s": 5, **kw})


def test_llama_cpp_a_context_llama_cpp_pads_still_refuses_what_does_not_fit():
    """llama.cpp pads a context of 1000 to 1024; a prompt of 1000-1023 tokens passed the check and
    crashed in llama-cpp-python's token buffers, which keep the size asked for."""
    from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend
    from llm_planner_ros.llm.models import smollm2_path

    backend = LlamaCppBackend(smollm2_path(), n_ctx=1000, prompt_cache_mb=0)
    assert backend.llm.n_ctx() == 1024 and backend.n_ctx == 1000
    prompt = " ".join(["apple"] * 1003)
    assert 1000 < len(backend.llm.tokenize(prompt.encode(), add_bos=True)) < 1024
    with pytest.raises(PromptTooLong, match="does not fit the LLM's context of 1000 tokens"):
        backend.complete(prompt, 1, SamplingParams(max_tokens=4))


def test_openai_yes_no_scoring_is_cancelled():
    """Yes/no scoring goes through the cancellable path (it ran on the caller's thread, deaf to a
    cancel, however long the server took)."""
    with MisbehavingServer() as server:
        server.mode = "stall"
        llm = backend(server)
        token, at = cancelled_after(CANCEL_AFTER_S)
        with pytest.raises(PlanCanceled):
            within(10, lambda: llm.next_token_logprobs("Done?", (" Yes", " No"), token))
        assert time.monotonic() - at["t"] < PROMPT_BOUND_S


def test_openai_a_server_trickling_its_answer_times_out():
    """httpx's time-out restarts with every byte read: a server trickling its answer held a request
    (and the pool's thread) for as long as it trickled. Each request has ``timeout_s`` in all, for
    scoring and sampling alike."""
    with MisbehavingServer() as server:
        server.mode = "trickle"
        llm = backend(server, timeout_s=1)
        for call in (lambda: llm.next_token_logprobs("Done?", (" Yes", " No")),
                     lambda: llm.complete("Task:", 1, GREEDY)):
            started = time.monotonic()
            with pytest.raises(LLMError, match="timed out"):
                within(10, call)
            assert time.monotonic() - started < 1 + PROMPT_BOUND_S


def test_openai_cancelled_scoring_leaves_no_queued_requests():
    """A cancel while continuations are scored cancels the requests still queued: the next goal
    waits only for those in flight (it waited for every one of them)."""
    with MisbehavingServer(slow_s=1.0) as server:
        server.mode = "slow"
        llm = backend(server, concurrency=2)
        token, _ = cancelled_after(0.3)
        with pytest.raises(PlanCanceled):
            within(30, lambda: llm.continuation_logprobs("End state:", [f" option {i}" for i in range(12)], token))
        started = time.monotonic()
        within(30, lambda: llm.complete("Task:", 1, GREEDY))   # as slow: after the two in flight, 1 s
        assert time.monotonic() - started < 1.7 + PROMPT_BOUND_S
        time.sleep(1.5)
        assert server.requests == 2 + 1   # the two in flight at the cancel, then the next goal's


def test_openai_scoring_reads_a_400_for_what_it_says():
    """A prompt over the context, when scored, is the goal's error and says so; neither it nor
    another 400 that is not about log-probs makes the backend ask fewer log-probs from then on."""
    with MisbehavingServer() as server:
        llm = backend(server)
        server.mode = "status:400:This model's maximum context length is 2048 tokens"
        with pytest.raises(PromptTooLong, match="does not fit the model's context"):
            llm.next_token_logprobs("long", (" Yes", " No"))
        server.mode = "once:400:Unexpected error while tokenizing the prompt"
        with pytest.raises(LLMError, match="400 - Unexpected error"):
            llm.next_token_logprobs("odd", (" Yes", " No"))
        server.mode = "ok"
        assert llm.next_token_logprobs("short", (" Yes", " No")) == [-0.3, -1.5]
        assert llm._tops_form == 0 and [b["logprobs"] for b in server.bodies] == [1000] * 3


def test_openai_sampling_reads_a_400_for_what_it_says():
    """A 400 that names no field sent refuses nothing (its message said "unexpected": the extra
    fields and the grammar were dropped for good): the next request sends them all again.
    llama-server's wording of a prompt over the context is the goal's error too."""
    with MisbehavingServer() as server:
        llm = backend(server)
        server.mode = "once:400:Unexpected error while tokenizing the prompt"
        constrained = SamplingParams(temperature=0.0, max_tokens=8, constraint=ChoiceConstraint(("a", "b")))
        with pytest.raises(LLMError, match="HTTP 400"):
            llm.complete("x", 1, constrained)
        assert llm.takes_extra is None and llm.takes_constraint is None
        [answer] = llm.complete("x", 1, constrained)
        assert answer.constrained and {"grammar", "top_k", "min_p", "repeat_penalty"} <= set(server.bodies[-1])
        server.mode = "status:400:request (4476 tokens) exceeds the available context size (4096 tokens)"
        with pytest.raises(PromptTooLong, match="does not fit the model's context"):
            llm.complete("long", 1, GREEDY)


def test_openai_a_malformed_answer_to_scoring_is_an_llm_error():
    with MisbehavingServer() as server:
        server.mode = "garbage"   # a 200 that is not JSON
        llm = backend(server)
        with pytest.raises(LLMError, match="malformed response"):
            llm.next_token_logprobs("Done?", (" Yes", " No"))
        with pytest.raises(LLMError, match="malformed response"):
            llm.continuation_logprobs("End state:", [" the cup"])


def test_a_key_in_the_server_url_is_never_written():
    """The backend's name (in errors, logs and results) has the URL's host and path only; a key
    in its query or user part is a secret, redacted whatever its case."""
    from llm_planner_ros.core.secrets import redact
    from llm_planner_ros.llm.openai_backend import OpenAIBackend

    llm = OpenAIBackend("http://bob:pw-Vd8kQ2mZ7xL4@127.0.0.1:1/v1?api-key=Zq9xW2mN7pL4kT8v&v=1", "m",
                        max_retries=0, timeout_s=2)
    assert llm.name == "openai:m@http://127.0.0.1:1/v1"
    for key in ("Zq9xW2mN7pL4kT8v", "pw-Vd8kQ2mZ7xL4"):
        for said in (key, key.upper(), key.lower(), key[:-3].upper()):
            assert redact(f"the server said {said}.") == "the server said ***.", said
    with pytest.raises(LLMError) as error:
        llm.complete("Task:", 1, GREEDY)
    assert "Zq9x" not in str(error.value) and "pw-" not in str(error.value)
