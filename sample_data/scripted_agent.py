"""A scripted stand-in for Claude as the search agent (no network here): it follows a fixed
policy, so figures measured with it describe the agent loop's mechanics (caps, trace, citation
contract, costs at the price table), not how well a real model rephrases.

Policy, one step per call: 1. search the question as asked; 2. search again with the question
rewritten through ``THESAURUS`` (the documents' words for the asker's words); 3. read the first
passage the second search returned; 4. answer with that passage's first sentence, cited as [1]
with it as the quote, when the passage shares a content word (5 letters or more) with the
question or its rewrite; otherwise reply with the exact refusal.  Usage is reported as about 4 characters a token of the request, 60 output
tokens a turn.
"""

from __future__ import annotations

import json
import re

# Asker's words -> the documents' words (what a model that reads near misses learns to search for).
THESAURUS = {
    "vacation": "earned leave days per year", "holidays": "earned leave carries forward",
    "roll over": "carried forward", "maternity": "parental leave weeks", "money back": "refunds issued",
    "cancelling": "annual plans cancelled refund", "overdue": "late payments interest", "bill": "invoices",
    "clickstream": "raw events kept months", "hack": "SEV-1 incident page incident commander",
    "leak": "breach affected customers notified", "food": "meal per diem", "okta": "single sign-on SAML",
    "cheapest tier": "Starter plan costs", "long-haul": "flights premium economy", "wine": "alcohol reimbursed",
    "tongues": "languages dashboards shown",
}


def rephrase(question: str) -> str:
    text = question.lower()
    extra = [words for key, words in THESAURUS.items() if key in text]
    return " ".join(extra) or question


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9-]+", text.lower()) if len(w) >= 5}


def _question(body: dict) -> str:
    first = body["messages"][0]["content"]
    m = re.search(r"<(question_[0-9a-f]+)>\n(.*?)\n</\1>", first, re.S)
    return m.group(2) if m else first


def _last_result(body: dict) -> str:
    for block in reversed(body["messages"][-1]["content"]):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            return block.get("content") or ""
    return ""


def tool_use(name: str, args: dict, turn: int) -> dict:
    return {"type": "tool_use", "id": f"toolu_scripted_{turn:02d}", "name": name, "input": args}


def reply(body: dict) -> dict:
    """The scripted agent's next message for a Messages API request body."""
    from citecheck.llm import fake_api as M

    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    use = M.usage(input_tokens=len(json.dumps(body)) // 4, output_tokens=60)
    question = _question(body)
    if turn == 0:
        return M.message([tool_use("search", {"query": question}, turn)], stop_reason="tool_use", use=use)
    if turn == 1:
        return M.message([tool_use("search", {"query": rephrase(question)}, turn)], stop_reason="tool_use", use=use)
    if turn == 2:
        first = _last_result(body).split("\n")[0].split(" | ")[0].strip()
        return M.message([tool_use("read", {"chunk_id": first}, turn)], stop_reason="tool_use", use=use)
    source = _last_result(body)
    text = source.split("\n", 1)[1] if "\n" in source else ""
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    wanted = _content(question) | _content(rephrase(question))
    if not sentence or not wanted & _content(text):
        return M.message("I cannot answer from the sources.", use=use)
    return M.message(f"{sentence.rstrip('.')} [1].\nQUOTES:\n[1] \"{sentence.rstrip('.')}\"", use=use)
