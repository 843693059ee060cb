"""The review page's view settings kept in its address, so they survive a reload and a restart.

A page switch keeps them in the session; a reload or a server restart gives a new session, and
then the open tab's address is all that is left (as with ``?reviewer=``, see :mod:`.identity`).
``?show=`` names the answer filter by its short code (``failing``, ``failed``, ``refused``, ``unlabelled``;
absent for all answers) and ``?blind=off`` says blind mode was switched off (on when absent).
The session's value wins over the address's, which may be an old link.
"""

from __future__ import annotations

from citecheck.review.queue import FILTERS

DEFAULT_FILTER = next(iter(FILTERS))
_BY_CODE = {code: name for name, code in FILTERS.items()}


def filter_name(url_value: object, session_value: object) -> str:
    """The answer filter for this run: the session's, else the address's, else all answers."""
    if session_value in FILTERS:
        return session_value
    if isinstance(url_value, str) and url_value in _BY_CODE:
        return _BY_CODE[url_value]
    return DEFAULT_FILTER


def show_param(name: str | None) -> str | None:
    """The ``?show=`` value for a filter; None (no parameter) for the default."""
    code = FILTERS.get(name) if name is not None else None
    return None if code is None or name == DEFAULT_FILTER else code


def blind(url_value: object, session_value: object) -> bool:
    """Blind mode for this run: the session's setting, else the address's, else on."""
    if isinstance(session_value, bool):
        return session_value
    return url_value != "off"


def blind_param(on: bool | None) -> str | None:
    return None if on else "off"


def sync(params, name: str, value: str | None) -> None:
    """Make the address's parameter ``name`` say ``value`` (removed when None), writing only on a change."""
    if value is None:
        if name in params:
            del params[name]
    elif params.get(name) != value:
        params[name] = value
