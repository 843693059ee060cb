"""A recorded Messages API stream (server-sent events) back to the response body it adds up to.

``message_start`` gives the message (id, model, usage), ``content_block_start`` each block,
``content_block_delta`` its ``text_delta`` text and ``citations_delta`` citations (one citation
per event, in order), ``message_delta`` the stop reason and output usage.  ``ping`` and
``message_stop`` carry nothing; an ``error`` event is reported.
"""

from __future__ import annotations

from typing import Any

from citecheck.importers.exchange import Event, StreamError, fold


def _int(event: Event, key: str) -> int:
    value = event.data.get(key)
    if type(value) is not int or value < 0:
        raise StreamError(event, key, f"is required (the content block index), got {value!r}")
    return value


def assemble(events: list[Event], errors: list[StreamError]) -> dict:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
    blocks: dict[int, dict] = {}

    def take(event: Event) -> None:
        data = event.data
        kind = data.get("type") if isinstance(data, dict) else None
        if not kind:
            raise StreamError(event, "type", "is required (every Messages stream event has a type)")
        if kind == "message_start":
            start = data.get("message")
            if not isinstance(start, dict):
                raise StreamError(event, "message", "is required (the message being streamed)")
            message.update({k: v for k, v in start.items() if k != "content"})
        elif kind == "content_block_start":
            block = data.get("content_block")
            if not isinstance(block, dict):
                raise StreamError(event, "content_block", "is required (the block being started)")
            blocks[_int(event, "index")] = dict(block, citations=list(block.get("citations") or []))
        elif kind == "content_block_delta":
            index, delta = _int(event, "index"), data.get("delta")
            if not isinstance(delta, dict):
                raise StreamError(event, "delta", "is required")
            block = blocks.setdefault(index, {"type": "text", "text": "", "citations": []})
            if delta.get("type") == "text_delta":
                if not isinstance(delta.get("text"), str):
                    raise StreamError(event, "delta.text", "is required (a string)")
                block["text"] = block.get("text", "") + delta["text"]
            elif delta.get("type") == "citations_delta":
                if not isinstance(delta.get("citation"), dict):
                    raise StreamError(event, "delta.citation", "is required (the citation object)")
                block["citations"].append(delta["citation"])
        elif kind == "message_delta":
            delta = data.get("delta") if isinstance(data.get("delta"), dict) else {}
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    message[key] = delta[key]
            if isinstance(data.get("usage"), dict):
                message["usage"] = dict(message.get("usage") or {}, **data["usage"])
        elif kind == "error":
            error = data.get("error") if isinstance(data.get("error"), dict) else {}
            raise StreamError(event, "error", f"the API sent an error: {error.get('type')}: {error.get('message')}")

    fold(events, take, errors)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    for block in message["content"]:
        if block.get("type") == "text" and not block["citations"]:
            block["citations"] = None
    return message
