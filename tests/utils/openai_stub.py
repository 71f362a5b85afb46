"""A small OpenAI-compatible chat-completions server on 127.0.0.1, standing in for vLLM."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], str]


class StubError(Exception):
    """Raised by a responder: the request is answered with this HTTP error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@contextmanager
def openai_stub(model_name: str, respond: Responder) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve ``/v1/chat/completions`` (and ``/v1/models``); yield (base_url, requests)."""
    requests: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:  # keep test output quiet
            pass

        def _send(self, body: dict[str, Any], status: int = 200) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(
                    {
                        "object": "list",
                        "data": [
                            {
                                "id": model_name,
                                "object": "model",
                                "owned_by": "stub",
                                "max_model_len": 32768,
                            }
                        ],
                    }
                )
            else:
                self._send({"error": {"message": "not found"}}, 404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send({"error": {"message": f"unsupported path {self.path}"}}, 404)
                return
            with lock:
                requests.append(body)
            try:
                content = respond(body)
            except StubError as error:
                self._send({"error": {"message": str(error), "type": "stub"}}, error.status)
                return
            self._send(
                {
                    "id": f"stub-{len(requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", model_name),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
            )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def message_parts(request: dict[str, Any]) -> tuple[str, list[str]]:
    """All text and all image URLs of a chat-completions request."""
    texts: list[str] = []
    images: list[str] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part["text"])
            elif part.get("type") == "image_url":
                images.append(part["image_url"]["url"])
    return "\n".join(texts), images
