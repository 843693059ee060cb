"""The review page's keys in the session state, typed: the one place their names are written.

``st.session_state`` (a plain dict in the tests) holds what the page keeps between runs.  Reading
``state["answer_id"]`` everywhere left sixteen copies of one string and no type; :class:`ReviewState`
wraps the mapping and gives each key as an attribute with its type and default, so a misspelt
key is an AttributeError and mypy knows what ``focus`` holds.  Widget keys (``reviewer_box``,
``filter_box``, ``blind``) are here too: Streamlit writes them, the callbacks read them.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

State = MutableMapping[str, Any]  # st.session_state, or a dict
Params = MutableMapping[str, Any]  # st.query_params, or a dict
Flash = tuple[str, str]  # (kind, text): a notice the next run shows once


class _Key(Generic[T]):
    """One session key as a typed attribute of :class:`ReviewState`."""

    def __init__(self, key: str, default: T):
        self.key = key
        self.default = default

    @overload
    def __get__(self, obj: None, owner: type) -> _Key[T]: ...

    @overload
    def __get__(self, obj: ReviewState, owner: type) -> T: ...

    def __get__(self, obj: ReviewState | None, owner: type) -> T | _Key[T]:
        if obj is None:
            return self
        return obj.raw.get(self.key, self.default)

    def __set__(self, obj: ReviewState, value: T) -> None:
        obj.raw[self.key] = value


class ReviewState:
    """Typed access to the review page's session keys (``ReviewState(st.session_state)``)."""

    __slots__ = ("raw",)

    answer_id: _Key[str | None] = _Key("answer_id", None)  # the answer open
    focus: _Key[int] = _Key("focus", 0)  # its focused item, 0-based
    moves: _Key[int] = _Key("moves", 0)  # focus moves so far: the key listener scrolls on each
    linked: _Key[str | None] = _Key("linked", None)  # the ?answer= link already followed
    flash: _Key[Flash | None] = _Key("flash", None)
    reviewer_name: _Key[str] = _Key("reviewer_name", "")
    reviewer_box: _Key[str] = _Key("reviewer_box", "")  # the name box (a widget)
    filter_name: _Key[str | None] = _Key("filter_name", None)
    filter_box: _Key[str | None] = _Key("filter_box", None)  # the filter radio (a widget)
    blind_on: _Key[bool | None] = _Key("blind_on", None)
    blind: _Key[bool | None] = _Key("blind", None)  # the blind-mode toggle (a widget)
    session_token: _Key[str | None] = _Key("session_token", None)  # held keys across a restart
    undone: _Key[str | None] = _Key("undone", None)  # the drawing whose Undo has acted (label_actions.undo)

    def __init__(self, raw: State):
        self.raw = raw

    def has(self, attribute: str) -> bool:
        """Whether the session holds the key behind ``attribute`` (a widget not drawn yet does not)."""
        return getattr(type(self), attribute).key in self.raw

    def take(self, attribute: str) -> Any:
        """The value of ``attribute``, removed from the session (a notice shown once, a flag read once)."""
        key: _Key[Any] = getattr(type(self), attribute)
        return self.raw.pop(key.key, key.default)

    def note(self, item_key: str, reviewer: str) -> str:
        """``reviewer``'s note box of an item (a widget keyed by :func:`note_key`)."""
        return self.raw.get(note_key(item_key, reviewer), "")


def note_key(item_key: str, reviewer: str) -> str:
    """The widget key of an item's note box for one reviewer: a name changed in the session does
    not carry one reviewer's note (or the note of their saved label, which the box shows) to another."""
    return f"note-{len(reviewer)}:{reviewer}-{item_key}"
