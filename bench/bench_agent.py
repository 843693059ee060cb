#!/usr/bin/env python3
"""The answer pipeline with and without the search-agent fallback, on the bundled golden set
plus the vocabulary-gap questions, with a SCRIPTED model behind the mock transport.

    python bench/bench_agent.py [--max-turns 4] [--budget 0.05] [--model claude-sonnet-4-5]

No network here: generation and the agent are played by scripted models (the generation model
answers from the first packed source; the agent follows sample_data/scripted_agent.py's fixed
policy).  So the figures measure the loop's mechanics: which questions the gate refuses, how
many of those the loop turns into checked answers, whether the gold chunk is among the chunks it
read, its turns, and its cost at the price table from the usage the mock reports.  A live run
(CITECHECK_LIVE=1 pytest -m live) would add what a real model's rephrasing recovers.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_data"))

import scripted_agent  # noqa: E402
from citecheck.checking.checker import CheckOptions, check_answer  # noqa: E402
from citecheck.llm import fake_api  # noqa: E402
from citecheck.pipeline import answering  # noqa: E402
from citecheck.pipeline.assembly import REFUSAL  # noqa: E402
from citecheck.pipeline.retrieval import load_index  # noqa: E402
from citecheck.reports.golden import read_golden  # noqa: E402


def generation(body: dict) -> dict:
    """Scripted generation: the first sentence of source [1], cited, with it as the quote."""
    if body.get("tools"):
        return scripted_agent.reply(body)
    m = re.search(r'<source n="1" id="[^"]*">\n(.*?)\n</source>', body["messages"][0]["content"], re.S)
    first = re.split(r"(?<=[.!?])\s", m.group(1).strip(), maxsplit=1)[0].rstrip(".") if m else ""
    text = f'{first} [1].\nQUOTES:\n[1] "{first}"' if first else REFUSAL
    return fake_api.message(text, use=fake_api.usage(input_tokens=len(json.dumps(body)) // 4, output_tokens=60))


def run(questions, config, index):
    client = fake_api.client(generation)
    rows = []
    for i, q in enumerate(questions):
        a = answering.answer_question(client, index, q.question, f"q-{i}", config, answering.Budget())
        result = check_answer(a, CheckOptions(refusals=(REFUSAL,)))
        rows.append((q, a, result))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--budget", type=float, default=0.05)
    parser.add_argument("--model", default="claude-sonnet-4-5")
    args = parser.parse_args()
    index = load_index(ROOT / "sample_data" / "source")
    golden = [q for q in read_golden(ROOT / "sample_data" / "golden.jsonl")[0] if q.answerable]
    gap = read_golden(ROOT / "sample_data" / "vocabulary_gap.jsonl")[0]
    off = read_golden(ROOT / "sample_data" / "off_corpus.jsonl")[0]
    fixed = answering.PipelineConfig(model=args.model)
    agent = answering.PipelineConfig(model=args.model, agent_fallback=True, agent_max_turns=args.max_turns,
                             agent_budget_usd=args.budget)
    print("Scripted model (no network): figures describe the loop's mechanics, not a real model's skill.\n")
    print("| questions | n | fixed: answered | fixed: refused | agent: answered | gold chunk read "
          "| clean checks | turns / question | cost / question |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, questions in (("golden (answerable)", golden), ("vocabulary gap", gap), ("off-corpus", off)):
        base = run(questions, fixed, index)
        refused = [q for q, a, _ in base if a.refused]
        with_agent = run(refused, agent, index)
        recovered = [(q, a, r) for q, a, r in with_agent if not a.refused]
        gold_read = sum(bool(set(q.chunk_ids) & set(a.extra["agent"]["read"])) for q, a, _ in with_agent)
        gold = f"{gold_read} of {len(refused)}" if any(q.chunk_ids for q in questions) else "n/a"
        clean = sum(r.tally.failed == 0 and r.tally.uncited == 0 for _, _, r in recovered)
        turns = [a.extra["agent"]["turns"] for _, a, _ in with_agent]
        costs = [a.extra["agent"]["cost_usd"] for _, a, _ in with_agent]
        print(f"| {name} | {len(questions)} | {len(questions) - len(refused)} | {len(refused)} | "
              f"{len(recovered)} of {len(refused)} | {gold} | {clean} of {len(recovered)} | "
              f"{statistics.mean(turns) if turns else 0:.1f} | ${statistics.mean(costs) if costs else 0:.4f} |")


if __name__ == "__main__":
    main()
