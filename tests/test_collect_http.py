"""``citecheck collect``'s own HTTP/1.1 reading (an event loop, not ``http.server``): request heads,
chunked bodies arriving in pieces, pipelined requests answered in order, ``Expect: 100-continue``,
``Connection: close`` and HTTP/1.0, each against a real receiver process on a free port."""

from __future__ import annotations

import json
import socket

import pytest
from citecheck.importers.collector import Refused, chunked_body, parse_head
from hypothesis import given, settings
from hypothesis import strategies as st
from test_collect import Receiver, new_trace_id, trace_export, wait_for_answers


def test_a_head_is_read_with_its_headers_in_lowercase_and_the_first_of_a_repeated_one():
    head = parse_head(b"POST /v1/traces?x=1 HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n"
                      b"content-type: text/plain\r\nConnection: keep-alive")
    assert (head.method, head.path, head.content_type, head.keep_alive) == ("POST", "/v1/traces", "application/json", True)
    assert not parse_head(b"POST / HTTP/1.1\r\nConnection: close").keep_alive
    assert not parse_head(b"POST / HTTP/1.0").keep_alive
    assert parse_head(b"POST / HTTP/1.0\r\nConnection: Keep-Alive").keep_alive


@pytest.mark.parametrize("raw", [b"GARBAGE", b"POST /v1/traces SPDY/3", b"POST / HTTP/1.1\r\nno colon here",
                                 b"POST / HTTP/1.1\r\n Folded: x"])
def test_a_malformed_head_is_refused_and_the_connection_closed(raw):
    with pytest.raises(Refused) as caught:
        parse_head(raw)
    assert caught.value.status == 400 and caught.value.close


def _chunked(body: bytes, sizes: list[int]) -> bytes:
    out, at = b"", 0
    for size in sizes:
        piece = body[at:at + size]
        if piece:
            out += f"{len(piece):x};ext=1\r\n".encode() + piece + b"\r\n"
        at += size
    if at < len(body):
        out += f"{len(body) - at:X}\r\n".encode() + body[at:] + b"\r\n"
    return out + b"0\r\nX-Trailer: 1\r\n\r\n"


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(1, 90), max_size=6), st.integers(1, 40))
def test_a_chunked_body_is_read_once_it_has_all_come_whatever_the_pieces(body, sizes, step):
    chunked = _chunked(body, sizes)
    buffer = bytearray()
    for at in range(0, len(chunked), step):
        assert chunked_body(buffer, 0) is None  # (not all of it yet)
        buffer += chunked[at:at + step]
    buffer += b"POST /next"  # (the next request, pipelined)
    found = chunked_body(buffer, 0)
    assert found is not None and found[0] == body and bytes(buffer[found[1]:]) == b"POST /next"


def test_a_chunked_body_too_large_or_malformed_is_refused():
    with pytest.raises(Refused) as caught:
        chunked_body(bytearray(b"20\r\n" + b"x" * 32 + b"\r\n0\r\n\r\n"), 0, limit=16)
    assert caught.value.status == 413
    with pytest.raises(Refused) as caught:
        chunked_body(bytearray(b"zz\r\n"), 0)
    assert caught.value.status == 400


@pytest.fixture
def receiver(tmp_path):
    started = Receiver(tmp_path / "answers.jsonl")
    yield started
    started.stop()


def _request(body: bytes, *headers: str, version: str = "HTTP/1.1") -> bytes:
    lines = [f"POST /v1/traces {version}", "Host: x", "Content-Type: application/json", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _responses(sock: socket.socket, count: int) -> list[tuple[int, dict, bytes]]:
    """``count`` responses read off ``sock`` (status, headers, body)."""
    data, out = b"", []
    while len(out) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            lines = data[:end].decode("latin-1").split("\r\n")
            headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            size = int(headers.get("content-length", "0"))
            if len(data) >= end + 4 + size:
                out.append((int(lines[0].split()[1]), headers, data[end + 4:end + 4 + size]))
                data = data[end + 4 + size:]
                continue
        more = sock.recv(65536)
        assert more, f"the connection closed after {len(out)} response(s)"
        data += more
    return out


def test_pipelined_exports_are_each_answered_in_order_on_one_connection(receiver):
    traces = [new_trace_id() for _ in range(3)]
    bodies = [json.dumps(trace_export(t)).encode() for t in traces]
    chunked = _request(_chunked(bodies[2], [7, 100]), "Transfer-Encoding: chunked")
    wire = _request(bodies[0]) + _request(b"{not json") + _request(bodies[1]) + chunked
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=30) as sock:
        for at in range(0, len(wire), 333):  # (in pieces that cut heads and bodies anywhere)
            sock.sendall(wire[at:at + 333])
        answers = _responses(sock, 4)
    assert [status for status, _, _ in answers] == [200, 400, 200, 200]
    assert "the body is not JSON" in json.loads(answers[1][2])["message"]
    assert [headers.get("connection") for _, headers, _ in answers] == [None] * 4  # (kept open)
    assert sorted(line["answer_id"] for line in wait_for_answers(receiver.log, 3)) == sorted(traces)


def test_expect_100_continue_is_answered_before_the_body_is_sent(receiver):
    trace = new_trace_id()
    body = json.dumps(trace_export(trace)).encode()
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=30) as sock:
        request = _request(body, "Expect: 100-continue")
        sock.sendall(request[:-len(body)])
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        [(status, _, _)] = _responses(sock, 1)
    assert status == 200
    assert [line["answer_id"] for line in wait_for_answers(receiver.log, 1)] == [trace]


@pytest.mark.parametrize("version, header", [("HTTP/1.1", "Connection: close"), ("HTTP/1.0", "X-Nothing: 1")])
def test_a_client_that_asks_for_close_is_answered_then_closed(receiver, version, header):
    body = json.dumps(trace_export(new_trace_id())).encode()
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=30) as sock:
        sock.sendall(_request(body, header, version=version))
        [(status, headers, _)] = _responses(sock, 1)
        assert sock.recv(10) == b""  # (closed by the receiver)
    assert status == 200 and headers["connection"] == "close"
