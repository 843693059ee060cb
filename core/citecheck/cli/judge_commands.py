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
    overlap,
    positive,
    price,
)
from citecheck.config import add_option
from citecheck.errors import CitecheckError
from citecheck.storage.durable import WriteFailed
from citecheck.storage.streams import describe, require
from citecheck.text.terminal import progress_line


def _share(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a number from 0 to 1, not {value!r}") from None
    if not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"give a number from 0 to 1, not {value}")
    return x


def _temperature(value: str) -> float:
    try:
        t = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a number from 0 to 1, not {value!r}") from None
    if not 0.0 <= t <= 1.0:
        raise argparse.ArgumentTypeError(f"the Messages API takes a temperature from 0 to 1, not {value}")
    return t


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


def _usage_problem(args: argparse.Namespace) -> str | None:
    """Why these options cannot go together, or None."""
    if args.judge == "baseline":
        for given, option in ((args.examples, "--examples"), (args.cascade, "--cascade"),
                              (args.temperature is not None, "--temperature")):
            if given:
                return f"{option} is for --judge claude (the baseline judge has no prompt and no sampling)"
    if args.escalate_below is not None and not args.cascade:
        return "--escalate-below is the threshold of a --cascade: give --cascade MODEL_A,MODEL_B"
    if args.cascade and args.batch:
        return "a --cascade cannot run through the Message Batches API (B is asked after A's reply): drop --batch"
    if args.cascade and args.price:
        return "--price gives one model's price; with --cascade both models must be in the price table"
    return None


def _make_judge(args: argparse.Namespace, err: TextIO):
    """The judge the options describe (the examples file is loaded, and checked, here)."""
    from citecheck.judging.judges import BaselineJudge, ClaudeJudge

    if args.judge == "baseline":
        return BaselineJudge()
    from citecheck.judging import examples as judge_examples
    from citecheck.llm.client import NoKeyError
    from citecheck.llm.client import make_client as claude_client

    def make_client():
        try:
            return claude_client()
        except NoKeyError as exc:  # (it once said "or use --dry-run", an option judge does not have)
            raise exc.instead("or use --judge baseline, which needs no key and no network") from None

    shots = judge_examples.load(args.examples) if args.examples else None
    prompt = args.prompt or ("judge.v3" if shots is not None else "judge.v2")
    common = dict(model=args.model, prompt_version=prompt, concurrency=args.concurrency,
                  max_cost_usd=args.max_cost_usd, temperature=args.temperature, examples=shots)
    if args.cascade:
        from citecheck.judging.cascade import DEFAULT_ESCALATE_BELOW, CascadeJudge, parse_models

        try:
            cheap, strong = parse_models(args.cascade)
        except ValueError as exc:
            raise CitecheckError(f"--cascade: {exc}") from None
        below = DEFAULT_ESCALATE_BELOW if args.escalate_below is None else args.escalate_below
        judge: ClaudeJudge = CascadeJudge(make_client(), **{**common, "model": cheap}, strong=strong,
                                          escalate_below=below)
    else:
        judge = ClaudeJudge(make_client(), **common, price=args.price)
    if shots is not None:
        err.write(f"examples: {len(shots.examples)} from {args.examples} (sha256 {shots.sha256[:12]}); "
                  f"prompt version {judge.prompt.version}\n")
    return judge


def _notes(args: argparse.Namespace, judge, err: TextIO) -> None:
    """What the run's settings mean for what it measures."""
    from citecheck.judging.cascade import RULES, CascadeJudge

    if args.repeat > 1 and args.judge == "baseline":
        err.write(f"note: the baseline judge is deterministic: its {args.repeat} runs per item are recorded "
                  "and will show no flips\n")
    sampled = args.repeat > 1 or (isinstance(judge, CascadeJudge) and judge.rule == "samples")
    if sampled and args.temperature == 0:
        err.write("note: at --temperature 0 a model's samples of one item differ little if at all, so repeats (and "
                  "a cascade's two samples) measure little; leave --temperature unset (the model's default sampling)\n")
    if isinstance(judge, CascadeJudge):
        unsure = RULES[judge.rule].format(below=judge.escalate_below)
        err.write(f"cascade: {judge.model} first; {judge.strong} when {unsure} (rule: {judge.rule})\n")
        if judge.rule == "samples" and args.escalate_below is not None:
            err.write(f"note: prompt {judge.prompt.version} gives no confidence, so --escalate-below is not used: "
                      "two samples of A decide (judge.v3 gives one)\n")


def _runs_text(done: list[tuple[str, int]], repeats: int) -> str:
    """``12 item(s) × 3 run(s)`` when every judged item got all its runs, else the runs judged, of how
    many items, and which runs they were (a resumed ``--repeat 3`` that judged runs 1 and 2 once read
    "12 item(s) × 2 run(s)", as if it had been asked for two runs)."""
    items = {key for key, _ in done}
    per_item: dict[str, int] = {}
    for key, _ in done:
        per_item[key] = per_item.get(key, 0) + 1
    if repeats == 1:
        return f"{len(items)} item(s)"
    if set(per_item.values()) == {repeats}:
        return f"{len(items)} item(s) × {repeats} run(s)"
    runs = sorted({run for _, run in done})
    which = f"run {runs[0]}" if len(runs) == 1 else f"runs {runs[0]} to {runs[-1]}"
    return f"{len(done)} run(s) of {len(items)} item(s) ({which})"


def cmd_judge(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import time

    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.judges import ClaudeJudge, Progress, judge_items, not_yet_judged
    from citecheck.labelling import labels

    if not args.all_items and not args.labels:
        err.write("citecheck judge: give --labels (or set CITECHECK_LABELS) to judge the labelled items, "
                  "or --all-items to judge every citation item\n")
        return EXIT_USAGE
    if problem := _usage_problem(args):
        err.write(f"citecheck judge: {problem}\n")
        return EXIT_USAGE
    if not args.all_items:  # a mistyped labels path would judge nothing and say "0 verdict(s) written"
        require(args.labels, labels.STREAM)
    judge = _make_judge(args, err)
    data = load_checked(args.log, args.corpus, err)
    keys = None
    if not args.all_items:
        records, warnings = labels.read(args.labels)
        for w in warnings:
            err.write(f"warning: {w}\n")
        keys = {r.item for r in records if r.citation is not None}
    items = judge_items(data.results, keys, data.items_by_answer)
    existing, warnings = verdict_store.read(args.out)
    for w in warnings:
        err.write(f"warning: {w}\n")
    todo = not_yet_judged(items, existing, judge, args.repeat)
    progress = Progress(total=len(todo))
    _notes(args, judge, err)
    planned = len(items) * args.repeat
    runs = f"{len(items)} item(s)" + (f" × {args.repeat} runs" if args.repeat > 1 else "")
    err.write(f"{runs}; {planned - len(todo)} already judged by {judge.name} {judge.prompt.version}; "
              f"judging {len(todo)}\n")

    pending: list = []
    shown = [0.0]
    saved = [0]
    judged: list[tuple[str, int]] = []

    def flush() -> None:
        verdict_store.append(args.out, pending)  # all of the group on disk, or WriteFailed and none of it
        saved[0] += len(pending)
        judged.extend((v.item, v.repeat) for v in pending)
        pending.clear()

    def record(v) -> None:  # written in small groups: a crash loses at most the last second's verdicts
        pending.append(v)
        now = time.monotonic()
        if now - shown[0] >= 1.0 or progress.done == progress.total:
            flush()
            shown[0] = now
            progress_line(err, f"[{progress.done}/{progress.total}] ${progress.spent:.4f} spent, "
                               f"{progress.unscored} unscored")

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
    if judged:
        line = f"judged {_runs_text(judged, args.repeat)}"
        if args.cascade:
            line += f"; {progress.escalated} of {len(judged)} escalated to {getattr(judge, 'strong', '')}"
        err.write(line + "\n")
    return EXIT_FAILED if failed else 0


def _judged_by(args: argparse.Namespace, err: TextIO) -> dict:
    """The ordinary-run verdict per item of ``--judge NAME@PROMPT`` in ``--verdicts`` ({} without them)."""
    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.calibration import latest_by_item

    if not args.verdicts:
        return {}
    name, at, version = (args.judge or "").rpartition("@")
    found, warnings = verdict_store.read(args.verdicts)
    for w in warnings:
        err.write(f"warning: {w}\n")
    present = ", ".join(f"{j}@{p}" for j, p in verdict_store.runs(found)) or "none"
    if not at or not name:
        raise CitecheckError(f"--judge NAME@PROMPT names the judge whose disagreements to use (in "
                             f"{describe(args.verdicts)}: {present})")
    judged = latest_by_item(v for v in found if v.judge == name and v.prompt_version == version)
    if not judged:
        raise CitecheckError(f"no verdicts of {args.judge} in {describe(args.verdicts)}; present: {present}")
    return judged


def cmd_judge_examples(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from collections import Counter

    from citecheck.judging import examples as judge_examples
    from citecheck.judging.calibration import resolutions
    from citecheck.judging.judges import judge_items
    from citecheck.labelling import labels
    from citecheck.storage.durable import replace_file

    require(args.labels, labels.STREAM)
    events, warnings = labels.read_events(args.labels)
    for w in warnings:
        err.write(f"warning: {w}\n")
    records, adjudicated = labels.effective(events), labels.adjudications(events)
    judged = _judged_by(args, err)
    data = load_checked(args.log, args.corpus, err)
    fingerprints = {i.key: i.fingerprint for i in data.all_items}  # a label of an item changed since is stale
    settled = resolutions(records, fingerprints, adjudicated=adjudicated, overlap=args.overlap)
    items = judge_items(data.results, set(settled), data.items_by_answer)
    chosen = judge_examples.build(items, settled, adjudicated, judged, args.max)
    if not chosen:
        err.write("citecheck judge-examples: no dev-split item of these logs is adjudicated"
                  + (f" or judged otherwise by {args.judge} than by its reviewers" if judged else "")
                  + "; adjudicate some disagreements (Disagreements page), or give --verdicts and --judge\n")
        return EXIT_USAGE
    shots = judge_examples.of(chosen)
    source = {"labels": describe(args.labels), "verdicts": describe(args.verdicts) if args.verdicts else None,
              "judge": args.judge if args.verdicts else None, "split": "dev", "max": args.max,
              "overlap": args.overlap}
    replace_file(args.out, judge_examples.dumps(shots, source), "the examples file")
    why = Counter(e.why for e in chosen)
    label = Counter(e.label for e in chosen)
    err.write(f"{len(chosen)} example(s) from the dev split written to {args.out}: "
              f"{why['adjudicated']} adjudicated, {why['disagreement']} disagreement(s); "
              + ", ".join(f"{name} {label[name]}" for name in judge_examples.VERDICTS)
              + f"; sha256 {shots.sha256}\nuse them with: citecheck judge --judge claude --examples {args.out} "
              f"(prompt judge.v3; recorded as judge.v3{shots.version_suffix})\n")
    return 0


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
    jd.add_argument("--prompt", "--prompt-version", dest="prompt",
                    help="judge prompt version (core/citecheck/llm/prompts/; default judge.v2, judge.v3 with --examples)")
    jd.add_argument("--repeat", type=positive, default=1, metavar="K",
                    help="judge each item K times (runs 0..K-1; run 0 is the one calibration counts)")
    jd.add_argument("--temperature", type=_temperature, metavar="T", help="sampling temperature, 0 to 1 (default: not sent: the model's own)")
    jd.add_argument("--examples", metavar="FILE", help="few-shot examples file (citecheck judge-examples)")
    jd.add_argument("--cascade", metavar="MODEL_A,MODEL_B",
                    help="ask MODEL_A first, MODEL_B when A is unsure (replaces --model)")
    jd.add_argument("--escalate-below", type=_share, metavar="C",
                    help="a cascade escalates when A's confidence is below C (default 0.7; prompts with a confidence)")
    jd.add_argument("--concurrency", type=int, default=4)
    jd.add_argument("--max-cost-usd", type=float, help="stop before a call that could go over this")
    jd.add_argument("--price", type=price, metavar="IN,OUT")
    jd.add_argument("--batch", action="store_true", help="use the Message Batches API (half price, slower)")
    jd.add_argument("--poll-seconds", type=float, default=30.0)
    jd.add_argument("--out", required=True, help="verdicts file or postgresql:// URL to append to (resumable)")
    jd.set_defaults(func=cmd_judge)

    ex = sub.add_parser("judge-examples", help="build a few-shot examples file for a judge from labelled dev-split "
                                               "items: adjudicated ones, then the judge's disagreements")
    add_option(ex, "labels", required=True)
    add_option(ex, "log", required=True, purpose="the answers the items come from")
    add_option(ex, "corpus")
    add_option(ex, "verdicts", purpose="the judge's verdicts, to find where it disagreed with the reviewers")
    ex.add_argument("--judge", metavar="NAME@PROMPT", help="the judge whose disagreements to use, as in the "
                                                           "verdicts file (baseline@baseline.v1)")
    ex.add_argument("--max", type=positive, default=6, metavar="N", help="at most N examples (default 6)")
    add_option(ex, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                   "(default 1)")
    ex.add_argument("--out", required=True, help="the examples file to write (JSON)")
    ex.set_defaults(func=cmd_judge_examples)

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
