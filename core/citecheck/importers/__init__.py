"""Importers: turn other answer formats into citecheck log lines.

Each importer yields :class:`core.log.Answer` objects and, for every malformed record,
a :class:`core.errors.RecordError` naming its position, then goes on with the rest.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from citecheck.contract.log import Answer, Chunk, _opt_int, _opt_num, _opt_str, checksum  # noqa: F401  (shared field readers)
from citecheck.errors import FieldError, RecordError
from citecheck.storage.lines import decode, parse_lines


def read_records(path: str | Path) -> Iterator[tuple[int, Any | RecordError]]:
    """Records of a JSON file (one object, or a list of them) or a JSON-lines file.

    Yields ``(position, record)``: position is the line number for JSON lines and the 1-based
    item number for a JSON list.  A line that cannot be decoded yields a :class:`RecordError`
    (the shared JSON-lines reader, :mod:`citecheck.storage.lines`) and the others still come.
    """
    name = str(path)
    data = Path(path).read_bytes()
    stripped = data.lstrip()
    if stripped.startswith(b"[") or (stripped.startswith(b"{") and b"\n" in stripped.rstrip()):
        try:
            whole = decode(data)
        except FieldError:
            whole = None
        if isinstance(whole, list):
            yield from ((i, item) for i, item in enumerate(whole, start=1))
            return
        if isinstance(whole, dict):
            yield 1, whole
            return
    yield from parse_lines(name, data.splitlines(keepends=True), lambda value: value)


def chunk_from_source(obj: Any, where: str, default_id: str) -> Chunk:
    """A retrieved chunk from a source object with ``text`` and optional log-format metadata."""
    if not isinstance(obj, dict):
        raise FieldError(where.rstrip("."), "expected an object with at least 'text'")
    text = obj.get("text")
    if not isinstance(text, str):
        raise FieldError(f"{where}text", "is required (the source text given to the model)")
    chunk_id = _opt_str(obj, "chunk_id", where) or _opt_str(obj, "id", where) or default_id
    document_id = _opt_str(obj, "document_id", where) or chunk_id
    return Chunk(
        chunk_id=chunk_id,
        document_id=document_id,
        source=_opt_str(obj, "source", where) or document_id,
        title=_opt_str(obj, "title", where),
        section=_opt_str(obj, "section", where),
        text=text,
        start=_opt_int(obj, "start", where),
        end=_opt_int(obj, "end", where),
        checksum=_opt_str(obj, "checksum", where) or checksum(text),
        retrieval_score=_opt_num(obj, "retrieval_score", where),
        rerank_score=_opt_num(obj, "rerank_score", where),
    )


_Default = TypeVar("_Default")


def object_field(obj: dict, key: str) -> dict:
    """``obj[key]`` when it is a JSON object, else an empty one: an optional nested object."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def string_field(obj: dict, key: str, default: _Default) -> str | _Default:
    """``obj[key]`` when it is a string (empty or not), else ``default``."""
    value = obj.get(key)
    return value if isinstance(value, str) else default


def common_fields(obj: dict, position: int) -> dict:
    """The answer-level fields every importer copies when the record has them."""
    return {
        "answer_id": str(obj.get("answer_id") or obj.get("id") or f"answer-{position}"),
        "timestamp": _opt_str(obj, "timestamp", ""),
        "model": _opt_str(obj, "model", ""),
        "prompt_version": _opt_str(obj, "prompt_version", ""),
        "index_snapshot": _opt_str(obj, "index_snapshot", ""),
    }


Convert = Callable[[Any, int], Answer]  # (record, its position) -> Answer, FieldError when it cannot


def records_to_answers(path: str | Path, convert: Convert) -> Iterator[Answer | RecordError]:
    """Apply ``convert(record, position) -> Answer`` to every record, turning failures into errors."""
    name = str(path)
    for position, record in read_records(path):
        if isinstance(record, RecordError):
            yield record
            continue
        try:
            yield convert(record, position)
        except FieldError as exc:
            yield RecordError(name, position, exc.field, exc.message)


def add_records_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str, help_text: str,
                       input_help: str, convert: Convert) -> None:
    """The ``citecheck import NAME INPUT`` command of an importer that converts the records of one
    file (JSON or JSON lines) one by one with ``convert``."""
    parser = sub.add_parser(name, parents=[common], help=help_text)
    parser.add_argument("input", help=input_help)
    parser.set_defaults(importer=lambda args: records_to_answers(args.input, convert))


def add_import_parsers(sub: argparse._SubParsersAction) -> None:
    from citecheck.importers import (
        anthropic,
        claims,
        cohere,
        expertqa,
        gemini,
        langfuse,
        langsmith,
        markers,
        openai,
        otel,
        phoenix,
    )

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", help="write the log here instead of standard output")
    for module in (anthropic, openai, gemini, cohere, claims, markers, expertqa, otel, langfuse, phoenix, langsmith):
        module.add_parser(sub, common)


def run_importer(args: argparse.Namespace) -> Iterator[Answer | RecordError]:
    return args.importer(args)
