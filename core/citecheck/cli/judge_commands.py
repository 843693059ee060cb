"""``citecheck judge`` and ``verdicts import|copy``: running judges and keeping their verdicts
(``calibrate`` is in ``calibration_commands``)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from typing import TextIO

from citecheck.cli.common import (
    EXIT_FAILED,
    EXIT_UNREADABLE,
    EXIT_USAGE,
    anthropic_errors,
    api_error_text,
    load_checked,
    price,
)
from citecheck.config import add_option
from citecheck.storage.durable import WriteFailed
from citecheck.storage.streams import describe


@contextlib.contextmanager
def _stop_on_interrupt(err: TextIO):
    """A stop event that the first Ctrl-C (SIGINT) sets: no new call starts, the calls in flight
    finish and every verdict is written.  A second Ctrl-C interrupts at once, as usual."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def first(signum, frame) -> None:
        stop.set()
        err.write("\nstopping: no new calls; finishing the calls in flight (Ctrl-C again to quit now)\n")
        signal.signal(signal.SIGINT, previous)

    previous = signal.signal(signal.SIGINT, first)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def cmd_judge(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import time

    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.judges import BaselineJudge, ClaudeJudge, Progress, judge_items, not_yet_judged
    from citecheck.labelling import labels

    if not args.all_items and not args.labels:
        err.write("citecheck judge: give --labels (or set CITECHECK_LABELS) to judge the labelled items, "
                  "or --all-items to judge every citation item\n")
        return EXIT_USAGE
    data = load_checked(args.log, args.corpus, err)
    keys = None
    if not args.all_items:
        records, warnings = labels.read(args.labels)
        for w in warnings:
            err.write(f"warning: {w}\n")
        keys = {r.item for r in records if r.citation is not None}
    items = judge_items(data.results, keys, data.items_by_answer)
    judge: BaselineJudge | ClaudeJudge
    if args.judge == "baseline":
        judge = BaselineJudge()
    else:
        from citecheck.llm.client import make_client

        judge = ClaudeJudge(make_client(), model=args.model, prompt_version=args.prompt,
                            concurrency=args.concurrency, max_cost_usd=args.max_cost_usd, price=args.price)
    existing, warnings = verdict_store.read(args.out)
    for w in warnings:
        err.write(f"warning: {w}\n")
    todo = not_yet_judged(items, existing, judge)
    progress = Progress(total=len(todo))
    err.write(f"{len(items)} item(s); {len(items) - len(todo)} already judged by {judge.name} "
              f"{judge.prompt.version}; judging {len(todo)}\n")

    pending: list = []
    shown = [0.0]
    saved = [0]

    def flush() -> None:
        verdict_store.append(args.out, pending)  # all of the group on disk, or WriteFailed and none of it
        saved[0] += len(pending)
        pending.clear()

    def record(v) -> None:  # written in small groups: a crash loses at most the last second's verdicts
        pending.append(v)
        now = time.monotonic()
        if now - shown[0] >= 1.0 or progress.done == progress.total:
            flush()
            shown[0] = now
            err.write(f"\r[{progress.done}/{progress.total}] ${progress.spent:.4f} spent, {progress.unscored} unscored")

    try:
        if args.batch and isinstance(judge, ClaudeJudge):  # (the batch API is Claude's)
            judge.judge_batch(todo, poll_seconds=args.poll_seconds, on_verdict=record, progress=progress)
        else:
            with _stop_on_interrupt(err) as stop:
                judge.judge(todo, on_verdict=record, stop=stop, progress=progress)
        flush()
    except WriteFailed as exc:
        err.write(f"\ncitecheck judge: {exc}\n{saved[0]} verdict(s) saved in {describe(args.out)} before that; "
                  f"{progress.done - saved[0]} judged but not saved (run the same command again once there is "
                  "room: saved verdicts are not judged again)\n")
        return EXIT_FAILED
    except anthropic_errors() as exc:  # a failure outside one call (the batch API unreachable...): keep what was judged
        try:
            flush()
        except WriteFailed as write_exc:
            err.write(f"\ncitecheck judge: {write_exc}\n")
        err.write(f"\ncitecheck judge: {api_error_text(exc)}\n{saved[0]} verdict(s) saved in {describe(args.out)}; "
                  f"{progress.total - saved[0]} not judged (run the same command again to resume)\n")
        return EXIT_FAILED
    failed = progress.failed
    err.write(f"\n{saved[0]} verdict(s) written to {describe(args.out)}"
              + (f" ({progress.unscored} unscored, {failed} of them failed calls)" if progress.unscored else "")
              + f"; ${progress.spent:.4f}" + (f"; {progress.stopped}" if progress.stopped else "") + "\n")
    return EXIT_FAILED if failed else 0


def cmd_verdicts_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.judging import verdicts as verdict_store

    found, errors = verdict_store.import_external(args.input, args.judge, args.prompt)
    for e in errors:
        err.write(f"skipped: {e}\n")
    verdict_store.append(args.out, found)
    err.write(f"imported {len(found)} verdict(s) as judge {args.judge!r}" +
              (f", skipped {len(errors)} bad row(s)" if errors else "") + "\n")
    return EXIT_UNREADABLE if errors else 0


def cmd_verdicts_copy(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.cli.label_commands import copy_events

    return copy_events("verdicts", args, err)


def register(sub: argparse._SubParsersAction) -> None:
    jd = sub.add_parser("judge", help="run a judge over labelled items (or all items), appending verdicts")
    add_option(jd, "log", required=True, purpose="the answers the items come from")
    add_option(jd, "labels", purpose="the items to judge are the labelled ones")
    jd.add_argument("--all-items", action="store_true", help="judge every citation item of the logs")
    add_option(jd, "corpus")
    jd.add_argument("--judge", choices=["claude", "baseline"], default="baseline")
    jd.add_argument("--model", default="claude-haiku-4-5")
    jd.add_argument("--prompt", default="judge.v2", help="judge prompt version (core/citecheck/llm/prompts/)")
    jd.add_argument("--concurrency", type=int, default=4)
    jd.add_argument("--max-cost-usd", type=float, help="stop before a call that could go over this")
    jd.add_argument("--price", type=price, metavar="IN,OUT")
    jd.add_argument("--batch", action="store_true", help="use the Message Batches API (half price, slower)")
    jd.add_argument("--poll-seconds", type=float, default=30.0)
    jd.add_argument("--out", required=True, help="verdicts file or postgresql:// URL to append to (resumable)")
    jd.set_defaults(func=cmd_judge)

    ver = sub.add_parser("verdicts", help="work with a verdicts file or database")
    ver_sub = ver.add_subparsers(dest="verdicts_command", required=True)
    vi = ver_sub.add_parser("import", help="import another tool's verdicts (CSV or JSONL keyed by item)")
    vi.add_argument("input")
    vi.add_argument("--judge", required=True, help="a name for that tool")
    vi.add_argument("--prompt", default="external", help="its prompt or version name")
    vi.add_argument("--out", required=True, help="verdicts file or postgresql:// URL to append to")
    vi.set_defaults(func=cmd_verdicts_import)
    vc = ver_sub.add_parser("copy", help="copy every verdict from SRC to DST (file or postgresql:// URL), "
                                         "skipping those already there")
    vc.add_argument("source", metavar="SRC", help="verdicts file or postgresql:// URL to read")
    vc.add_argument("destination", metavar="DST", help="verdicts file or postgresql:// URL to append to")
    vc.set_defaults(func=cmd_verdicts_copy)
