"""``citecheck ask``, ``run``, ``eval-retrieval`` and ``floor``: the reference answer pipeline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from citecheck.cli.common import EXIT_UNREADABLE, append_answer, positive, price
from citecheck.errors import RecordError
from citecheck.text.terminal import progress_line


def _pipeline_config(args: argparse.Namespace):
    from citecheck.pipeline.answering import PipelineConfig

    return PipelineConfig(model=args.model, shape=args.shape, prompt_version=args.prompt, k=args.k,
                          max_chunks=args.max_chunks, floor=args.floor, min_support=args.min_support,
                          max_tokens=args.max_tokens, max_cost_per_answer=args.max_cost_per_answer,
                          price=args.price, faithfulness=args.faithfulness,
                          faithfulness_threshold=args.faithfulness_threshold, judge_model=args.judge_model,
                          agent_fallback=args.agent_fallback, agent_max_turns=args.agent_max_turns,
                          agent_budget_usd=args.agent_budget_usd)


def cmd_ask(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.llm.client import NoKeyError, make_client
    from citecheck.pipeline.answering import answer_question, plan
    from citecheck.pipeline.retrieval import load_index

    config = _pipeline_config(args)
    index = load_index(args.corpus)
    if args.dry_run:
        out.write(json.dumps(plan(index, args.question, config).to_dict(), ensure_ascii=False, indent=2) + "\n")
        return 0
    try:
        client = make_client()
    except NoKeyError as exc:
        raise exc.instead("or use --dry-run to see the gate and the request") from None
    answer = answer_question(client, index, args.question, args.id or "ask-1", config)
    if args.log:
        append_answer(args.log, answer)
    out.write(answer.answer + "\n")
    err.write(f"gate: {answer.extra['gate']['decision']}; cost ${answer.extra.get('cost_usd', 0):.4f}"
              + (f"; appended to {args.log}" if args.log else "") + "\n")
    return 0


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.contract.log import read_log
    from citecheck.llm.client import NoKeyError, make_client
    from citecheck.pipeline.answering import (
        Budget,
        BudgetExhausted,
        PipelineError,
        answer_question,
        read_questions,
    )
    from citecheck.pipeline.retrieval import load_index

    config = _pipeline_config(args)
    index = load_index(args.corpus)
    questions, unreadable = read_questions(args.questions)
    for e in unreadable:
        err.write(f"questions: skipped {e}\n")
    done = set()
    if Path(args.log).is_file():  # resumable: ids already in the log are not asked (or paid for) again
        done = {a.answer_id for _, a in read_log(args.log) if not isinstance(a, RecordError)}
    todo = [(qid, q) for qid, q in questions if qid not in done]
    try:
        client = make_client() if todo else None
    except NoKeyError as exc:  # (run has no --dry-run: ask has)
        raise exc.instead("citecheck ask QUESTION --corpus DIR --dry-run shows a question's gate and request "
                          "without one") from None
    budget = Budget(args.budget_usd)
    failed = gated = 0
    for n, (qid, question) in enumerate(todo, start=1):
        try:
            answer = answer_question(client, index, question, qid, config, budget)
        except BudgetExhausted as exc:
            err.write(f"\n{exc}\n")
            break
        except PipelineError as exc:
            failed += 1
            err.write(f"\n{qid}: {exc}\n")
            continue
        gated += answer.extra.get("refused_by") == "gate"
        append_answer(args.log, answer)
        progress_line(err, f"[{n}/{len(todo)}] spent ${budget.spent:.4f}"
                      + (f" of ${budget.limit:.2f}" if budget.limit else "") + f", {gated} refused by the gate")
    err.write(f"\n{len(done)} already in {args.log}, {len(todo)} to ask; {budget.calls} API call(s), "
              f"${budget.spent:.4f}; {failed} failed\n")
    return EXIT_UNREADABLE if failed or unreadable else 0


def cmd_eval_retrieval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.pipeline.retrieval import load_index
    from citecheck.reports.golden import evaluate_retrieval, read_golden

    golden, errors = read_golden(args.golden)
    for e in errors:
        err.write(f"golden set: skipped {e}\n")
    index = load_index(args.corpus)
    runs = [(q.question, q.question, [s.chunk.chunk_id for s in index.search(q.question, args.k) if s.chunk.chunk_id])
            for q in golden]  # (the index's chunks all have ids: chunking gives each one)
    result = evaluate_retrieval(golden, runs, args.k)
    if args.format == "json":
        out.write(json.dumps({"index_snapshot": index.snapshot, **result.to_dict()}, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"index {index.snapshot}: {len(index.chunks)} chunks\n")
    for r in result.ranked:
        out.write(f"rank {str(r.rank):<4} {r.question}\n")
    hit, mrr = result.shown()
    out.write(f"hit rate@{args.k}: {hit} ({result.hits} of {result.answerable})   MRR: {mrr}   ("
              f"{result.answerable} answerable questions; "
              f"{result.unanswerable} unanswerable counted apart)\n")
    for m in result.misses:
        out.write(f"missed: {m.question} (wanted {', '.join(m.expected)}; got {', '.join(m.retrieved[:args.k])})\n")
    return 0


def cmd_floor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.pipeline.answering import read_questions
    from citecheck.pipeline.gate import FloorReport, measure_floor
    from citecheck.pipeline.retrieval import load_index
    from citecheck.reports.golden import read_golden

    golden, errors = read_golden(args.golden)
    for e in errors:
        err.write(f"golden set: skipped {e}\n")
    answerable = [q.question for q in golden if q.answerable]
    off_questions, unreadable = read_questions(args.off_corpus)
    for e in unreadable:
        err.write(f"off-corpus questions: skipped {e}\n")
    off = [q for _, q in off_questions]
    off += [q.question for q in golden if not q.answerable] if args.include_unanswerable else []
    report = measure_floor(load_index(args.corpus), answerable, off)
    out.write(f"top BM25 score, golden answerable: {FloorReport.describe(report.golden_scores)}\n")
    out.write(f"top BM25 score, off-corpus:        {FloorReport.describe(report.off_scores)}\n\n")
    out.write(f"{'floor':>7}  {'golden pass':>12}  {'off-corpus refused':>18}\n")
    top_off = max(report.off_scores, default=0.0)
    for c in report.candidates:
        if not args.all and c.floor > top_off + 1e-9 and c.golden_pass < c.golden - 2:
            continue  # past every off-corpus score and losing golden questions: not a contender
        mark = "  <- suggested" if c is report.suggested else ""
        out.write(f"{c.floor:>7.2f}  {c.golden_pass:>5} of {c.golden:<4}  {c.off_refused:>9} of {c.off:<6}{mark}\n")
    if report.suggested:
        s = report.suggested
        out.write(f"\nsuggested floor {s.floor:.2f}: {s.golden_pass} of {s.golden} golden questions pass, "
                  f"{s.off_refused} of {s.off} off-corpus questions refuse\n")
    return 0


def _add_pipeline_options(p: argparse.ArgumentParser) -> None:
    from citecheck.llm.pricing import DEFAULT_MODEL
    from citecheck.pipeline.gate import DEFAULT_MIN_SUPPORT, SAMPLE_FLOOR

    p.add_argument("--corpus", required=True, help="folder of .md/.txt documents to retrieve from")
    p.add_argument("--shape", choices=["markers", "citations"], default="markers",
                   help="numbered sources with [n] markers, or the Citations API (default markers)")
    p.add_argument("--prompt", help="prompt version (markers: answer.v1, answer.v2; citations: answer-citations.v1)")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--k", type=positive, default=8, help="chunks retrieved (default 8)")
    p.add_argument("--max-chunks", type=int, default=5, help="chunks packed into the prompt (default 5)")
    p.add_argument("--floor", type=float, default=SAMPLE_FLOOR,
                   help=f"support floor, a BM25 score (default {SAMPLE_FLOOR}, measured on the sample corpus)")
    p.add_argument("--min-support", type=int, default=DEFAULT_MIN_SUPPORT,
                   help="chunks that must reach the floor, else refuse without a call")
    p.add_argument("--max-tokens", type=int, default=800)
    p.add_argument("--max-cost-per-answer", type=float, default=0.05, metavar="USD")
    p.add_argument("--price", type=price, metavar="IN,OUT", help="USD per million tokens, for a model not in the table")
    g = p.add_argument_group("after generation: claim-level faithfulness (docs/pipeline.md)")
    g.add_argument("--faithfulness", action="store_true",
                   help="split each answer into claims, judge them, and withhold answers below the threshold")
    g.add_argument("--faithfulness-threshold", type=_share, default=0.8, metavar="SCORE",
                   help="withhold an answer whose supported share of claims is below this (default 0.8; a domain "
                        "choice: above 0.9 for legal or medical answers, 0.7 for general questions)")
    g.add_argument("--judge-model", default="claude-haiku-4-5", help="model that splits and judges claims")
    a = p.add_argument_group("when the gate refuses: a capped search agent (docs/pipeline.md)")
    a.add_argument("--agent-fallback", action="store_true",
                   help="let Claude search and read the index when the support-floor gate refuses")
    a.add_argument("--agent-max-turns", type=int, default=4, metavar="N", help="calls per question (default 4)")
    a.add_argument("--agent-budget-usd", type=float, default=0.05, metavar="USD",
                   help="spend per question, checked before each call from the usage returned (default 0.05)")


def _share(value: str) -> float:
    x = float(value)
    if not 0 <= x <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return x


def register(sub: argparse._SubParsersAction) -> None:
    ask = sub.add_parser("ask", help="answer one question with the reference pipeline")
    ask.add_argument("question")
    ask.add_argument("--log", help="append the log line here")
    ask.add_argument("--id", help="answer id for the log line (default ask-1)")
    ask.add_argument("--dry-run", action="store_true", help="print the gate decision and the request; call nothing")
    _add_pipeline_options(ask)
    ask.set_defaults(func=cmd_ask)

    run = sub.add_parser("run", help="answer a file of questions, appending to a log (resumable)")
    run.add_argument("--questions", required=True, help="JSONL (question, optional id) or one question per line")
    run.add_argument("--log", required=True, help="log to append to; ids already in it are skipped")
    run.add_argument("--budget-usd", type=float, help="stop before a call that could take the run over this")
    _add_pipeline_options(run)
    run.set_defaults(func=cmd_run)

    ev = sub.add_parser("eval-retrieval", help="hit rate at k and MRR of BM25 retrieval over a golden set")
    ev.add_argument("--corpus", required=True)
    ev.add_argument("--golden", required=True)
    ev.add_argument("--k", type=positive, default=5)
    ev.add_argument("--format", choices=["text", "json"], default="text")
    ev.set_defaults(func=cmd_eval_retrieval)

    fl = sub.add_parser("floor", help="measure the support floor from golden and off-corpus questions")
    fl.add_argument("--corpus", required=True)
    fl.add_argument("--golden", required=True, help="golden set; its answerable questions should pass")
    fl.add_argument("--off-corpus", required=True, help="questions the corpus cannot answer (JSONL or lines)")
    fl.add_argument("--include-unanswerable", action="store_true",
                    help="count the golden set's unanswerable questions as off-corpus too")
    fl.add_argument("--all", action="store_true", help="list every candidate floor, not only the contenders")
    fl.set_defaults(func=cmd_floor)
