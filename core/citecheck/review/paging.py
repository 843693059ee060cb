"""Pages of one answer on the review page, so that no answer, however long, makes the page's cost
grow past a bound: sentences are shown a page at a time, and very long texts are clipped for
display with a note (the check itself always reads everything)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

SENTENCES_PER_PAGE = 40  # sentence rows (with their citations and label buttons) per page
MAX_ANSWER_CHARS = 20_000  # of the answer shown as the reader sees it
MAX_SENTENCE_CHARS = 4_000  # of one sentence in its row


@dataclass(frozen=True, slots=True)
class Window:
    """Sentences ``start`` (inclusive) to ``end`` (exclusive) of ``total``; page ``page`` of ``pages`` (from 1)."""

    start: int
    end: int
    total: int
    page: int
    pages: int

    @property
    def note(self) -> str:
        """"" when everything fits on one page; else which sentences are shown."""
        if self.pages <= 1:
            return ""
        return (f"Sentences {self.start + 1:,} to {self.end:,} of {self.total:,} (page {self.page:,} of "
                f"{self.pages:,}): a long answer is shown a page at a time.")


def pages(total: int, per_page: int = SENTENCES_PER_PAGE) -> int:
    return max(1, -(-total // per_page))


def window(total: int, page: int, per_page: int = SENTENCES_PER_PAGE) -> Window:
    """The sentences of page ``page`` (clamped to the pages there are)."""
    count = pages(total, per_page)
    page = min(max(1, page), count)
    start = (page - 1) * per_page
    return Window(start, min(total, start + per_page), total, page, count)


def page_of(sentence: int, per_page: int = SENTENCES_PER_PAGE) -> int:
    """The page holding sentence ``sentence`` (from 0)."""
    return sentence // per_page + 1


def clip(text: str, limit: int) -> tuple[str, str]:
    """``text`` cut to ``limit`` characters for display, and a note saying so ("" when not cut)."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], f"\u2026 shown: the first {limit:,} of {len(text):,} characters."


def items_in(items: Sequence, shown: Window) -> range:
    """The positions in ``items`` (in reading order, as ``items_of`` gives them) of the items of
    the shown sentences: found by bisection, so a page costs the same however long the answer."""
    sentences = _SentenceView(items)
    return range(bisect.bisect_left(sentences, shown.start), bisect.bisect_left(sentences, shown.end))


class _SentenceView:
    """``items`` seen as their sentence numbers, for bisection without copying."""

    def __init__(self, items: Sequence):
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, n: int) -> int:
        return self.items[n].sentence
