"""Random tokens the review page writes into its HTML and scripts: a page run's mark, a server
session's id.  Hex only, so that one can go into an attribute or a script string as it is; each
place that writes one checks it with :func:`is_token` first."""

from __future__ import annotations

import secrets

_HEX = frozenset("0123456789abcdef")


def new_token(nbytes: int) -> str:
    """A new random token of ``nbytes`` bytes, as lowercase hex."""
    return secrets.token_hex(nbytes)


def is_token(value: str) -> bool:
    """Whether ``value`` is made of lowercase hex digits only (as :func:`new_token` writes them;
    the empty string is, and each caller says whether it may be empty)."""
    return all(ch in _HEX for ch in value)
