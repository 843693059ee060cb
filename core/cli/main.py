"""The ``citecheck`` command line.

Exit codes: 0 all good; 1 the ``--max-failure-rate`` gate failed; 2 bad usage or a file that
cannot be opened; 4 some records were unreadable (added to 1 when both happen, giving 5).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from .. import __version__
from ..checking.checker import DEFAULT_REFUSAL, CheckOptions, check_files
from ..contract.corpus import Corpus
from ..contract.errors import CitecheckError, RecordError
from ..contract.log import dumps
from ..reports.check_report import (
    Summary,
    answer_record,
    answer_text,
    error_record,
    summary_record,
    summary_text,
)

EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 4


def _json_line(obj: dict, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False))
    out.write("\n")


def _check_options(args: argparse.Namespace, err: TextIO) -> CheckOptions | None:
    """The checker's options from ``check``/``report`` arguments; None (said on ``err``) when a log is missing."""
    for path in args.logs:
        if not Path(path).is_file():
            err.write(f"citecheck {args.command}: {path}: no such file\n")
            return None
    corpus = Corpus(args.corpus) if args.corpus else None
    return CheckOptions(casefold=args.casefold, refusals=tuple(args.refusal or [DEFAULT_REFUSAL]), corpus=corpus)


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    options = _check_options(args, err)
    if options is None:
        return EXIT_USAGE
    summary = Summary()
    as_json = args.format == "json"
    for file, line, item in check_files(args.logs, options):
        if isinstance(item, RecordError):
            summary.add_error(item)
            if as_json:
                _json_line(error_record(item), out)
            err.write(f"unreadable: {item}\n")
            continue
        summary.add(item)
        if as_json:
            _json_line(answer_record(item, file, line), out)
        elif not args.quiet or not item.ok:
            out.write("\n".join(answer_text(item, file, line)) + "\n")
    if as_json:
        _json_line(summary_record(summary), out)
    else:
        out.write("\n".join(summary_text(summary)) + "\n")
    code = 0
    rate = summary.failure_rate
    if args.max_failure_rate is not None and rate is not None and rate > args.max_failure_rate:
        err.write(f"citation failure rate {rate:.4f} is above --max-failure-rate {args.max_failure_rate}\n")
        code |= EXIT_GATE
    if summary.unreadable_lines:
        err.write(f"{summary.unreadable_lines} unreadable line(s); see above\n")
        code |= EXIT_UNREADABLE
    return code


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..importers import run_importer

    args.err = err
    target: TextIO = open(args.out, "w", encoding="utf-8", newline="\n") if args.out else out
    written = errors = 0
    try:
        for item in run_importer(args):
            if isinstance(item, RecordError):
                errors += 1
                err.write(f"skipped: {item}\n")
            else:
                target.write(dumps(item) + "\n")
                written += 1
    finally:
        if args.out:
            target.close()
    err.write(f"imported {written} answer(s)" + (f", skipped {errors} malformed record(s)" if errors else "") + "\n")
    return EXIT_UNREADABLE if errors else 0


def cmd_labels_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..review import dataset, export, labels

    records, warnings = labels.read(args.labels)
    for w in warnings:
        err.write(f"warning: {w}\n")
    data = dataset.load([Path(p) for p in args.log], Path(args.corpus) if args.corpus else None)
    for e in data.errors:
        err.write(f"unreadable: {e}\n")
    text = (export.to_csv if args.format == "csv" else export.to_jsonl)(export.rows(data, records))
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        out.write(text)
    return EXIT_UNREADABLE if data.errors else 0


def cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..reports import failures as overview
    from ..reports import figures
    from ..reports.golden import read_golden
    from ..review import labels

    options = _check_options(args, err)
    if options is None:
        return EXIT_USAGE
    golden = None
    if args.golden:
        golden, golden_errors = read_golden(args.golden)
        for e in golden_errors:
            err.write(f"golden set: skipped {e}\n")
    current = None
    if args.labels:
        records, warnings = labels.read(args.labels)
        for w in warnings:
            err.write(f"warning: {w}\n")
        current = labels.latest(records)
    unreadable = 0
    runs: list[tuple[str, str, list[str]]] = []

    def checked():
        nonlocal unreadable
        for file, line, item in check_files(args.logs, options):
            if isinstance(item, RecordError):
                unreadable += 1
                err.write(f"unreadable: {item}\n")
                continue
            if golden is not None:
                runs.append(figures.retrieval_run(item))
            yield file, line, item

    table = figures.answer_table(checked(), current)
    report = overview.build(table, golden, runs, args.k, unreadable)
    if args.format == "json":
        out.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    elif args.format == "csv":
        out.write(report.to_csv())
    else:
        out.write(report.to_text())
    return EXIT_UNREADABLE if unreadable else 0


def _pipeline_config(args: argparse.Namespace):
    from ..pipeline.answering import PipelineConfig

    return PipelineConfig(model=args.model, shape=args.shape, prompt_version=args.prompt, k=args.k,
                          max_chunks=args.max_chunks, floor=args.floor, min_support=args.min_support,
                          max_tokens=args.max_tokens, max_cost_per_answer=args.max_cost_per_answer,
                          price=args.price)


def _append(path: str, answer) -> None:
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(dumps(answer) + "\n")


def cmd_ask(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..pipeline.answering import answer_question, make_client, plan
    from ..pipeline.retrieval import load_index

    config = _pipeline_config(args)
    index = load_index(args.corpus)
    if args.dry_run:
        out.write(json.dumps(plan(index, args.question, config).to_dict(), ensure_ascii=False, indent=2) + "\n")
        return 0
    answer = answer_question(make_client(), index, args.question, args.id or "ask-1", config)
    if args.log:
        _append(args.log, answer)
    out.write(answer.answer + "\n")
    err.write(f"gate: {answer.extra['gate']['decision']}; cost ${answer.extra.get('cost_usd', 0):.4f}"
              + (f"; appended to {args.log}" if args.log else "") + "\n")
    return 0


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..contract.log import read_log
    from ..pipeline.answering import (
        Budget,
        BudgetExhausted,
        PipelineError,
        answer_question,
        make_client,
        read_questions,
    )
    from ..pipeline.retrieval import load_index

    config = _pipeline_config(args)
    index = load_index(args.corpus)
    questions = read_questions(args.questions)
    done = set()
    if Path(args.log).is_file():  # resumable: ids already in the log are not asked (or paid for) again
        done = {a.answer_id for _, a in read_log(args.log) if not isinstance(a, RecordError)}
    todo = [(qid, q) for qid, q in questions if qid not in done]
    client = make_client() if todo else None
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
        _append(args.log, answer)
        err.write(f"\r[{n}/{len(todo)}] spent ${budget.spent:.4f}" + (f" of ${budget.limit:.2f}" if budget.limit else "")
                  + f", {gated} refused by the gate")
    err.write(f"\n{len(done)} already in {args.log}, {len(todo)} to ask; {budget.calls} API call(s), "
              f"${budget.spent:.4f}; {failed} failed\n")
    return EXIT_UNREADABLE if failed else 0


def cmd_eval_retrieval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..pipeline.retrieval import load_index
    from ..reports.golden import evaluate_retrieval, read_golden

    golden, errors = read_golden(args.golden)
    for e in errors:
        err.write(f"golden set: skipped {e}\n")
    index = load_index(args.corpus)
    runs = [(q.question, q.question, [s.chunk.chunk_id for s in index.search(q.question, args.k)]) for q in golden]
    result = evaluate_retrieval(golden, runs, args.k)
    if args.format == "json":
        out.write(json.dumps({"index_snapshot": index.snapshot, **result.to_dict()}, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"index {index.snapshot}: {len(index.chunks)} chunks\n")
    for r in result.ranked:
        out.write(f"rank {str(r.rank):<4} {r.question}\n")
    hit = "n/a" if result.hit_rate is None else f"{result.hit_rate:.2f}"
    mrr = "n/a" if result.mrr is None else f"{result.mrr:.2f}"
    out.write(f"hit rate@{args.k}: {hit}   MRR: {mrr}   ({result.answerable} answerable questions; "
              f"{result.unanswerable} unanswerable counted apart)\n")
    for m in result.misses:
        out.write(f"missed: {m.question} (wanted {', '.join(m.expected)}; got {', '.join(m.retrieved[:args.k])})\n")
    return 0


def cmd_floor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..pipeline.answering import read_questions
    from ..pipeline.gate import FloorReport, measure_floor
    from ..pipeline.retrieval import load_index
    from ..reports.golden import read_golden

    golden, errors = read_golden(args.golden)
    for e in errors:
        err.write(f"golden set: skipped {e}\n")
    answerable = [q.question for q in golden if q.answerable]
    off = [q for _, q in read_questions(args.off_corpus)]
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


def _checked(paths: list[str], corpus: str | None, err: TextIO):
    from ..review import dataset

    data = dataset.load([Path(p) for p in paths], Path(corpus) if corpus else None)
    for e in data.errors:
        err.write(f"unreadable: {e}\n")
    return data


def cmd_judge(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import threading
    import time

    from ..judging import verdicts as V
    from ..judging.judges import BaselineJudge, ClaudeJudge, Progress, judge_items, not_yet_judged
    from ..review import labels as L

    data = _checked(args.log, args.corpus, err)
    keys = None
    if not args.all_items:
        records, warnings = L.read(args.labels)
        for w in warnings:
            err.write(f"warning: {w}\n")
        keys = {r.item for r in records if r.citation is not None}
    items = judge_items(data.results, keys, data.items_by_answer)
    if args.judge == "baseline":
        judge = BaselineJudge()
    else:
        from ..pipeline.answering import make_client

        judge = ClaudeJudge(make_client(), model=args.model, prompt_version=args.prompt,
                            concurrency=args.concurrency, max_cost_usd=args.max_cost_usd, price=args.price)
    existing, warnings = V.read(args.out)
    for w in warnings:
        err.write(f"warning: {w}\n")
    todo = not_yet_judged(items, existing, judge)
    progress = Progress(total=len(todo))
    err.write(f"{len(items)} item(s); {len(items) - len(todo)} already judged by {judge.name} "
              f"{judge.prompt.version}; judging {len(todo)}\n")

    pending: list = []
    shown = [0.0]

    def record(v) -> None:  # written in small groups: a crash loses at most the last second's verdicts
        pending.append(v)
        now = time.monotonic()
        if now - shown[0] >= 1.0 or progress.done == progress.total:
            V.append(args.out, pending)
            pending.clear()
            shown[0] = now
            err.write(f"\r[{progress.done}/{progress.total}] ${progress.spent:.4f} spent, {progress.unscored} unscored")

    if args.batch and args.judge == "claude":
        judge.judge_batch(todo, poll_seconds=args.poll_seconds, on_verdict=record, progress=progress)
    else:
        judge.judge(todo, on_verdict=record, stop=threading.Event(), progress=progress)
    V.append(args.out, pending)
    err.write(f"\n{progress.done} verdict(s) written to {args.out}; ${progress.spent:.4f}"
              + (f"; {progress.stopped}" if progress.stopped else "") + "\n")
    return 0


def cmd_calibrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..judging import verdicts as V
    from ..judging.calibration import calibrate
    from ..review import labels as L

    records, warnings = L.read(args.labels)
    verdicts, more = V.read(args.verdicts)
    for w in warnings + more:
        err.write(f"warning: {w}\n")
    runs = V.runs(verdicts)
    if not runs:
        err.write(f"citecheck calibrate: no verdicts in {args.verdicts}; run citecheck judge first\n")
        return EXIT_USAGE
    wanted = [r for r in runs if (args.judge is None or r[0] == args.judge)
              and (args.prompt is None or r[1] == args.prompt)]
    if not wanted:
        err.write("citecheck calibrate: no verdicts for that judge/prompt; present: "
                  + ", ".join(f"{j} {p}" for j, p in runs) + "\n")
        return EXIT_USAGE
    fingerprints = None
    if args.log:
        data = _checked(args.log, args.corpus, err)
        fingerprints = {i.key: i.fingerprint for i in data.all_items}
    reports = [calibrate(records, verdicts, j, p, args.split, fingerprints) for j, p in wanted]
    if args.format == "json":
        out.write(json.dumps([r.to_dict() for r in reports] if len(reports) > 1 else reports[0].to_dict(),
                             ensure_ascii=False, indent=2) + "\n")
    else:
        out.write("\n".join(r.to_text() for r in reports))
    return 0


def cmd_verdicts_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..judging import verdicts as V

    found, errors = V.import_external(args.input, args.judge, args.prompt)
    for e in errors:
        err.write(f"skipped: {e}\n")
    V.append(args.out, found)
    err.write(f"imported {len(found)} verdict(s) as judge {args.judge!r}" +
              (f", skipped {len(errors)} bad row(s)" if errors else "") + "\n")
    return EXIT_UNREADABLE if errors else 0


def _price(value: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("give IN,OUT in USD per million tokens, for example 3,15") from None
    return a, b


def _add_pipeline_options(p: argparse.ArgumentParser) -> None:
    from ..llm.pricing import DEFAULT_MODEL
    from ..pipeline.gate import DEFAULT_MIN_SUPPORT, SAMPLE_FLOOR

    p.add_argument("--corpus", required=True, help="folder of .md/.txt documents to retrieve from")
    p.add_argument("--shape", choices=["markers", "citations"], default="markers",
                   help="numbered sources with [n] markers, or the Citations API (default markers)")
    p.add_argument("--prompt", help="prompt version (markers: answer.v1, answer.v2; citations: answer-citations.v1)")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--k", type=int, default=8, help="chunks retrieved (default 8)")
    p.add_argument("--max-chunks", type=int, default=5, help="chunks packed into the prompt (default 5)")
    p.add_argument("--floor", type=float, default=SAMPLE_FLOOR,
                   help=f"support floor, a BM25 score (default {SAMPLE_FLOOR}, measured on the sample corpus)")
    p.add_argument("--min-support", type=int, default=DEFAULT_MIN_SUPPORT,
                   help="chunks that must reach the floor, else refuse without a call")
    p.add_argument("--max-tokens", type=int, default=800)
    p.add_argument("--max-cost-per-answer", type=float, default=0.05, metavar="USD")
    p.add_argument("--price", type=_price, metavar="IN,OUT", help="USD per million tokens, for a model not in the table")


def _rate(value: str) -> float:
    rate = float(value)
    if not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError("give a share between 0 and 1, for example 0.05")
    return rate


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Check RAG answers against their sources.")
    parser.add_argument("--version", action="version", version=f"citecheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="check every citation in one or more answer logs")
    check.add_argument("logs", nargs="+", help="answer log files (JSON lines, format version 1)")
    check.add_argument("--corpus", help="folder of the current source documents, to detect source_changed")
    check.add_argument("--format", choices=["text", "json"], default="text")
    check.add_argument("--max-failure-rate", type=_rate, metavar="R",
                       help="exit 1 when the share of failed citations is above R (0..1)")
    check.add_argument("--casefold", action="store_true", help="compare quotes case-insensitively")
    check.add_argument("--refusal", action="append", metavar="SENTENCE",
                       help=f"the exact refusal sentence (repeatable; default {DEFAULT_REFUSAL!r})")
    check.add_argument("--quiet", action="store_true", help="text format: list only answers with problems")
    check.set_defaults(func=cmd_check)

    rep = sub.add_parser("report", help="failure rates, reasons and breakdowns by model, prompt version and week")
    rep.add_argument("logs", nargs="+", help="answer log files (JSON lines, format version 1)")
    rep.add_argument("--golden", help="golden set (JSON lines) for over/under-refusal and retrieval hit rate")
    rep.add_argument("--labels", help="labels file, for the share of citations reviewers judged not supported")
    rep.add_argument("--corpus", help="folder of the current source documents, to detect source_changed")
    rep.add_argument("--k", type=int, default=5, help="k for hit rate at k (default 5)")
    rep.add_argument("--format", choices=["text", "json", "csv"], default="text")
    rep.add_argument("--casefold", action="store_true", help="compare quotes case-insensitively")
    rep.add_argument("--refusal", action="append", metavar="SENTENCE",
                     help=f"the exact refusal sentence (repeatable; default {DEFAULT_REFUSAL!r})")
    rep.set_defaults(func=cmd_report)

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
    ev.add_argument("--k", type=int, default=5)
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

    jd = sub.add_parser("judge", help="run a judge over labelled items (or all items), appending verdicts")
    jd.add_argument("--log", action="append", required=True, help="answer log(s) the items come from")
    jd.add_argument("--labels", help="labels file: the items to judge are the labelled ones")
    jd.add_argument("--all-items", action="store_true", help="judge every citation item of the logs")
    jd.add_argument("--corpus", help="folder of current source documents")
    jd.add_argument("--judge", choices=["claude", "baseline"], default="baseline")
    jd.add_argument("--model", default="claude-haiku-4-5")
    jd.add_argument("--prompt", default="judge.v1", help="judge prompt version (core/llm/prompts/)")
    jd.add_argument("--concurrency", type=int, default=4)
    jd.add_argument("--max-cost-usd", type=float, help="stop before a call that could go over this")
    jd.add_argument("--price", type=_price, metavar="IN,OUT")
    jd.add_argument("--batch", action="store_true", help="use the Message Batches API (half price, slower)")
    jd.add_argument("--poll-seconds", type=float, default=30.0)
    jd.add_argument("--out", required=True, help="verdicts file to append to (resumable)")
    jd.set_defaults(func=cmd_judge)

    cal = sub.add_parser("calibrate", help="agreement of a judge's verdicts with the human labels")
    cal.add_argument("--labels", required=True)
    cal.add_argument("--verdicts", required=True)
    cal.add_argument("--judge", help="judge name (default: every judge in the file)")
    cal.add_argument("--prompt", help="prompt version (default: every one)")
    cal.add_argument("--split", choices=["all", "dev", "test"], default="all")
    cal.add_argument("--log", action="append", help="answer log(s): drop labels whose item changed since")
    cal.add_argument("--corpus")
    cal.add_argument("--format", choices=["text", "json"], default="text")
    cal.set_defaults(func=cmd_calibrate)

    ver = sub.add_parser("verdicts", help="work with a verdicts file")
    ver_sub = ver.add_subparsers(dest="verdicts_command", required=True)
    vi = ver_sub.add_parser("import", help="import another tool's verdicts (CSV or JSONL keyed by item)")
    vi.add_argument("input")
    vi.add_argument("--judge", required=True, help="a name for that tool")
    vi.add_argument("--prompt", default="external", help="its prompt or version name")
    vi.add_argument("--out", required=True)
    vi.set_defaults(func=cmd_verdicts_import)

    from ..importers import add_import_parsers

    imp = sub.add_parser("import", help="turn other formats into citecheck log lines")
    add_import_parsers(imp.add_subparsers(dest="format", required=True))
    imp.set_defaults(func=cmd_import)
    lab = sub.add_parser("labels", help="work with a labels file")
    lab_sub = lab.add_subparsers(dest="labels_command", required=True)
    exp = lab_sub.add_parser("export", help="write the calibration set: one row per labelled item")
    exp.add_argument("labels", help="the labels file (JSON lines)")
    exp.add_argument("--log", action="append", required=True, help="answer log(s) the labels refer to")
    exp.add_argument("--corpus", help="folder of current source documents")
    exp.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    exp.add_argument("--out", help="write here instead of standard output")
    exp.set_defaults(func=cmd_labels_export)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.func(args, out, err)
    except (CitecheckError, OSError) as exc:
        err.write(f"citecheck {args.command}: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
