"""What a Claude call costs, from the usage the API returns and a per-model price table.

Prices are USD per million tokens (input, output), from Anthropic's published list prices;
cache writes cost 1.25x input and cache reads 0.1x input.  A model missing from the table is
an error, not a guess: pass ``--price IN,OUT`` or add it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from citecheck.errors import CitecheckError

DEFAULT_MODEL = "claude-sonnet-4-5"  # the answer pipeline's default

PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku-latest": (0.8, 4.0),
}
CACHE_WRITE = 1.25
CACHE_READ = 0.1

# The shortest prefix the API caches, in tokens, per model (Anthropic's prompt caching docs); a
# cache_control mark on a shorter prefix is ignored: the call pays full price and reports no
# cache tokens.  Same matching as PRICES (dated ids match their family).
CACHE_MINIMUM_TOKENS: dict[str, int] = {
    "claude-opus-4-5": 4096,
    "claude-opus-4-1": 1024,
    "claude-opus-4-0": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-sonnet-4-0": 1024,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku-latest": 2048,
}
CHARS_PER_TOKEN_BOUND = 3  # budgets count at most 3 characters a token (English is nearer 4): high on purpose


class UnknownPrice(CitecheckError, KeyError):
    def __str__(self) -> str:
        return (f"no price for model {self.args[0]!r}; known: {', '.join(sorted(PRICES))}. "
                "Give one with --price IN,OUT (USD per million tokens).")


@dataclass(frozen=True, slots=True)
class Price:
    input: float  # USD per million input tokens
    output: float

    def cost(self, usage: Any) -> float:
        """USD for one response's ``usage`` (an SDK object or its dict)."""
        get = usage.get if isinstance(usage, Mapping) else (lambda k, d=0: getattr(usage, k, d))
        inp = get("input_tokens", 0) or 0
        out = get("output_tokens", 0) or 0
        written = get("cache_creation_input_tokens", 0) or 0
        read = get("cache_read_input_tokens", 0) or 0
        return (inp * self.input + written * self.input * CACHE_WRITE + read * self.input * CACHE_READ
                + out * self.output) / 1_000_000

    def worst_case(self, input_tokens: int, max_tokens: int) -> float:
        """The most a call can cost: every input token uncached, every output token used."""
        return (input_tokens * self.input + max_tokens * self.output) / 1_000_000


def price_for(model: str, override: tuple[float, float] | None = None) -> Price:
    if override is not None:
        return Price(*override)
    found = _family(PRICES, model)  # dated ids match their family: claude-sonnet-4-5-20250929
    if found is None:
        raise UnknownPrice(model)
    return Price(*found)


def _family(table: Mapping[str, Any], model: str) -> Any:
    for name, value in table.items():
        if model == name or model.startswith(name + "-"):
            return value
    return None


def cache_minimum(model: str) -> int | None:
    """The shortest prefix (tokens) the API caches for ``model``; None when not known."""
    return _family(CACHE_MINIMUM_TOKENS, model)


def cacheable(prefix_tokens: int, model: str) -> bool:
    """Whether a prefix of ``prefix_tokens`` reaches ``model``'s caching minimum."""
    minimum = cache_minimum(model)
    return minimum is not None and prefix_tokens >= minimum


def estimate_tokens(text: str) -> int:
    """A deliberately high token estimate for budgeting before a call (``CHARS_PER_TOKEN_BOUND``
    characters per token; real English is nearer 4)."""
    return len(text) // CHARS_PER_TOKEN_BOUND + 16


def low_token_estimate(text: str) -> int:
    """A deliberately low token estimate (5 characters per token), for claims such as "this
    prefix is long enough to be cached" that must not be made on an overestimate."""
    return len(text) // 5
