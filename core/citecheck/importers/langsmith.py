"""``citecheck import langsmith``: LangSmith runs to answers.

A file holds runs as the LangSmith SDK (``Client.list_runs``, ``Run.dict()``) and API give them:
one run per line, a JSON list of runs, one run, or the API's ``{"runs": [...]}`` page.  A run has
``id``, ``trace_id``, ``parent_run_id``, ``dotted_order``, ``run_type`` (chain, llm, retriever, tool,
prompt, parser, embedding), ``name``, ``start_time``/``end_time`` (ISO 8601, UTC when no zone is
written, or epoch numbers), ``inputs``, ``outputs``, ``extra`` (``metadata``,
``invocation_params``), ``error``, and may nest its children in ``child_runs`` (a run tree);
flat runs and run trees are read alike.

The mapping to spans (then :mod:`citecheck.importers.traces` makes one answer per trace):

- a run is a span; its trace is ``trace_id``, else the root named first in ``dotted_order``, else
  its parent's trace (flat runs of one file), else itself; its parent is ``parent_run_id`` or the
  run whose ``child_runs`` hold it;
- ``run_type`` gives the kind: chain is CHAIN, llm is LLM, retriever RETRIEVER, tool TOOL,
  embedding EMBEDDING, prompt PROMPT;
- ``inputs``/``outputs`` become ``input.value``/``output.value`` (JSON), LangChain's serialised
  messages and documents made plain (:func:`citecheck.importers.trace_exports.plain`): the root
  chain's ``outputs.output``/``outputs.answer``/messages are the final answer;
- an llm run's ``inputs.messages`` (or ``prompts``) are ``llm.input_messages``, its
  ``outputs.generations[0]`` (or ``choices``, or a message) ``llm.output_messages``; the model is
  ``extra.invocation_params.model``/``model_name``, ``extra.metadata.ls_model_name`` or
  ``outputs.llm_output.model_name``;
- a retriever run's ``outputs.documents`` (``{page_content, metadata, type: "Document"}``) are
  ``retrieval.documents``; a tool run whose output holds documents (a search tool's list of
  url/title/content, possibly as JSON text inside a tool message) has them as its output;
- ``extra.metadata`` (a ``prompt_version`` in it) is ``metadata``; ``error`` marks the span failed.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from typing import Any

from citecheck.errors import FieldError, RecordError
from citecheck.importers.spans import Span, other_format
from citecheck.importers.trace_exports import (
    as_object,
    documents_in,
    epoch_nanos,
    json_text,
    messages,
    plain,
    unwrap,
    with_scores,
)

KINDS = {"chain": "CHAIN", "llm": "LLM", "retriever": "RETRIEVER", "tool": "TOOL", "embedding": "EMBEDDING",
         "prompt": "PROMPT", "parser": "CHAIN"}
_MAX_RUNS = 100_000  # runs in one record's tree
# dotted_order: "20240611T170312345678Zb2c3...": each segment a time and a run id; the first is the root's
_DOTTED = re.compile(r"\d{8}T\d{6,}Z([0-9a-fA-F-]{32,36})")


def _id(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _object(run: dict, key: str) -> dict:
    return as_object(unwrap(run.get(key)))


def _llm_attributes(run: dict, inputs: dict, outputs: dict) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    asked = messages(inputs.get("messages"))
    if not asked and isinstance(inputs.get("prompts"), list):
        asked = [{"message": {"role": "user", "content": p}} for p in inputs["prompts"] if isinstance(p, str)]
    if asked:
        attributes["llm.input_messages"] = asked
    answered = []
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0] if isinstance(generations[0], list) else generations
        for generation in first:
            if not isinstance(generation, dict):
                continue
            message = plain(generation.get("message"))
            text = message.get("content") if isinstance(message, dict) else None
            if not text and isinstance(generation.get("text"), str):
                text = generation["text"]
            answered.append({"message": {"role": "assistant", "content": text}})
    elif isinstance(outputs.get("choices"), list):
        answered = messages([c.get("message") for c in outputs["choices"] if isinstance(c, dict)])
    else:
        answered = messages(outputs.get("messages") or outputs.get("output") or outputs)
    if answered:
        attributes["llm.output_messages"] = answered
    extra = _object(run, "extra")
    params, meta = as_object(extra.get("invocation_params")), as_object(extra.get("metadata"))
    llm_output = as_object(outputs.get("llm_output"))
    for model in (params.get("model"), params.get("model_name"), meta.get("ls_model_name"),
                  llm_output.get("model_name"), outputs.get("model"), inputs.get("model")):
        if isinstance(model, str) and model:
            attributes["llm.model_name"] = model
            break
    return attributes


def run_span(run: dict, trace_id: str, parent: str | None, where: str, prefix: str) -> Span:
    """One run as a span (its trace and parent already found)."""
    run_id = _id(run.get("id"))
    if run_id is None:
        raise FieldError(f"{prefix}id", "is required (the run's id)" + other_format(run, "langsmith"))
    run_type = run.get("run_type")
    if not isinstance(run_type, str) or not run_type:
        raise FieldError(f"{prefix}run_type", f"is required: the run's type ({', '.join(sorted(KINDS))}...), "
                                              f"got {str(run_type)[:40]!r}" + other_format(run, "langsmith"))
    kind = KINDS.get(run_type.lower(), "")  # (a type this citecheck does not know: a span of no kind)
    inputs, outputs = plain(_object(run, "inputs")), plain(_object(run, "outputs"))
    attributes: dict[str, Any] = {"openinference.span.kind": kind} if kind else {}
    if inputs:
        attributes["input.value"] = json_text(inputs)
    if outputs:
        attributes["output.value"] = json_text(outputs)
    if kind == "LLM":
        attributes.update(_llm_attributes(run, inputs, outputs))
    elif kind == "RETRIEVER":
        found = outputs.get("documents")
        found = found if isinstance(found, list) else documents_in(outputs)
        attributes["retrieval.documents"] = with_scores([d for d in found if isinstance(d, dict)])
    elif kind == "TOOL" and (found := documents_in(outputs)):
        attributes["output.value"] = json_text(found)  # a search tool's results, read as such
    meta = _object(run, "extra").get("metadata")
    if isinstance(meta, dict) and meta:
        attributes["metadata"] = json_text(meta)
    if isinstance(run.get("tags"), list) and run["tags"]:
        attributes["tag.tags"] = [str(t) for t in run["tags"]]
    start = epoch_nanos(run.get("start_time"), f"{prefix}start_time") or 0
    end = epoch_nanos(run.get("end_time"), f"{prefix}end_time")
    error = run.get("error")
    name = run.get("name")
    return Span(trace_id, run_id, parent, name if isinstance(name, str) else "", kind, start, end, attributes,
                where, {}, error if isinstance(error, str) and error else ("error" if error else None))


def _walk(record: Any, prefix: str) -> Iterator[tuple[dict, str, str | None, str | None] | FieldError]:
    """(run, its field prefix, the trace id of the run holding it, that run's id) of a run tree,
    parents before children, without recursion."""
    stack: list[tuple[Any, str, str | None, str | None]] = [(record, prefix, None, None)]
    seen = 0
    while stack:
        run, here, trace_id, parent = stack.pop()
        seen += 1
        if seen > _MAX_RUNS:
            yield FieldError(here.rstrip("."), f"more than {_MAX_RUNS} runs in one record: the rest are not read")
            return
        if not isinstance(run, dict):
            yield FieldError(here.rstrip(".") or "(record)", "expected a LangSmith run object (id, run_type...)")
            continue
        yield run, here, trace_id, parent
        children = run.get("child_runs")
        if isinstance(children, list):
            own = _id(run.get("id"))
            inherited = _id(run.get("trace_id")) or trace_id or _root_of(run) or own
            for i in reversed(range(len(children))):
                stack.append((children[i], f"{here}child_runs[{i}].", inherited, own))


def _root_of(run: dict) -> str | None:
    dotted = run.get("dotted_order")
    match = _DOTTED.match(dotted) if isinstance(dotted, str) else None
    return match.group(1) if match else None


def read_langsmith(path: str) -> Iterator[Span | RecordError]:
    """The spans of a LangSmith runs file (see the module); a run that cannot be read is a
    :class:`RecordError` naming its file, record and field, and the others are still read."""
    from citecheck.importers import read_records

    found: list[tuple[int, dict, str, str | None, str | None]] = []
    for position, record in read_records(path):
        if isinstance(record, RecordError):
            yield record
            continue
        runs = record.get("runs") if isinstance(record, dict) and "id" not in record else None
        tops = [(r, f"runs[{i}].") for i, r in enumerate(runs)] if isinstance(runs, list) else [(record, "")]
        for top, prefix in tops:
            for item in _walk(top, prefix):
                if isinstance(item, FieldError):
                    yield RecordError(path, position, item.field, item.message)
                else:
                    found.append((position, *item))
    # a flat run without trace_id or dotted_order is in its parent's trace (parents come in any order)
    parent_of = {rid: _id(run.get("parent_run_id")) or parent for _, run, _, _, parent in found
                 if (rid := _id(run.get("id")))}
    trace_of = {rid: t for _, run, _, held_in, _ in found if (rid := _id(run.get("id")))
                and (t := _id(run.get("trace_id")) or held_in or _root_of(run))}
    for position, run, prefix, _, parent in found:
        run_id = _id(run.get("id"))
        trace_id = trace_of.get(run_id or "")
        hops, at = 0, run_id
        while trace_id is None and at is not None and hops < 1000:  # up the parents to a known trace or the root
            up = parent_of.get(at)
            trace_id = trace_of.get(up or "") if up else at
            at, hops = up, hops + 1
        try:
            yield run_span(run, trace_id or run_id or "", _id(run.get("parent_run_id")) or parent,
                           f"{path}:{position}", prefix)
        except FieldError as exc:
            yield RecordError(path, position, exc.field, exc.message)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from citecheck.importers import otel

    otel.add_trace_parser(sub, common, "langsmith", "LangSmith runs (flat or run trees with child_runs)",
                          "LangSmith run JSON: one run per line, a JSON list of runs, a run tree, or the "
                          "API's {\"runs\": [...]} page", read_langsmith)
