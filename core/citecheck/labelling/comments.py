"""Comments on review items and answers: threads of ``comment`` events closed by ``resolve`` events
(docs/labels-format.md, "Comments and resolutions").

Both are version 2 records of the labels store, appended beside the labels and never rewritten
(``labels.append_event``; ``labels.parse_record`` reads them with :func:`parse_comment` and
:func:`parse_resolve`).

- A **thread** is named by its key: an item key (``ANSWER_ID#s3#c1``) for a thread about one
  item, or a bare answer id for a thread about a whole answer (:func:`thread_item` tells which).
- A **comment** carries its own id, author, text and the reviewers it mentions.  A mention is
  ``@`` followed by a reviewer name as known when the comment is made (:func:`mentions_in`).
- A **resolve** closes a thread.  State is decided in the order the store holds the events:
  a thread is resolved when its last event is a resolve, so a comment written after a resolve
  reopens it.  A resolve of a thread that has no comment yet leaves nothing to show.
- In **blind mode** a reviewer sees no thread of an item before labelling it, since a comment
  would sway the label (:func:`visible_threads`).  This is decided here, not by the page.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from citecheck import __version__
from citecheck.contract.item_keys import ItemKey, parse_item_key
from citecheck.errors import CitecheckError, FieldError
from citecheck.labelling.assignments import Assignment
from citecheck.storage.lines import expect, now

EVENTS_VERSION = 2  # the labels_version of comment and resolve records (as labelling.events)
COMMENT = "comment"
RESOLVE = "resolve"
MAX_TEXT = 10_000  # characters a comment may hold when made here; a reader accepts any length


class CommentError(CitecheckError, ValueError):
    """A comment or resolve that cannot be made as asked (the message says what to do)."""


@dataclass(frozen=True, slots=True)
class Comment:
    thread: str  # an item key, or an answer id for a thread about the whole answer
    comment: str  # this comment's id, unique in the store
    author: str
    text: str
    mentions: tuple[str, ...]  # reviewer names, each once, in the order first mentioned
    at: str
    citecheck: str = ""

    def to_record(self) -> dict:
        return {"labels_version": EVENTS_VERSION, "event": COMMENT, "thread": self.thread, "comment": self.comment,
                "author": self.author, "text": self.text, "mentions": list(self.mentions), "at": self.at,
                "citecheck": self.citecheck}


@dataclass(frozen=True, slots=True)
class Resolve:
    thread: str
    by: str
    at: str
    citecheck: str = ""

    def to_record(self) -> dict:
        return {"labels_version": EVENTS_VERSION, "event": RESOLVE, "thread": self.thread, "by": self.by,
                "at": self.at, "citecheck": self.citecheck}


# --- mentions -------------------------------------------------------------------------------------


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def mention_spans(text: str, reviewers: Iterable[str]) -> list[tuple[int, int, str]]:
    """Where ``text`` mentions a reviewer: (start of the ``@``, end of the name, the name as the
    reviewer spells it), in order.

    The rule: an ``@`` that does not follow a letter, digit or ``_`` (so ``ann@example.org`` is
    an address, not a mention), followed by a known reviewer name, compared without regard to
    case, and not followed by a letter, digit or ``_`` (``@annabel`` does not mention ``ann``).
    Names may hold spaces, dots or ``@``; when several names fit, the longest wins
    (``@Ann Lee`` mentions "Ann Lee" when both "Ann" and "Ann Lee" are reviewers).  An ``@``
    before a name nobody goes by mentions no one."""
    names = sorted({r.strip() for r in reviewers if r.strip()}, key=lambda n: (-len(n), n))
    folded = [(n, n.casefold()) for n in names]
    found: list[tuple[int, int, str]] = []
    start = 0
    while (at := text.find("@", start)) >= 0:
        start = at + 1
        if at and _word(text[at - 1]):
            continue
        for name, key in folded:
            end = at + 1 + len(name)
            if text[at + 1:end].casefold() == key and (end == len(text) or not _word(text[end])):
                found.append((at, end, name))
                start = end
                break
    return found


def mentions_in(text: str, reviewers: Iterable[str]) -> tuple[str, ...]:
    """The reviewers ``text`` mentions (:func:`mention_spans`), each once, in the order first mentioned."""
    return tuple(dict.fromkeys(name for _, _, name in mention_spans(text, reviewers)))


# --- making events --------------------------------------------------------------------------------


def _nonblank(value: str, what: str) -> str:
    value = value.strip()
    if not value:
        raise CommentError(what)
    return value


def make_comment(thread: str, author: str, text: str, reviewers: Iterable[str] = (), at: str | None = None,
                 comment_id: str | None = None) -> Comment:
    """A new comment by ``author`` on ``thread``; ``reviewers``: the names a mention may name
    (:func:`mentions_in`).  The id is random unless given."""
    thread = _nonblank(thread, "a comment needs the item or answer it is about")
    author = _nonblank(author, "a name is required before commenting: enter yours in the sidebar")
    text = _nonblank(text, "the comment is empty: write something before clicking Comment")
    if len(text) > MAX_TEXT:
        raise CommentError(f"the comment has {len(text):,} characters; shorten it to {MAX_TEXT:,} or fewer")
    return Comment(thread, comment_id or uuid.uuid4().hex, author, text, mentions_in(text, reviewers),
                   at or now(), __version__)


def make_resolve(thread: str, by: str, at: str | None = None) -> Resolve:
    thread = _nonblank(thread, "a resolve needs the item or answer whose thread it closes")
    by = _nonblank(by, "a name is required before resolving a thread: enter yours in the sidebar")
    return Resolve(thread, by, at or now(), __version__)


def known_reviewers(events: Iterable[object]) -> list[str]:
    """The names a mention may name, sorted: everyone who labelled, commented, resolved, adjudicated or
    opened an item, and the lead and reviewers of every assignment (a lead who has only assigned
    work could not be mentioned)."""
    names: set[str] = set()
    for e in events:
        for field in ("reviewer", "author", "by", "adjudicator", "lead"):
            value = getattr(e, field, None)
            if isinstance(value, str) and value.strip():
                names.add(value.strip())
        if isinstance(e, Assignment):
            names.update(who.strip() for who, _ in e.items if who.strip())
    return sorted(names)


# --- reading events -------------------------------------------------------------------------------


def _text(obj: dict, field: str) -> str:
    value = expect(obj, field, str)
    if not value.strip():
        raise FieldError(field, "is empty")
    return value


def _mentions(obj: dict) -> tuple[str, ...]:
    raw = expect(obj, "mentions", list, optional=True, default=[])
    for n, name in enumerate(raw):
        if not isinstance(name, str) or not name.strip():
            raise FieldError(f"mentions[{n}]", "must be a reviewer's name (a non-empty string)")
    return tuple(raw)


def parse_comment(obj: dict) -> Comment:
    """A ``comment`` record (version and event already checked), field by field."""
    return Comment(_text(obj, "thread"), _text(obj, "comment"), _text(obj, "author"), expect(obj, "text", str),
                   _mentions(obj), expect(obj, "at", str), expect(obj, "citecheck", str, optional=True, default=""))


def parse_resolve(obj: dict) -> Resolve:
    """A ``resolve`` record (version and event already checked), field by field."""
    return Resolve(_text(obj, "thread"), _text(obj, "by"), expect(obj, "at", str),
                   expect(obj, "citecheck", str, optional=True, default=""))


# --- threads --------------------------------------------------------------------------------------


def thread_item(thread: str) -> ItemKey | None:
    """The item a thread is about, or None for a thread about a whole answer (its key is the answer id)."""
    try:
        return parse_item_key(thread)
    except ValueError:
        return None


def thread_answer(thread: str) -> str:
    """The answer id a thread belongs to, item thread or answer thread."""
    key = thread_item(thread)
    return thread if key is None else key.answer_id


@dataclass(frozen=True, slots=True)
class Thread:
    key: str
    comments: tuple[Comment, ...]  # in the order written
    resolved_by: str = ""  # who resolved it, "" while open
    resolved_at: str = ""

    @property
    def open(self) -> bool:
        return not self.resolved_by

    @property
    def item(self) -> ItemKey | None:
        return thread_item(self.key)


def threads(events: Iterable[object]) -> dict[str, Thread]:
    """Every thread with at least one comment, by key, in the order their first comment was written.
    ``events``: the store's records in the order written (other kinds are passed over)."""
    comments: dict[str, list[Comment]] = {}
    last_resolve: dict[str, Resolve | None] = {}
    for event in events:
        if isinstance(event, Comment):
            comments.setdefault(event.thread, []).append(event)
            last_resolve[event.thread] = None  # a comment after a resolve reopens the thread
        elif isinstance(event, Resolve) and event.thread in comments:
            last_resolve[event.thread] = event
    out = {}
    for key, said in comments.items():
        closed = last_resolve.get(key)
        out[key] = Thread(key, tuple(said), closed.by if closed else "", closed.at if closed else "")
    return out


def open_threads(all_threads: Mapping[str, Thread]) -> list[Thread]:
    """The threads not resolved, the most recently commented first."""
    return sorted((t for t in all_threads.values() if t.open), key=lambda t: t.comments[-1].at, reverse=True)


def labelled_keys(labelled_items: Iterable[str], answer_items: Mapping[str, Collection[str]] | None = None) -> set[str]:
    """The thread keys a reviewer has labelled: the item keys of ``labelled_items``, and each answer
    id of ``answer_items`` (answer id -> its item keys) whose every item is among them."""
    done = set(labelled_items)
    answers = {a for a, keys in (answer_items or {}).items() if keys and all(k in done for k in keys)}
    return done | answers


def shows_thread(blind: bool, labelled: bool) -> bool:
    """Whether a reviewer may see a thread (and write in it): always outside blind mode; in blind
    mode only once they have labelled what the thread is about."""
    return labelled or not blind


def visible_threads(all_threads: Mapping[str, Thread], blind: bool, labelled: Collection[str]) -> dict[str, Thread]:
    """The threads a reviewer may see.  Outside blind mode: all of them.  In blind mode only those
    whose key is in ``labelled`` (:func:`labelled_keys`: an item thread once the reviewer has
    labelled the item, an answer thread once they have labelled every item of the answer), so no
    comment is shown before the reviewer's own label is given."""
    return {k: t for k, t in all_threads.items() if shows_thread(blind, k in labelled)}


def mentions_of(all_threads: Mapping[str, Thread], reviewer: str) -> list[Comment]:
    """The comments that mention ``reviewer``, in the order written per thread.  Pass the threads
    :func:`visible_threads` gives that reviewer, so a mention does not leak a hidden comment."""
    return [c for t in all_threads.values() for c in t.comments if reviewer in c.mentions]
