"""Unit-test double of an OpenAI-compatible server that misbehaves on demand (the real server,
llama.cpp's, is exercised in test_llm_backends.py). ``mode`` is switched while it runs:
ok, http_429, http_500, garbage, empty, slow, overlong; ``say:<text>`` answers every prompt with
the text, ``steps:<a>|<b>|...`` answers a prompt ending "Step n:" with the n-th."""
from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FaultyOpenAIServer:
    def __init__(self, slow_s: float = 5.0) -> None:
        self.mode = "ok"
        self.slow_s = slow_s
        self.slow_started = threading.Event()   # set when a 'slow' request begins its wait
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                server.requests += 1
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FaultyOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()

    def handle(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        mode = self.mode
        if mode == "echo_key":   # what some servers do on a bad key: say it back
            key = h.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._send(h, 401, {"error": {"message": f"Incorrect API key provided: {key}",
                                                 "type": "invalid_request_error"}})
        if mode == "context":
            return self._send(h, 400, {"error": {"message": "This model's maximum context length is 2048 tokens",
                                                 "type": "invalid_request_error"}})
        if mode.startswith("http_"):
            return self._send(h, int(mode[5:]), {"error": {"message": f"injected {mode}", "type": "server_error"}})
        if mode == "garbage":
            return self._send(h, 200, None, raw=b"<html>this is not JSON</html>")
        if mode == "slow":
            self.slow_started.set()
            time.sleep(self.slow_s)
        n = int(body.get("n") or 1)
        text = {"empty": "", "overlong": "walk " * 2000}.get(mode, " Walk to kitchen\n")
        if mode.startswith("say:"):   # a scripted completion
            text = f" {mode[4:]}\n"
        if mode.startswith("steps:"):   # a scripted program: step n of the prompt's "Step n:" is the n-th
            prompt = str(body.get("prompt") or "")
            n_step = int(re.findall(r"Step (\d+):$", prompt)[0]) if re.search(r"Step (\d+):$", prompt) else 1
            steps = mode[6:].split("|")
            text = f" {steps[n_step - 1]}\n" if n_step <= len(steps) else "\n"
        if mode.startswith("echo_key_in_text"):   # a completion that says the key back, with a 200
            key = h.headers.get("Authorization", "").removeprefix("Bearer ")
            if mode == "echo_key_in_text_cut":    # ... cut off, as a completion that hit its limit
                key = key[:-6]
            text = f" Walk to kitchen {key}\n"
        if h.path.endswith("/chat/completions"):
            choices = [{"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                        "logprobs": None} for i in range(n)]
            return self._send(h, 200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                       "choices": choices})
        tokens = text.split(" ")[:64] or [""]
        choices = [{"index": i, "text": text, "finish_reason": "stop",
                    "logprobs": {"tokens": tokens, "token_logprobs": [-0.5] * len(tokens),
                                 "top_logprobs": [{" Yes": -0.3, " No": -1.5}], "text_offset": [0] * len(tokens)}}
                   for i in range(n)]
        return self._send(h, 200, {"id": "x", "object": "text_completion", "created": 0, "model": "m",
                                   "choices": choices})

    @staticmethod
    def _send(h, status: int, payload, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client gave up first (the 'slow' fault): expected
