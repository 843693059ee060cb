"""``anthropic``: a Messages API request body plus its response body with citations enabled.

Field names follow the ``anthropic`` SDK types (``DocumentBlockParam``, ``SearchResultBlockParam``,
``TextBlock``, ``CitationCharLocation``, ``CitationPageLocation``, ``CitationContentBlockLocation``,
``CitationsSearchResultLocation``); the tests validate the fixtures against those types.

- Every ``document`` block of the request, in order, is one retrieved chunk (``document_index``);
  every ``search_result`` block, in order and counted apart, is one too (``search_result_index``).
- A document's ``context`` may hold a JSON object with log-format chunk fields (``chunk_id``,
  ``document_id``, ``source``, ``section``, ``start``, ``end``, ``checksum``, scores): the answer
  pipeline puts them there.  Otherwise ids are made from the position (``doc-1``, ``result-1``).
- The answer text is the response's text blocks joined; each citation becomes a span citation
  over the text block that carries it, so a sentence split into several cited blocks keeps all
  of them.  ``cited_text`` becomes the quote (a trailing space in it is tolerated by the checker).
- ``char_location`` keeps its character offsets; ``content_block_location`` and
  ``search_result_location`` get offsets from the block boundaries (blocks are joined with no
  separator, as ``cited_text`` is); ``page_location`` (PDFs) keeps pages in ``locator`` and has
  no text to check against unless the request carries it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from citecheck.contract.log import Answer, Chunk, Citation, checksum
from citecheck.errors import FieldError
from citecheck.importers import anthropic_batch, anthropic_stream, object_field
from citecheck.importers.exchange import Provider, add_exchange_options, import_files, run

_META_STR = ("chunk_id", "document_id", "source", "section", "checksum")


@dataclass(frozen=True, slots=True)
class _Source:
    chunk: Chunk
    block_starts: tuple[int, ...]  # offset of each content block in chunk.text, plus the end


def _blocks_text(content: Any, where: str) -> tuple[str, tuple[int, ...]]:
    if isinstance(content, str):
        return content, (0, len(content))
    if not isinstance(content, list):
        raise FieldError(where, "expected a string or a list of text blocks")
    parts, starts, pos = [], [0], 0
    for i, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            raise FieldError(f"{where}[{i}].text", "expected a text block with a string 'text'")
        parts.append(block["text"])
        pos += len(block["text"])
        starts.append(pos)
    return "".join(parts), tuple(starts)


def _metadata(context: Any) -> dict:
    if not isinstance(context, str) or not context.lstrip().startswith("{"):
        return {}
    try:
        meta = json.loads(context)
    except json.JSONDecodeError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _chunk(text: str, meta: dict, default_id: str, title: str | None, source: str | None) -> Chunk:
    def s(key: str) -> str | None:
        value = meta.get(key)
        return value if isinstance(value, str) else None

    def i(key: str) -> int | None:
        value = meta.get(key)
        return value if isinstance(value, int) and value >= 0 else None

    def f(key: str) -> float | None:
        value = meta.get(key)
        return value if isinstance(value, int | float) else None

    chunk_id = s("chunk_id") or default_id
    start, end = i("start"), i("end")
    if (start is None) != (end is None):
        start = end = None
    return Chunk(chunk_id, s("document_id") or title or chunk_id, s("source") or source or title or chunk_id,
                 s("title") or title, s("section"), text, start, end, s("checksum") or checksum(text),
                 f("retrieval_score"), f("rerank_score"))


def _document(block: dict, index: int, where: str) -> _Source:
    source = block.get("source")
    if not isinstance(source, dict):
        raise FieldError(f"{where}.source", "a document block needs a source object")
    kind = source.get("type")
    starts: tuple[int, ...]  # offset of each content block in the text, plus the end
    if kind == "text":
        data = source.get("data")
        if not isinstance(data, str):
            raise FieldError(f"{where}.source.data", "a plain-text document needs its text in 'data'")
        text, starts = data, (0, len(data))
    elif kind == "content":
        text, starts = _blocks_text(source.get("content"), f"{where}.source.content")
    else:  # base64/url/file PDFs: the text is not in the request
        text, starts = "", (0,)
    title = block.get("title") if isinstance(block.get("title"), str) else None
    return _Source(_chunk(text, _metadata(block.get("context")), f"doc-{index + 1}", title, None), starts)


def _search_result(block: dict, index: int, where: str) -> _Source:
    text, starts = _blocks_text(block.get("content"), f"{where}.content")
    title = block.get("title") if isinstance(block.get("title"), str) else None
    source = block.get("source") if isinstance(block.get("source"), str) else None
    return _Source(_chunk(text, {}, f"result-{index + 1}", title, source), starts)


def _walk(content: Any, where: str, docs: list, results: list, texts: list) -> None:
    if isinstance(content, str):
        texts.append(content)
        return
    if not isinstance(content, list):
        raise FieldError(where, "expected a string or a list of content blocks")
    for i, block in enumerate(content):
        here = f"{where}[{i}]"
        if not isinstance(block, dict):
            raise FieldError(here, "expected a content block object")
        kind = block.get("type")
        if kind == "document":
            docs.append(_document(block, len(docs), here))
        elif kind == "search_result":
            results.append(_search_result(block, len(results), here))
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                _walk(inner, f"{here}.content", docs, results, [])
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])


def parse_request(req: Any) -> tuple[list[_Source], list[_Source], str, dict]:
    """(documents, search results, question, request metadata) of a Messages API request body."""
    if not isinstance(req, dict):
        raise FieldError("request", "expected a Messages API request object")
    messages = req.get("messages")
    if not isinstance(messages, list) or not messages:
        raise FieldError("request.messages", "is required (the list of messages sent)")
    docs: list[_Source] = []
    results: list[_Source] = []
    question = ""
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise FieldError(f"request.messages[{i}]", "expected a message object")
        texts: list[str] = []
        _walk(message.get("content"), f"request.messages[{i}].content", docs, results, texts)
        if message.get("role") == "user" and texts:
            question = "\n".join(t.strip() for t in texts if t.strip())
    return docs, results, question, object_field(req, "metadata")


def _citation(cit: Any, where: str, span: tuple[int, int], docs: list[_Source], results: list[_Source]) -> Citation:
    if not isinstance(cit, dict):
        raise FieldError(where, "expected a citation object")
    kind = cit.get("type")
    quote = cit.get("cited_text")
    if not isinstance(quote, str):
        raise FieldError(f"{where}.cited_text", "is required (a string)")
    if kind == "search_result_location":
        index, pool, prefix = cit.get("search_result_index"), results, "result"
    elif kind in ("char_location", "page_location", "content_block_location"):
        index, pool, prefix = cit.get("document_index"), docs, "doc"
    elif kind == "web_search_result_location":
        url = cit.get("url") if isinstance(cit.get("url"), str) else "web"
        return Citation("span", answer_start=span[0], answer_end=span[1], chunk_id=url, quote=quote,
                        locator={"type": kind})
    else:
        raise FieldError(f"{where}.type", f"unknown citation type {kind!r}")
    key = "search_result_index" if prefix == "result" else "document_index"
    if not isinstance(index, int) or index < 0:
        raise FieldError(f"{where}.{key}", "is required (a non-negative integer)")
    if index >= len(pool):  # keep it as written: the checker reports unretrieved_source
        return Citation("span", answer_start=span[0], answer_end=span[1], chunk_id=f"{prefix}-{index + 1}",
                        quote=quote, locator={"type": kind, key: index})
    src = pool[index]
    qs = qe = None
    locator: dict = {"type": kind, key: index}
    if kind == "char_location":
        qs, qe = cit.get("start_char_index"), cit.get("end_char_index")
        if not (isinstance(qs, int) and isinstance(qe, int) and 0 <= qs <= qe):
            raise FieldError(f"{where}.start_char_index", "char_location needs start_char_index <= end_char_index")
    elif kind == "page_location":
        locator.update(start_page_number=cit.get("start_page_number"), end_page_number=cit.get("end_page_number"))
    else:
        b0, b1 = cit.get("start_block_index"), cit.get("end_block_index")
        if not (isinstance(b0, int) and isinstance(b1, int) and 0 <= b0 < b1):
            raise FieldError(f"{where}.start_block_index", "needs 0 <= start_block_index < end_block_index")
        locator.update(start_block_index=b0, end_block_index=b1)
        if b1 < len(src.block_starts):
            qs, qe = src.block_starts[b0], src.block_starts[b1]
    return Citation("span", answer_start=span[0], answer_end=span[1], chunk_id=src.chunk.chunk_id,
                    document_id=src.chunk.document_id, quote=quote, quote_start=qs, quote_end=qe,
                    locator=locator)


def convert(req: Any, resp: Any, position: int) -> Answer:
    docs, results, question, meta = parse_request(req)
    if not isinstance(resp, dict) or not isinstance(resp.get("content"), list):
        raise FieldError("response.content", "is required (the response's list of content blocks)")
    parts: list[str] = []
    citations: list[Citation] = []
    pos = 0
    for i, block in enumerate(resp["content"]):
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise FieldError(f"response.content[{i}].text", "expected a string")
        span = (pos, pos + len(text))
        for j, cit in enumerate(block.get("citations") or []):
            citations.append(_citation(cit, f"response.content[{i}].citations[{j}]", span, docs, results))
        parts.append(text)
        pos += len(text)
    model = resp.get("model") if isinstance(resp.get("model"), str) else req.get("model")
    extra = {}
    if isinstance(resp.get("usage"), dict):
        extra["usage"] = resp["usage"]
    if isinstance(resp.get("stop_reason"), str):
        extra["stop_reason"] = resp["stop_reason"]
    return Answer(
        answer_id=str(meta.get("answer_id") or resp.get("id") or f"answer-{position}"),
        question=question,
        answer="".join(parts),
        chunks=tuple(s.chunk for s in docs + results),
        citations=tuple(citations),
        model=model if isinstance(model, str) else None,
        timestamp=meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None,
        prompt_version=meta.get("prompt_version") if isinstance(meta.get("prompt_version"), str) else None,
        index_snapshot=meta.get("index_snapshot") if isinstance(meta.get("index_snapshot"), str) else None,
        extra=extra,
    )


def _convert(req: Any, resp: Any, position: int) -> Answer:
    if req is None:
        raise FieldError("request", "is required: the citations point into the request's documents "
                                    "(give --request, or pairs with a request)")
    return convert(req, resp, position)


PROVIDER = Provider("Anthropic", _convert, anthropic_stream.assemble)


def import_pair(request_path, response_path):
    """Pair the records of the request and response files by position and convert each pair
    (a response file may also be one recorded stream)."""
    return import_files(PROVIDER, response_path, request_path)


def importer(args):
    if args.batch_requests or args.batch_results:
        if not (args.batch_requests and args.batch_results) or args.pairs or args.response or args.request:
            raise FieldError("--batch-requests", "give --batch-requests and --batch-results together, and alone")
        return anthropic_batch.join(args.batch_requests, args.batch_results, convert)
    if args.response and not args.request:
        raise FieldError("--request", "is required with --response: the citations point into its documents")
    return run(PROVIDER, args)


def add_parser(sub, common) -> None:
    p = sub.add_parser("anthropic", parents=[common],
                       help="a Messages API request and its response (or stream, or batch) with citations enabled")
    add_exchange_options(p, "request body JSON (or JSON lines, one request per line, paired by position)")
    p.add_argument("--batch-requests", help='Message Batches requests, JSON lines of {"custom_id", "params"}')
    p.add_argument("--batch-results", help="Message Batches results (JSON lines), joined on custom_id")
    p.set_defaults(importer=importer)
