"""OpenAI-compatible backend (OpenAI, vLLM, llama.cpp server, Ollama, ...) via the ``openai`` client.

Uses the completions API with ``logprobs`` where the server has it; the chat API otherwise,
asking for log-probs and reporting none (NaN mean log-prob) where the server gives none. A
continuation is scored a token at a time from the server's top next tokens
(:meth:`OpenAIBackend.continuation_logprobs`).
Retries with back-off are the client's own (``max_retries``); each try has ``timeout_s`` for the
whole answer (httpx's own time-out restarts with every chunk read). The key comes from an
environment variable and is never logged, nor is anything in the URL beyond its host and path.

Under ``params.constraint`` the request carries the constraint as the ``constraint`` setting
says: ``grammar``, its GBNF in the body's ``grammar`` field (llama.cpp's servers, llama-cpp-python's
``llama_cpp.server`` on both the completions and the chat API); ``json_schema``, its JSON schema as
the chat API's ``response_format`` (OpenAI's structured outputs, vLLM, llama.cpp's ``llama-server``;
then llama-cpp-python's own spelling, ``{"type": "json_object", "schema": ...}``, where a server
refuses the first); ``none``, nothing. A server that refuses the field (HTTP 400/422 naming it) is
sent the plain prompt from then on, learnt once as for ``n``; each :class:`Completion` says whether
it was ``constrained``. A server that ignores a field it does not know, without refusing it,
cannot be told apart: the caller reads every answer with the constraint's ``parse`` either way.
"""
from __future__ import annotations

import functools
import importlib
import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal, Optional, TypeVar
from urllib.parse import parse_qsl, urlsplit

from llm_planner_ros.core.errors import CancelToken, LLMError, PromptTooLong
from llm_planner_ros.core.secrets import redact, register_secret
from llm_planner_ros.llm.base import Completion, SamplingParams, UsageStats, cut_at_stop
from llm_planner_ros.llm.constraint import Constraint

log = logging.getLogger(__name__)
T = TypeVar("T")

TOPS = (1000, 20, 5)   # the next tokens' log-probs asked for: llama.cpp's server gives 1000, vLLM 20, OpenAI 5

CHAT_SYSTEM = ("Continue the user's text exactly where it stops. Write only the continuation: "
               "one short line, no explanation.")


class OpenAIBackend:
    def __init__(self, base_url: str, model: str, *, api: Literal["completions", "chat"] = "completions",
                 api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 60.0, max_retries: int = 2,
                 concurrency: int = 4, constraint: Literal["grammar", "json_schema", "none"] = "grammar") -> None:
        """``concurrency`` bounds the requests in flight when the server ignores ``n``;
        ``constraint``: how a constraint (:mod:`llm_planner_ros.llm.constraint`) is sent (the module's
        docstring)."""
        import openai

        if not model:
            raise LLMError("the OpenAI-compatible backend needs a model name (openai_model)")
        if constraint not in ("grammar", "json_schema", "none"):
            raise LLMError(f"unknown constraint setting {constraint!r}: grammar, json_schema or none")
        if constraint == "json_schema" and api != "chat":
            raise LLMError("a JSON schema constraint goes through the chat API (response_format): "
                           "set openai_api: chat, or use the grammar constraint")
        self._openai = openai
        key = os.environ.get(api_key_env) or "not-needed"
        register_secret(key)   # a server's error may echo it
        url = urlsplit(base_url or "")
        for secret in [url.password or url.username or ""] + [v for _, v in parse_qsl(url.query)]:
            register_secret(secret)   # a key in the URL (?api-key=..., user:key@): never written
        http = openai.DefaultHttpxClient(event_hooks={"request": [_sent], "response": [_deadline(timeout_s)]})
        self.client = openai.OpenAI(base_url=base_url or None, api_key=key, timeout=timeout_s,
                                    max_retries=max_retries, http_client=http)
        self.model = model
        self.api = api
        where = url._replace(netloc=url.netloc.rpartition("@")[2], query="", fragment="").geturl()
        self.name = f"openai:{model}@{where or 'api.openai.com'}"
        self.has_logprobs = api == "completions"
        self.stats = UsageStats()
        self.concurrency = concurrency
        self.honours_n: Optional[bool] = None   # learnt from the first request for n > 1
        self.takes_extra: Optional[bool] = None  # repeat_penalty, top_k, min_p: False once refused
        self.constraint = constraint
        self.takes_constraint: Optional[bool] = None   # True once sent and taken, False once refused
        self._form = 0   # the spelling of the constraint now sent (json_schema has two)
        self._pool: Optional[ThreadPoolExecutor] = None
        self._tops_form = 0   # TOPS[this]: the count the server gives
        # kept: a text's tokens, and the top next tokens (up to 1,000 each) of the prompts asked lately
        self._tokens = functools.lru_cache(maxsize=4096)(self._ask_tokens)
        self._next_top = functools.lru_cache(maxsize=256)(self._ask_next_top)

    def complete(self, prompt: str, n: int, params: SamplingParams,
                 cancel: Optional[CancelToken] = None) -> list[Completion]:
        return self._sample(prompt, None, n, params, cancel)

    def chat(self, user: str, n: int, params: SamplingParams,
             cancel: Optional[CancelToken] = None) -> list[Completion]:
        """``n`` answers to one user message, through the chat API."""
        return self._sample(user, [{"role": "user", "content": user}], n, params, cancel)

    def next_token_logprobs(self, prompt: str, candidates: tuple[str, ...],
                            cancel: Optional[CancelToken] = None) -> list[float]:
        """log p(each candidate as the next token), from the completions API's top log-probs;
        a candidate outside them gets -inf. Needs a server that returns log-probs."""
        if cancel is not None:
            cancel.check()
        top = self._answer(self._submit(self._next_top, prompt), cancel)
        return [float(top.get(c, float("-inf"))) for c in candidates]

    def continuation_logprobs(self, prompt: str, continuations: Sequence[str],
                              cancel: Optional[CancelToken] = None) -> list[tuple[float, ...]]:
        """Each continuation's token log-probs after ``prompt``, a token at a time from the
        completions API's top next tokens (:meth:`_ask_next_top`). A prompt's own log-probs (``echo``) are not used:
        llama-cpp-python's server answers them with wrong values. The continuation's tokens come
        from the server's echo of it alone, split as the embedded backend splits it. A token
        outside them gets the last one's log-prob, an upper bound. A prefix shared by
        continuations is asked once; the prefixes of one length go as concurrent requests."""
        self._needs_logprobs()
        if cancel is not None:
            cancel.check()
        futures = [self._submit(self._tokens, c) for c in continuations]
        try:
            tokens = [self._answer(f, cancel) for f in futures]
            steps: list[list[float]] = [[] for _ in continuations]
            for k in range(max(map(len, tokens), default=0)):   # a token's place at a time, each prefix asked once
                if cancel is not None:
                    cancel.check()
                prefixes = list(dict.fromkeys(prompt + "".join(t[:k]) for t in tokens if k < len(t)))
                asked = [self._submit(self._next_top, p) for p in prefixes]
                futures += asked
                tops = dict(zip(prefixes, (self._answer(f, cancel) for f in asked)))
                for t, out in zip(tokens, steps):
                    if k < len(t):
                        top = tops[prompt + "".join(t[:k])]
                        out.append(top.get(t[k], min(top.values())))
        finally:
            for future in futures:   # those still queued: a stopped goal leaves none to the next
                future.cancel()
        return [tuple(s) for s in steps]

    def _ask_tokens(self, text: str) -> list[str]:
        """``text``'s tokens as the server splits it, from its echo of ``text`` alone."""
        try:
            resp = self.client.completions.create(model=self.model, prompt=text, max_tokens=1, temperature=0.0,
                                                  echo=True, logprobs=0)
            echoed = resp.choices[0].logprobs
            tokens = list(echoed.tokens or []) if echoed is not None else []
        except self._openai.APIError as exc:
            raise LLMError(f"{self.name}: {_short(str(exc))}") from None
        except (AttributeError, IndexError, TypeError, ValueError) as exc:   # ValueError: not JSON
            raise LLMError(f"{self.name}: malformed response, no tokens in the echo ({_short(str(exc))})") from None
        for n in range(len(tokens), 0, -1):   # the echo, then what was generated
            if "".join(tokens[:n]) == text:
                return tokens[:n]
        raise LLMError(f"{self.name}: the server's echo does not give {text!r} back token by token, which "
                       "scoring a continuation needs")

    def _needs_logprobs(self) -> None:
        if self.api != "completions":
            raise LLMError(f"{self.name}: scoring needs token log-probs, which the chat API setting does not "
                           "return; use openai_api: completions")

    def _ask_next_top(self, prompt: str) -> dict[str, float]:
        """The server's top next tokens after ``prompt`` and their log-probs: as many as it gives
        of TOPS (a server that refuses a count is asked the next one from then on, learnt once)."""
        self._needs_logprobs()
        try:
            while True:
                count = TOPS[self._tops_form]
                try:
                    resp = self.client.completions.create(model=self.model, prompt=prompt, max_tokens=1,
                                                          temperature=0.0, logprobs=count)
                    break
                except self._openai.BadRequestError as exc:   # HTTP 400: more log-probs than the server gives?
                    if _CONTEXT.search(str(exc.message)):
                        raise PromptTooLong(f"{self.name}: the prompt does not fit the model's context: "
                                            f"{_short(exc.message)}") from None
                    if self._tops_form + 1 == len(TOPS) or not _LOGPROBS.search(str(exc.message)):
                        raise
                    self._tops_form = max(self._tops_form, TOPS.index(count) + 1)
                    log.info("%s refuses %d log-probs a token: asking %d", self.name, count, TOPS[self._tops_form])
            logprobs = resp.choices[0].logprobs
            top = logprobs.top_logprobs[0] if logprobs is not None and logprobs.top_logprobs else None
        except self._openai.APIError as exc:
            raise LLMError(f"{self.name}: {_short(str(exc))}") from None
        except (AttributeError, IndexError, TypeError, ValueError) as exc:   # ValueError: not JSON
            raise LLMError(f"{self.name}: malformed response, no log-probs in it ({_short(str(exc))})") from None
        if not top:
            raise LLMError(f"{self.name} returned no log-probs; scoring needs them")
        return {str(t): float(lp) for t, lp in top.items()}

    def _sample(self, prompt: str, messages: Optional[list[dict]], n: int, params: SamplingParams,
                cancel: Optional[CancelToken]) -> list[Completion]:
        """``n`` samples: one request with ``n``, or, from a server that ignores ``n`` (llama.cpp's
        does), one request per sample, ``concurrency`` at a time, seeded in order."""
        if cancel is not None:
            cancel.check()
        started = time.perf_counter()
        seed = params.seed
        out: list[Completion] = []
        if self.honours_n is not False or n == 1:
            out = self._answer(self._submit(self._request, prompt, n, params, seed, messages), cancel)
            if not out:
                raise LLMError(f"{self.name} returned no choices")
            if n > 1 and self.honours_n is None:
                self.honours_n = len(out) >= n
                if not self.honours_n:
                    log.info("%s ignores n > 1: sending the samples as %d requests at a time", self.name,
                             self.concurrency)
        if len(out) < n:
            seeds = [None if seed is None else seed + i for i in range(len(out), n)]
            futures = [self._submit(self._request, prompt, 1, params, s, messages) for s in seeds]
            try:
                for future in futures:
                    got = self._answer(future, cancel)
                    if not got:
                        raise LLMError(f"{self.name} returned no choices")
                    out.extend(got[:1])
            finally:
                for future in futures:
                    future.cancel()
            if cancel is not None:
                cancel.check()
        out = out[:n]
        self.stats.record(out, started)
        return out

    def _submit(self, fn, *args) -> Future:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="openai")
        return self._pool.submit(fn, *args)

    @staticmethod
    def _answer(future: Future[T], cancel: Optional[CancelToken]) -> T:
        """The request's answer; a goal stopped while it waits ends at once (the request finishes
        in the background, within the client's own time-out)."""
        if cancel is None:
            return future.result()
        answered = threading.Event()
        future.add_done_callback(lambda _f: answered.set())
        remove = cancel.on_stop(answered.set)
        try:
            answered.wait()
            if not future.done():
                future.cancel()
                cancel.check()
            return future.result()
        finally:
            remove()

    def _request(self, prompt: str, n: int, params: SamplingParams, seed: Optional[int],
                 messages: Optional[list[dict]] = None) -> list[Completion]:
        """One request; sent again without what the server refuses (llama.cpp's sampling fields,
        the constraint), which is learnt."""
        chat = not (self.api == "completions" and messages is None)
        while True:
            form = self._form
            constraint = self._constraint_fields(params.constraint, chat, form)
            json_mode = "response_format" in constraint
            extra: dict[str, Any] = {}
            if self.takes_extra is not False:   # what the embedded backend samples with, sent explicitly
                extra = {"repeat_penalty": params.repetition_penalty,
                         "repetition_penalty": params.repetition_penalty,
                         "top_k": 0 if params.temperature > 0 else 40, "min_p": 0.0}
            if "grammar" in constraint:
                extra["grammar"] = constraint.pop("grammar")
            common: dict[str, Any] = dict(
                model=self.model, n=n, temperature=params.temperature, top_p=params.top_p,
                frequency_penalty=params.frequency_penalty, presence_penalty=params.presence_penalty,
                max_tokens=params.max_tokens, seed=seed, **constraint)
            if not json_mode:   # a JSON answer may break lines: it ends where its object does
                common["stop"] = list(params.stop)[:4]
            if extra:
                common["extra_body"] = extra
            constrained = json_mode or "grammar" in extra
            try:
                out = self._create(prompt, messages, params, common, constrained)
            except _Refused as exc:
                if exc.constraint:
                    self._form = max(self._form, form + 1)
                    if not self._constraint_fields(params.constraint, chat, self._form):
                        self.takes_constraint = False
                        log.info("%s refuses the constraint (%s): sending plain prompts, whose answers "
                                 "are validated", self.name, exc)
                    else:
                        log.info("%s refuses the constraint's first spelling (%s): trying the next one",
                                 self.name, exc)
                else:
                    self.takes_extra = False
                    log.info("%s refuses llama.cpp's sampling fields (%s): sending the standard ones only",
                             self.name, exc)
                continue
            if constrained:
                self.takes_constraint = True
                out = [replace(c, constrained=True) for c in out]
            return out

    def _constraint_fields(self, constraint: Optional[Constraint], chat: bool, form: int) -> dict[str, Any]:
        """The request's fields for ``constraint`` in spelling ``form``; none where there is none
        left to try."""
        if constraint is None or self.constraint == "none" or self.takes_constraint is False:
            return {}
        if self.constraint == "grammar":
            return {"grammar": constraint.gbnf()} if form == 0 else {}
        if not chat:
            return {}
        schema = constraint.json_schema()
        forms = [{"type": "json_schema", "json_schema": {"name": "goal", "schema": schema, "strict": True}},
                 {"type": "json_object", "schema": schema}]   # llama-cpp-python's server
        return {"response_format": forms[form]} if form < len(forms) else {}

    def _create(self, prompt: str, messages: Optional[list[dict]], params: SamplingParams,
                common: dict[str, Any], constrained: bool = False) -> list[Completion]:
        json_mode = "response_format" in common
        try:
            if self.api == "completions" and messages is None:
                resp = self.client.completions.create(prompt=prompt, logprobs=1 if params.logprobs else None,
                                                      **common)
                return [self._from_completion(c, params) for c in resp.choices]
            resp = self.client.chat.completions.create(
                messages=messages or [{"role": "system", "content": CHAT_SYSTEM},  # type: ignore[arg-type]
                                      {"role": "user", "content": prompt}],
                logprobs=params.logprobs or None, **common)
            return [self._from_chat(c, params, cut=not json_mode) for c in resp.choices]
        except self._openai.APIStatusError as exc:
            message = str(exc.message)
            # llama-cpp-python's server answers a request its schema refuses with 500, "validation error"
            refused = exc.status_code in (400, 422) or (exc.status_code == 500 and _INVALID.search(message))
            if refused:   # a refusal names a field sent: an unrelated 400 is that request's alone
                extra = [k for k in common.get("extra_body", ()) if k != "grammar"]
                if constrained and _CONSTRAINT.search(message):
                    raise _Refused(_short(message), constraint=True) from None
                if _EXTRA.search(message) and any(re.search(rf"\b{re.escape(k)}\b", message) for k in extra):
                    raise _Refused(_short(message), constraint=False) from None
            if exc.status_code == 400 and _CONTEXT.search(message):
                raise PromptTooLong(f"{self.name}: the prompt does not fit the model's context: "
                                    f"{_short(exc.message)}") from None
            raise LLMError(f"{self.name}: HTTP {exc.status_code}: {_short(exc.message)}") from None
        except self._openai.APITimeoutError:
            raise LLMError(f"{self.name}: timed out") from None
        except self._openai.APIConnectionError as exc:
            raise LLMError(f"{self.name}: cannot connect: {_short(str(exc))}") from None
        except (AttributeError, TypeError, ValueError) as exc:
            raise LLMError(f"{self.name}: malformed response: {_short(str(exc))}") from None

    @staticmethod
    def _from_completion(choice, params: SamplingParams) -> Completion:
        text, stopped = cut_at_stop(choice.text or "", params.stop)
        lps: Optional[list[float]] = None
        if choice.logprobs is not None and choice.logprobs.token_logprobs is not None:
            lps, consumed = [], 0
            for tok, lp in zip(choice.logprobs.tokens or [], choice.logprobs.token_logprobs):
                if consumed >= len(text) or lp is None:
                    break
                lps.append(float(lp))
                consumed += len(tok)
        return Completion(text=text, token_logprobs=None if lps is None else tuple(lps),
                          finish_reason="stop" if stopped else (choice.finish_reason or "stop"))

    @staticmethod
    def _from_chat(choice, params: SamplingParams, cut: bool = True) -> Completion:
        text, stopped = cut_at_stop(choice.message.content or "", params.stop if cut else ())
        lps = None
        if choice.logprobs is not None and choice.logprobs.content:
            lps = tuple(float(t.logprob) for t in choice.logprobs.content)
        return Completion(text=text, token_logprobs=lps,
                          finish_reason="stop" if stopped else (choice.finish_reason or "stop"))


class _Refused(Exception):
    """The server refused the sampling fields beyond OpenAI's own, or the constraint."""

    def __init__(self, message: str, constraint: bool) -> None:
        super().__init__(message)
        self.constraint = constraint


_EXTRA = re.compile(r"unrecognized|unexpected|unknown|not permitted|extra", re.I)
_INVALID = re.compile(r"validation error", re.I)
_CONSTRAINT = re.compile(r"grammar|response_format|json_schema|json_object|structured output", re.I)
_CONTEXT = re.compile(r"context length|context window|maximum context|too many tokens|prompt is too long|"
                      r"exceeds the available context size|exceed_context_size", re.I)   # the last: llama-server's
_LOGPROBS = re.compile(r"logprobs|n_probs", re.I)


def _sent(request: Any) -> None:
    request.extensions["llm_planner_sent"] = time.monotonic()


def _deadline(seconds: float):
    """A response hook: the answer is read whole within ``seconds`` of its request being sent,
    or the try times out, its connection closed (a server trickling bytes would hold it forever).
    Built on the HTTP library the openai client itself uses (httpx, or a fork of it)."""
    def hook(response: Any) -> None:
        http = importlib.import_module(type(response).__module__.split(".")[0])
        at = response.request.extensions.get("llm_planner_sent", time.monotonic()) + seconds
        stream, request = response.stream, response.request
        byte_stream: Any = http.SyncByteStream

        class Deadline(byte_stream):
            def __iter__(self):
                for chunk in stream:
                    if time.monotonic() > at:
                        raise http.ReadTimeout(f"no whole answer within {seconds:g}s", request=request)
                    yield chunk

            def close(self) -> None:
                stream.close()
        response.stream = Deadline()
    return hook


def _short(text: str, limit: int = 300) -> str:
    """A server's message, cut, with any key it echoes removed."""
    text = redact(text)
    return text if len(text) <= limit else text[:limit] + "..."
