"""The LLM client layer: prices, caching minimums, prompts."""

from __future__ import annotations

import pytest
from citecheck.llm import fake_api
from citecheck.llm.pricing import CACHE_MINIMUM_TOKENS, PRICES, cache_minimum, cacheable, price_for
from citecheck.llm.prompts import load_prompt, system_blocks


def test_every_priced_model_has_a_cache_minimum_and_dated_ids_match_their_family():
    assert set(CACHE_MINIMUM_TOKENS) == set(PRICES)
    assert cache_minimum("claude-haiku-4-5-20251001") == 4096
    assert cache_minimum("claude-sonnet-4-5") == 1024
    assert cache_minimum("some-other-model") is None
    assert not cacheable(10_000, "some-other-model")  # unknown: never claimed


@pytest.mark.parametrize("model, chars, marked", [
    ("claude-sonnet-4-5", 1024 * 5, True),     # 1,024 tokens even at 5 characters a token
    ("claude-sonnet-4-5", 1024 * 5 - 50, False),
    ("claude-haiku-4-5", 1024 * 5, False),     # Haiku 4.5 needs 4,096
    ("claude-haiku-4-5", 4096 * 5, True),
])
def test_the_system_prompt_is_marked_for_caching_only_when_long_enough(model, chars, marked):
    block = system_blocks("x" * chars, model)[0]
    assert ("cache_control" in block) is marked


def test_bundled_prompts_are_too_short_to_cache_on_any_model():
    for version in ("answer.v1", "answer.v2", "answer-citations.v1", "judge.v1"):
        text = load_prompt(version).text
        assert all("cache_control" not in system_blocks(text, m)[0] for m in PRICES)


def test_a_cached_prefix_is_priced_from_the_returned_usage():
    """When the API reports cache reads, the recorded cost is the cached price, read from the
    usage of a real SDK response (through the mock transport)."""
    text = "guideline " * 3000  # ~30,000 characters: cacheable on Sonnet
    replies = [fake_api.message("ok", use=fake_api.usage(input_tokens=50, output_tokens=10, cache_write=6000)),
               fake_api.message("ok", use=fake_api.usage(input_tokens=50, output_tokens=10, cache_read=6000))]
    client = fake_api.client(lambda body: replies.pop(0))
    price = price_for("claude-sonnet-4-5")
    costs = []
    for _ in range(2):
        body = {"model": "claude-sonnet-4-5", "max_tokens": 20, "system": system_blocks(text, "claude-sonnet-4-5"),
                "messages": [{"role": "user", "content": "q"}]}
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        costs.append(price.cost(client.messages.create(**body).usage))
    uncached = price.cost({"input_tokens": 6050, "output_tokens": 10})
    assert costs[0] == pytest.approx((50 * 3 + 6000 * 3 * 1.25 + 10 * 15) / 1e6)
    assert costs[1] == pytest.approx((50 * 3 + 6000 * 3 * 0.1 + 10 * 15) / 1e6)
    assert costs[1] < uncached / 5  # the saving the cache gives, from the usage the API returned
