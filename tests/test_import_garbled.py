"""Imports never destroy and never crash: every provider fixture, cut at random bytes, with bytes
inserted or shuffled, JSON and SSE alike, gives a clean result (answers and errors naming file,
line and field), never a traceback, and an import that imports nothing leaves ``--out`` as it was."""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path

import pytest
from citecheck.cli.main import main

DATA = Path(__file__).parent / "data" / "importers"
PRIOR = b'{"an": "earlier log the import must not empty"}\n'

# (provider, response fixture, request fixture or None)
FIXTURES = [
    ("anthropic", "anthropic_response.json", "anthropic_request.json"),
    ("anthropic", "anthropic_search_response.json", "anthropic_search_request.json"),
    ("anthropic", "anthropic_stream.sse", "anthropic_request.json"),
    ("openai", "openai_chat_response.json", None),
    ("openai", "openai_file_response.json", "openai_file_request.json"),
    ("openai", "openai_web_response.json", "openai_web_request.json"),
    ("openai", "openai_web_stream.sse", None),
    ("gemini", "gemini_multipart_response.json", None),
    ("gemini", "gemini_search_response.json", "gemini_search_request.json"),
    ("gemini", "gemini_search_stream.sse", "gemini_search_request.json"),
    ("cohere", "cohere_v1_response.json", "cohere_v1_request.json"),
    ("cohere", "cohere_v2_response.json", "cohere_v2_request.json"),
    ("cohere", "cohere_v2_stream.sse", "cohere_v2_request.json"),
]


def garbled(data: bytes, rng: random.Random, count: int) -> list[tuple[str, bytes]]:
    """Variants of a response: cut at random bytes (a character cut in two among them), random
    bytes inserted, a few bytes shuffled, and cut inside a UTF-8 character on purpose."""
    out = []
    for n in range(count):
        cut = rng.randrange(1, len(data))
        out.append((f"cut-{cut}", data[:cut]))
        at = rng.randrange(len(data))
        out.append((f"insert-{n}", data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]))
        piece = bytearray(data)
        for _ in range(4):
            i, j = rng.randrange(len(piece)), rng.randrange(len(piece))
            piece[i], piece[j] = piece[j], piece[i]
        out.append((f"shuffle-{n}", bytes(piece)))
    two = "é".encode()
    out.append(("cut-in-a-character", data[: len(data) // 2] + two[:1]))
    out.append(("invalid-utf8", data[: len(data) // 3] + b"\xff\xfe\xfd" + data[len(data) // 3:]))
    return out


def run(argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv], out, err)  # a traceback would raise here
    return code, err.getvalue()


@pytest.mark.parametrize("provider,response,request_file", FIXTURES, ids=lambda v: str(v))
def test_garbled_responses_give_clean_errors_and_never_empty_out(tmp_path, provider, response, request_file):
    rng = random.Random(f"{provider}:{response}")
    counts = {"tried": 0, "imported": 0, "clean errors": 0}
    for name, data in garbled((DATA / response).read_bytes(), rng, 6):
        path = tmp_path / f"{name}{Path(response).suffix}"
        path.write_bytes(data)
        out = tmp_path / "prior.jsonl"
        out.write_bytes(PRIOR)
        argv = ["import", provider, "--response", path, "--out", out]
        if request_file:
            argv += ["--request", DATA / request_file]
        code, err = run(argv)
        counts["tried"] += 1
        assert code in (0, 4), (name, err)
        if "imported 0 answer(s)" in err:
            assert out.read_bytes() == PRIOR, name  # nothing imported: --out exactly as it was
            assert "left as it was" in err
            counts["clean errors"] += 1
        else:
            counts["imported"] += 1
            assert out.read_bytes() != PRIOR
        assert "Traceback" not in err
    assert counts["tried"] == 20 and counts["clean errors"] > 0, counts


def test_an_import_of_nothing_leaves_a_missing_out_missing(tmp_path):
    path = tmp_path / "cut.json"
    path.write_bytes(b'{"id": "msg_01", "type": "mess')
    code, err = run(["import", "openai", "--response", path, "--out", tmp_path / "new.jsonl"])
    assert code == 4 and not (tmp_path / "new.jsonl").exists() and "left as it was" in err
