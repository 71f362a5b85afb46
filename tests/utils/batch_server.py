"""An OpenAI-compatible batch API on 127.0.0.1: ``/v1/files`` and ``/v1/batches`` as the
``openai`` client (and so Inspect's ``openai/`` batcher) calls them, plus
``/v1/chat/completions`` for calls that are not batched.

Shapes from OpenAI's batch API reference (platform.openai.com/docs/api-reference/batch):
a JSONL input file of ``{"custom_id", "method", "url", "body"}`` lines uploaded with
``purpose=batch``; a batch object (``id``, ``object: "batch"``, ``endpoint``,
``input_file_id``, ``completion_window``, ``status``, ``output_file_id``, ``error_file_id``,
``request_counts``, ``errors``); an output file of ``{"id", "custom_id", "response":
{"status_code", "request_id", "body"}, "error"}`` lines. Inspect 0.3.285's
``model/_providers/_openai_batch.py`` reads exactly these fields.

``mode`` decides what happens: ``ok`` runs each batch (every reply from ``reply``);
``reject_create`` answers batch creation with a server error; ``fail`` reports the batch
``failed`` with an error per request. Each batch completes ``complete_after`` seconds after
it is created, so a judge timeout shorter than that would cut it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def chat_completion(model: str, content: str) -> dict[str, Any]:
    return {
        "id": "stand-in",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _score_reply(body: dict[str, Any]) -> str:
    return json.dumps({"score": 3, "rationale": "consistent"})


@dataclass
class BatchPlan:
    mode: str = "ok"
    complete_after: float = 0.0
    reply: Callable[[dict[str, Any]], str] = _score_reply
    # What the server saw: batches created, requests per batch, direct (unbatched) calls.
    batches: list[int] = field(default_factory=list)
    direct_calls: int = 0
    creations_refused: int = 0


@contextmanager
def batch_server(plan: BatchPlan) -> Iterator[str]:
    """Serve the batch API; yield the base URL (``http://127.0.0.1:PORT/v1``)."""
    lock = threading.Lock()
    files: dict[str, bytes] = {}
    batches: dict[str, dict[str, Any]] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def _send(self, status: int, payload: Any, raw: bool = False) -> None:
            data = payload if raw else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))

        def _batch_object(self, batch_id: str) -> dict[str, Any]:
            batch = batches[batch_id]
            done = time.monotonic() >= batch["ready_at"]
            total = len(batch["lines"])
            status = "in_progress"
            output_file_id = None
            errors = None
            if done and plan.mode == "fail":
                status = "failed"
                errors = {
                    "object": "list",
                    "data": [
                        {"code": "stand_in_failure", "message": "the batch failed", "line": i}
                        for i in range(total)
                    ],
                }
            elif done:
                status = "completed"
                output_file_id = f"file-out-{batch_id}"
                if output_file_id not in files:
                    files[output_file_id] = self._outputs(batch["lines"])
            return {
                "id": batch_id,
                "object": "batch",
                "endpoint": batch["endpoint"],
                "input_file_id": batch["input_file_id"],
                "completion_window": "24h",
                "status": status,
                "created_at": int(batch["created_at"]),
                "output_file_id": output_file_id,
                "error_file_id": None,
                "errors": errors,
                "request_counts": {
                    "total": total,
                    "completed": total if status == "completed" else 0,
                    "failed": total if status == "failed" else 0,
                },
            }

        def _outputs(self, lines: list[dict[str, Any]]) -> bytes:
            out = []
            for line in lines:
                body = line["body"]
                out.append(
                    {
                        "id": f"response-{line['custom_id']}",
                        "custom_id": line["custom_id"],
                        "response": {
                            "status_code": 200,
                            "request_id": line["custom_id"],
                            "body": chat_completion(body.get("model", "judge"), plan.reply(body)),
                        },
                        "error": None,
                    }
                )
            return "\n".join(json.dumps(item) for item in out).encode() + b"\n"

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            with lock:
                if match := re.fullmatch(r"/v1/batches/([\w-]+)", path):
                    if match.group(1) not in batches:
                        self._send(404, {"error": {"message": "no such batch"}})
                        return
                    self._send(200, self._batch_object(match.group(1)))
                elif match := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
                    self._send(200, files.get(match.group(1), b""), raw=True)
                else:
                    self._send(404, {"error": {"message": f"no route {path}"}})

        def do_POST(self) -> None:
            path = self.path.split("?")[0]
            body = self._body()
            with lock:
                if path == "/v1/files":
                    # multipart/form-data: the JSONL is the part whose lines are objects
                    content = b"\n".join(
                        line for line in body.split(b"\r\n") if line.startswith(b'{"custom_id"')
                    )
                    file_id = f"file-in-{len(files)}"
                    files[file_id] = content
                    self._send(
                        200,
                        {
                            "id": file_id,
                            "object": "file",
                            "bytes": len(content),
                            "created_at": int(time.time()),
                            "filename": "batch.jsonl",
                            "purpose": "batch",
                            "status": "processed",
                        },
                    )
                elif path == "/v1/batches":
                    if plan.mode == "reject_create":
                        plan.creations_refused += 1
                        self._send(500, {"error": {"message": "stand-in: batch refused"}})
                        return
                    request = json.loads(body)
                    lines = [
                        json.loads(line)
                        for line in files[request["input_file_id"]].splitlines()
                        if line.strip()
                    ]
                    batch_id = f"batch-{len(batches)}"
                    batches[batch_id] = {
                        "lines": lines,
                        "endpoint": request["endpoint"],
                        "input_file_id": request["input_file_id"],
                        "created_at": time.time(),
                        "ready_at": time.monotonic() + plan.complete_after,
                    }
                    plan.batches.append(len(lines))
                    self._send(200, self._batch_object(batch_id))
                elif path == "/v1/chat/completions":
                    plan.direct_calls += 1
                    request = json.loads(body)
                    self._send(
                        200, chat_completion(request.get("model", "judge"), plan.reply(request))
                    )
                else:
                    self._send(404, {"error": {"message": f"no route {path}"}})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
