"""The one place an Anthropic client is made, for the CLI and the app alike.

The API key comes from the caller (the app reads Streamlit secrets) or from ANTHROPIC_API_KEY.
It is handed to the SDK and nowhere else: never printed, logged, stored or put in an error.
"""

from __future__ import annotations

import os
from typing import Any

from citecheck.errors import CitecheckError

ENV_KEY = "ANTHROPIC_API_KEY"


class NoKeyError(CitecheckError):
    """No API key: each command adds what it can do without one (``instead``)."""

    def instead(self, what: str) -> NoKeyError:
        return NoKeyError(f"{self} ({what})")


def have_key(api_key: str | None = None) -> bool:
    return bool(api_key or os.environ.get(ENV_KEY))


def make_client(api_key: str | None = None, http_client: Any = None, max_retries: int = 4) -> Any:
    """An ``anthropic.Anthropic`` client with retries (429s and 5xx back off in the SDK).

    ``http_client`` is for tests: an ``httpx.Client`` over a MockTransport (see :mod:`.fake_api`).
    """
    import anthropic

    key = api_key or os.environ.get(ENV_KEY)
    if not key and http_client is None:
        raise NoKeyError(f"set {ENV_KEY} in the environment to call Claude")
    kwargs: dict = {"max_retries": max_retries, "api_key": key or "not-a-real-key"}
    if http_client is not None:
        kwargs["http_client"] = http_client
    return anthropic.Anthropic(**kwargs)
