"""Real-shaped Messages API responses behind an HTTP mock transport: the offline stand-in for
Claude used by the tests and by ``sample_data/generate.py``.

The SDK is exercised for real (request building, retries, response parsing); only the network
is replaced.  ``transport(reply)`` calls ``reply(request_body)`` for every POST to
``/v1/messages`` and sends back what it returns: a message dict (``message(...)``), an error
(``error(...)``), or a ``(status, body, headers)`` triple.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import httpx2 as httpx

_ids = itertools.count(1)


def usage(input_tokens: int = 1200, output_tokens: int = 120, cache_read: int = 0, cache_write: int = 0) -> dict:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read}


def text_block(text: str, citations: list[dict] | None = None) -> dict:
    block: dict = {"type": "text", "text": text}
    if citations is not None:
        block["citations"] = citations
    return block


def char_citation(document_index: int, cited_text: str, start: int, end: int, title: str | None = None) -> dict:
    return {"type": "char_location", "cited_text": cited_text, "document_index": document_index,
            "document_title": title, "start_char_index": start, "end_char_index": end}


def message(content: list[dict] | str, model: str = "claude-sonnet-4-5", stop_reason: str = "end_turn",
            use: dict | None = None) -> dict:
    if isinstance(content, str):
        content = [text_block(content)]
    return {"id": f"msg_mock_{next(_ids):06d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None, "usage": use or usage()}


def error(status: int, kind: str, text: str) -> tuple[int, dict, dict]:
    headers = {"retry-after-ms": "1"} if status in (429, 529) else {}
    return status, {"type": "error", "error": {"type": kind, "message": text}}, headers


Reply = Callable[[dict], Any]


def transport(reply: Reply, log: list | None = None) -> httpx.MockTransport:
    """A MockTransport answering Messages API calls with ``reply``; requests are appended to ``log``."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        if log is not None:
            log.append({"path": request.url.path, "body": body, "headers": dict(request.headers)})
        out = reply(body)
        if isinstance(out, tuple):
            status, payload, headers = out
            return httpx.Response(status, json=payload, headers=headers)
        return httpx.Response(200, json=out)

    return httpx.MockTransport(handle)


def client(reply: Reply, log: list | None = None, max_retries: int = 2):
    """An ``anthropic.Anthropic`` client whose HTTP goes to ``reply`` instead of the network."""
    import anthropic

    return anthropic.Anthropic(api_key="sk-ant-test-not-a-key", max_retries=max_retries,
                               http_client=httpx.Client(transport=transport(reply, log)))
