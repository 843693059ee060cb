"""``citecheck app``: the review app on this machine, from a checkout or an installed package
(``web.serve``), with exactly the settings the app takes (``citecheck.config``)."""

from __future__ import annotations

import argparse
from typing import TextIO

from citecheck.config import FLAG, PATHS, SETTINGS, TEXTS, add_option


def settings_argv(args: argparse.Namespace) -> list[str]:
    """The app settings given on the command line, as the app's own arguments."""
    out: list[str] = []
    for s in SETTINGS:
        value = getattr(args, s.name, None)
        if value is None:
            continue
        if s.kind in (PATHS, TEXTS):
            for v in value:
                out += [s.option, str(v)]
        elif s.kind == FLAG:
            out.append(s.option)
        else:
            out += [s.option, str(value)]
    return out


def cmd_app(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.web import serve

    command = serve.launch(settings_argv(args), args.port, args.address, getattr(args, "streamlit", []))
    where = "installed package" if serve.installed() else "checkout"
    out.write(f"citecheck review app ({where}): {command.url}\n")
    for note in command.notes:
        out.write(f"  {note}\n")
    out.flush()
    return serve.become(command)


def register(sub: argparse._SubParsersAction) -> None:
    app = sub.add_parser("app", help="start the review app (Review, Failures, Disagreements, Calibration, Data)",
                         description="Start the review app on the bundled sample data, or on the settings given "
                                     "(the same as the app's: docs/app.md). Streamlit's own options such as "
                                     "--server.baseUrlPath are passed on.")
    app.add_argument("--port", type=int, help="port to serve on (default 8501)")
    app.add_argument("--address", help="address to serve on (default: every address; 127.0.0.1 for this machine only)")
    for s in SETTINGS:
        add_option(app, s.name, env=False)
    app.set_defaults(func=cmd_app, accepts_streamlit=True)
