"""Batch budgets: each item reserves its counted input tokens plus max_tokens at the batch price,
and reservations are replaced by reported costs as batches return, so a budget admits the items
it can pay for instead of a third of them."""

from __future__ import annotations

import json

import httpx2 as httpx
import pytest
from citecheck.judging.judges import ClaudeJudge, JudgeItem

INPUT, OUTPUT, MAX_TOKENS = 700, 60, 300  # Haiku 4.5: $1 / $5 per million, halved in batches
RESERVE = (INPUT * 1 + MAX_TOKENS * 5) / 2 / 1e6      # 0.0011
ACTUAL = (INPUT * 1 + OUTPUT * 5) / 2 / 1e6           # 0.0005


def items(n: int) -> list[JudgeItem]:
    return [JudgeItem(f"a{i}#s0#c0", "q?", f"Sentence {i}.", "", f"Chunk text {i}.", f"fp{i}") for i in range(n)]


def batch_api(log: list, count_ok: bool = True) -> httpx.Client:
    """Token counting and Message Batches, shaped as the API sends them; each batch ends at once."""
    batches: dict[str, list[dict]] = {}

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        log.append((request.method, path))
        if path == "/v1/messages/count_tokens":
            if not count_ok:
                return httpx.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": "no"}})
            return httpx.Response(200, json={"input_tokens": INPUT})
        if request.method == "POST" and path == "/v1/messages/batches":
            batch_id = f"msgbatch_{len(batches) + 1:02d}"
            batches[batch_id] = json.loads(request.content)["requests"]
            return httpx.Response(200, json=_batch(batch_id, "ended"))
        if path.endswith("/results"):
            batch_id = path.split("/")[-2]
            lines = [json.dumps({"custom_id": r["custom_id"], "result": {"type": "succeeded", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "record_verdict",
                             "input": {"verdict": "supported", "rationale": "ok"}}],
                "stop_reason": "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": INPUT, "output_tokens": OUTPUT}}}}) for r in batches[batch_id]]
            return httpx.Response(200, text="\n".join(lines), headers={"content-type": "application/x-jsonl"})
        if path.startswith("/v1/messages/batches/"):
            return httpx.Response(200, json=_batch(path.split("/")[-1], "ended"))
        return httpx.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": path}})

    return httpx.Client(transport=httpx.MockTransport(handle))


def _batch(batch_id: str, status: str) -> dict:
    return {"id": batch_id, "type": "message_batch", "processing_status": status,
            "request_counts": {"processing": 0, "succeeded": 1, "errored": 0, "canceled": 0, "expired": 0},
            "created_at": "2026-12-01T00:00:00Z", "expires_at": "2026-12-02T00:00:00Z",
            "ended_at": "2026-12-01T00:05:00Z", "cancel_initiated_at": None, "archived_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/{batch_id}/results"}


def judge(log: list, budget: float, count_ok: bool = True) -> ClaudeJudge:
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-test-not-a-key", max_retries=0, http_client=batch_api(log, count_ok))
    return ClaudeJudge(client, model="claude-haiku-4-5", max_cost_usd=budget, max_tokens=MAX_TOKENS)


def test_reservations_come_from_counted_tokens_and_are_released_as_batches_return():
    log: list = []
    j = judge(log, budget=0.0035)
    from citecheck.judging.judges import Progress

    progress = Progress(total=10)
    out = j.judge_batch(items(10), poll_seconds=0, progress=progress, sleep=lambda s: None)
    # Up front, 3 reservations of $0.0011 fit in $0.0035; each round's real cost ($0.0005 an item)
    # frees room for more: 3, then 1, then 1 more ($0.0025 spent, $0.0010 left < $0.0011).
    assert len(out) == 5 and progress.rounds == 3
    assert progress.spent == pytest.approx(5 * ACTUAL) and progress.spent <= 0.0035
    assert ("POST", "/v1/messages/count_tokens") in log
    assert "5 item(s) left" in progress.stopped
    assert all(v.verdict == "supported" for v in out)


def test_without_token_counting_the_documented_bound_is_reserved():
    log: list = []
    j = judge(log, budget=1.0, count_ok=False)
    from citecheck.judging.judges import judge_request

    request = judge_request(items(1)[0], j.prompt, j.model, MAX_TOKENS)
    bound = j.input_tokens(request)
    text = request["system"][0]["text"] + json.dumps(request["messages"]) + json.dumps(request["tools"])
    assert bound == len(text) // 3 + 16 + 600
    out = j.judge_batch(items(4), poll_seconds=0, sleep=lambda s: None)
    assert len(out) == 4  # a generous budget admits everything in one round
