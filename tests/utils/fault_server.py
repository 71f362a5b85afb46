"""An OpenAI-compatible judge on 127.0.0.1 that injects faults at a seeded rate: server
errors, hangs, garbage, hostile JSON and echoes of the candidate's text. Bounded in
requests and in time: a hang never outlasts ``max_hang`` seconds, the server answers at most
``max_requests`` requests and stops when the context ends."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("error", "hang", "garbage", "nested", "bad_score", "huge", "control", "echo")


@dataclass
class FaultPlan:
    rate: float = 0.3
    seed: int = 2026
    kinds: tuple[str, ...] = FAULTS
    max_hang: float = 20.0
    max_requests: int = 2000
    injected: Counter[str] = field(default_factory=Counter)
    served: int = 0


def _candidate_text(body: dict[str, Any]) -> str:
    text = json.dumps(body.get("messages", []))
    match = re.search(
        r"<candidate_\w+ (id-\w+)>(.*?)</candidate_\w+ \1>", text.replace("\\n", "\n"), re.S
    )
    return match.group(2) if match else ""


@contextmanager
def fault_server(plan: FaultPlan, good_score: int = 3) -> Iterator[str]:
    """Serve ``/v1/chat/completions``; yield the base URL."""
    rng = random.Random(plan.seed)
    lock = threading.Lock()
    stopping = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def _send_raw(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _reply(self, body: dict[str, Any], content: str) -> None:
            self._send_raw(
                200,
                json.dumps(
                    {
                        "id": "fault",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "judge"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content},
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    }
                ).encode(),
            )

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                plan.served += 1
                over = plan.served > plan.max_requests
                # which requests fail is drawn; what they get goes through the kinds in turn,
                # so a run with few requests (a loaded machine) still meets the first kinds
                faulted = rng.random() < plan.rate
                turn = sum(plan.injected.values()) % len(plan.kinds)
                fault = plan.kinds[turn] if faulted else None
                if fault:
                    plan.injected[fault] += 1
            if over:
                self._send_raw(503, b'{"error": {"message": "request budget exhausted"}}')
                return
            good = json.dumps({"score": good_score, "rationale": "consistent"})
            if fault == "error":
                self._send_raw(500, b'{"error": {"message": "injected server error"}}')
            elif fault == "hang":
                stopping.wait(plan.max_hang)
                if not stopping.is_set():
                    self._reply(body, good)
            elif fault == "garbage":
                self._reply(body, "I would rate this fairly well, maybe a four-ish.")
            elif fault == "nested":
                self._reply(body, "[" * 1000)
            elif fault == "bad_score":
                self._reply(body, '{"score": "²", "rationale": "x"}')
            elif fault == "huge":
                self._reply(body, "x" * 2_000_000)
            elif fault == "control":
                self._reply(body, "\x00\x1b[2J\x07" + '{"score": 9}')
            elif fault == "echo":
                self._reply(body, f"You wrote: {_candidate_text(body)}")
            else:
                self._reply(body, good)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        assert time.monotonic() - started < 600, "the fault server outlived its time bound"
