"""``citecheck collect``: receive OpenTelemetry traces over OTLP/HTTP and write one log line per request."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from citecheck.cli.common import positive


def _seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {raw!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {raw!r}")
    return value


def _port(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535 (0: any free port), not {raw!r}")
    return value


def cmd_collect(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.importers.collector import CollectSettings, serve

    settings = CollectSettings(Path(args.log), grace=args.grace_seconds, quiet=args.quiet_seconds,
                               max_traces=args.max_traces)
    return serve(settings, args.host, args.port, err)


def register(sub: argparse._SubParsersAction) -> None:
    col = sub.add_parser(
        "collect", help="receive OpenTelemetry traces (OTLP/HTTP) and write one log line per request",
        description="Receive OTLP/HTTP trace exports (protobuf or JSON, gzip or not) on POST /v1/traces and append "
                    "one answer per request to LOG (docs/collect.md). An export is acknowledged once its spans are "
                    "in LOG.spool on disk; the spool is replayed on start-up. Stop with SIGTERM or Ctrl-C.")
    col.add_argument("--log", required=True, metavar="LOG",
                     help="answer log to append to; the spool LOG.spool and the lock LOG.spool.lock are kept beside it")
    col.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for every address)")
    col.add_argument("--port", type=_port, default=4318, help="port to listen on (default 4318, OTLP/HTTP's)")
    col.add_argument("--quiet-seconds", type=_seconds, default=30.0, metavar="S",
                     help="write a trace whose root span never ended after S seconds without a new span (default 30)")
    col.add_argument("--grace-seconds", type=_seconds, default=1.0, metavar="S",
                     help="after its root span ended, write a trace once no span of it came for S seconds "
                          "(default 1; raise it to the exporters' OTEL_BSP_SCHEDULE_DELAY when a trace spans services)")
    col.add_argument("--max-traces", type=positive, default=10_000, metavar="N",
                     help="at most N traces wait in memory; past that the one waiting longest is written as it is, "
                          "with a note (default 10000)")
    col.set_defaults(func=cmd_collect)
