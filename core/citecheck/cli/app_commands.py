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


def problems(settings) -> list[str]:
    """What would make the server start healthy but serve nothing (a mistyped path): said before it
    starts, so a service manager sees the failure, not a reviewer opening a page."""
    from citecheck.contract.log import log_problem
    from citecheck.errors import CitecheckError

    found = []
    try:
        settings.check_options()  # a corpus folder that is not there
    except CitecheckError as exc:
        found.append(str(exc))
    if settings.store is None:
        found += [f"--log {path}: {why}" for path in settings.logs if (why := log_problem(path))]
    elif not (settings.store / "store.json").is_file():
        found.append(f"--store {settings.store} is not a checked store (no store.json): write one with "
                     "citecheck check LOG... --store DIR")
    for name in ("golden", "guidelines", "roles"):
        value = getattr(settings, name)
        if value is not None and not value.is_file():
            found.append(f"--{name} {value}: no such file")
    if settings.roles is not None and settings.roles.is_file():
        from citecheck.review.roles import RolesError, load

        try:
            load(settings.roles)
        except RolesError as exc:
            found.append(f"--roles: {exc}")
    return found


def cmd_app(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import os

    from citecheck.cli.common import EXIT_USAGE
    from citecheck.web import serve
    from citecheck.web.settings import load_settings

    given = settings_argv(args)
    try:
        found = problems(load_settings(given, os.environ, root=serve.app_root()))
    except SystemExit as exc:  # a bad count in a variable: the sentence saying why
        found = [str(exc)]
    if found:
        for problem in found:
            err.write(f"citecheck app: {problem}\n")
        return EXIT_USAGE
    command = serve.launch(given, args.port, args.address, getattr(args, "streamlit", []))
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
