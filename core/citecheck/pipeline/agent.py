"""A capped search agent for questions the support-floor gate refuses.

When the fixed pipeline refuses before any call, Claude may try with two tools over the same BM25
index: ``search(query)`` (chunk ids, heading paths, short snippets) and ``read(chunk_id)`` (a
chunk's full text, numbered as a source in the order read).  It may rephrase and search again.

Caps are checked before every call: at most ``agent_max_turns`` calls and, from the usage each
call returns, at most ``agent_budget_usd`` per question (the run's budget applies as well).  When
a cap is reached, the answer is the exact refusal.  The final answer keeps the citation contract:
its markers number the chunks it read, which become the answer's chunks in the log, so a marker
for a chunk it never read is out of range and ``citecheck check`` fails it like any other.
Every query, every chunk read, the turns and the cost go into the log line's ``agent`` field.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from citecheck.contract.log import Answer, Chunk, Citation
from citecheck.llm.pricing import Price, estimate_tokens, price_for
from citecheck.llm.prompts import Tool, load_prompt, system_blocks
from citecheck.pipeline import assembly
from citecheck.pipeline.retrieval import Index

AGENT_PROMPT = "agent.v1"
SEARCH_RESULTS = 5
SNIPPET_CHARS = 200
MAX_QUERY_CHARS = 500
TOOLS: list[Tool] = [
    {"name": "search", "description": "Search the documents. Returns up to 5 passages: id, heading path, snippet.",
     "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
    {"name": "read", "description": "Read one passage in full by its id; it becomes a numbered source.",
     "input_schema": {"type": "object", "properties": {"chunk_id": {"type": "string"}}, "required": ["chunk_id"]}},
]


@dataclass
class Trace:
    """What the agent did for one question (the log line's ``agent`` field)."""

    queries: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)  # chunk ids, in the order read (source numbers 1..n)
    turns: int = 0
    cost_usd: float = 0.0
    stopped: str | None = None  # why it gave up: turns, budget, api error
    tool_errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"version": 1, "prompt_version": AGENT_PROMPT, "queries": self.queries, "read": self.read,
                "turns": self.turns, "cost_usd": round(self.cost_usd, 6), "stopped": self.stopped,
                "tool_errors": self.tool_errors}


def heading_path(chunk: Chunk) -> str:
    return " / ".join(x for x in (chunk.title, chunk.section) if x)


class Tools:
    """The two tools over one index, and the chunks read so far (and their ids, in the same order)."""

    def __init__(self, index: Index):
        self.index = index
        self.by_id = {c.chunk_id: c for c in index.chunks if c.chunk_id}
        self.read: list[Chunk] = []
        self.read_ids: list[str] = []

    def search(self, query: str) -> str:
        hits = self.index.search(query[:MAX_QUERY_CHARS], SEARCH_RESULTS)
        if not hits:
            return "no passage matches"
        return "\n".join(f"{s.chunk.chunk_id} | {heading_path(s.chunk)} | "
                         f"{' '.join(s.chunk.text.split())[:SNIPPET_CHARS]}" for s in hits)

    def read_chunk(self, chunk_id: str) -> tuple[str, bool]:
        chunk = self.by_id.get(chunk_id)
        if chunk is None:
            return f"unknown chunk id {chunk_id[:100]!r}: use an id returned by search", True
        if chunk_id not in self.read_ids:
            self.read.append(chunk)
            self.read_ids.append(chunk_id)
        number = self.read_ids.index(chunk_id) + 1
        return f"Source [{number}] ({chunk_id}, {heading_path(chunk)}):\n{chunk.text}", False


def agent_request(messages: list, model: str, max_tokens: int) -> dict:
    prompt = load_prompt(AGENT_PROMPT)
    return {"model": model, "max_tokens": max_tokens, "system": system_blocks(prompt.text, model, TOOLS),
            "tools": TOOLS, "messages": messages}


def _worst(request: dict, price: Price) -> float:
    return price.worst_case(estimate_tokens(json.dumps(request["system"]) + json.dumps(request["messages"])
                                            + json.dumps(request["tools"])) + 600, request["max_tokens"])


def run(client: Any, index: Index, question: str, model: str, max_turns: int, budget_usd: float,
        price: Price, run_budget: Any = None, max_tokens: int = 800) -> tuple[str | None, Tools, Trace]:
    """The agent's final reply text (None when a cap or an error stopped it), its tools (the
    chunks it read) and its trace."""
    tag = f"question_{secrets.token_hex(6)}"
    messages: list = [{"role": "user", "content": f"<{tag}>\n{question}\n</{tag}>\nAnswer the question in <{tag}>."}]
    tools, trace = Tools(index), Trace()
    while True:
        if trace.turns >= max_turns:
            trace.stopped = f"turns: {max_turns} calls made without a final answer"
            return None, tools, trace
        request = agent_request(messages, model, max_tokens)
        worst = _worst(request, price)
        if trace.cost_usd + worst > budget_usd:
            trace.stopped = (f"budget: ${trace.cost_usd:.4f} spent of ${budget_usd:.4f}; the next call "
                             f"could cost up to ${worst:.4f}")
            return None, tools, trace
        if run_budget is not None:
            run_budget.check(worst)  # BudgetExhausted stops the whole run, as for any call
        try:
            response = client.messages.create(**request)
        except Exception as exc:  # the SDK has already retried
            status = getattr(exc, "status_code", None)
            trace.stopped = f"api error ({type(exc).__name__}{f', HTTP {status}' if status else ''})"
            return None, tools, trace
        body = response if isinstance(response, dict) else response.model_dump(mode="json", exclude_none=True)
        cost = price.cost(body.get("usage") or {})
        trace.turns += 1
        trace.cost_usd += cost
        if run_budget is not None:
            run_budget.add(cost)
        content = body.get("content") or []
        calls = [b for b in content if b.get("type") == "tool_use"]
        if not calls:
            return "".join(b.get("text", "") for b in content if b.get("type") == "text"), tools, trace
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [_tool_result(tools, trace, call) for call in calls]})


def _tool_result(tools: Tools, trace: Trace, call: dict) -> dict:
    given = call.get("input")
    args = given if isinstance(given, dict) else {}
    name = call.get("name")
    error = False
    if name == "search" and isinstance(args.get("query"), str) and args["query"].strip():
        trace.queries.append(args["query"][:MAX_QUERY_CHARS])
        text = tools.search(args["query"])
    elif name == "read" and isinstance(args.get("chunk_id"), str):
        text, error = tools.read_chunk(args["chunk_id"])
        trace.read = list(tools.read_ids)
    else:
        text, error = f"bad tool call: {str(name)[:50]!r} with {json.dumps(args)[:200]}", True
    if error:
        trace.tool_errors.append(text)
    out = {"type": "tool_result", "tool_use_id": call.get("id", ""), "content": text}
    if error:
        out["is_error"] = True
    return out


def try_agent(client: Any, index: Index, refused: Answer, config: Any, budget: Any) -> Answer:
    """The log line for a question the gate refused, after the agent has tried: its answer with
    the chunks it read, or the exact refusal when it could not (with its trace either way)."""
    price = price_for(config.model, config.price)
    text, tools, trace = run(client, index, refused.question, config.model, config.agent_max_turns,
                             config.agent_budget_usd, price, budget, config.max_tokens)
    extra = {**refused.extra, "agent": trace.to_dict(), "cost_usd": round(trace.cost_usd, 6)}
    if text is None:
        return dataclasses.replace(refused, extra={**extra, "refused_by": "agent_cap" if trace.stopped and
                                                   not trace.stopped.startswith("api") else "agent_error"})
    reply = assembly.parse_markers_reply(text)
    refusal = assembly.is_refusal(reply.answer)
    extra.pop("refused_by", None)
    extra["answered_by"] = "agent"
    if refusal:
        extra["refused_by"] = "agent"
    citations = () if refusal else tuple(Citation("marker", marker=n, quote=q) for n, q in reply.quotes)
    return dataclasses.replace(refused, answer=assembly.REFUSAL if refusal else reply.answer, chunks=tuple(tools.read),
                               citations=citations, refused=refusal, extra=extra)
