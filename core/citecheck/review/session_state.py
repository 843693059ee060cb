"""The review page's keys in the session state, typed: the one place their names are written.

``st.session_state`` (a plain dict in the tests) holds what the page keeps between runs.  Reading
``state["answer_id"]`` everywhere left sixteen copies of one string and no type; :class:`ReviewState`
wraps the mapping and gives each key as an attribute with its type and default, so a misspelt
key is an AttributeError and mypy knows what ``focus`` holds.  Widget keys (``reviewer_box``,
``filter_box``, ``blind``) are here too: Streamlit writes them, the callbacks read them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, MutableMapping
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


class Acting:
    """What a session's callbacks share across Streamlit's script threads (:func:`acting`): the
    lock they act under, and what the last few presses did, by press (what the button does, the
    drawing it was pressed on, the item), for a repeat of the press to say and do again."""

    __slots__ = ("lock", "_done")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._done: OrderedDict[Hashable, Any] = OrderedDict()

    def __enter__(self) -> Acting:
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def did(self, press: Hashable | None, outcome: Any) -> None:
        """Record what ``press`` did; nothing for None (a press with no drawing).  Touches no session
        key: a thread told to stop is stopped at its next use of the session, and this must outlive it."""
        if press is None:
            return
        self._done[press] = outcome
        self._done.move_to_end(press)
        while len(self._done) > 16:
            self._done.popitem(last=False)

    def done(self, press: Hashable | None) -> Any:
        """What ``press`` did, or None when it has not acted (or ``press`` is None: not drawn)."""
        return self._done.get(press) if press is not None else None


_ACTING = "_cc_acting"  # the session's :class:`Acting`
_MAKING = threading.Lock()  # held only to make a session's :class:`Acting` once


def acting(state: State) -> Acting:
    """The session's :class:`Acting`; every review callback runs inside ``with acting(state):``.

    A callback can be cut short and called again for the same press, and two can run at once:
    Streamlit stops a callback at its next access of the session state when a newer message has
    arrived, and its next run calls the callbacks again with the press's trigger; with fast reruns
    (``runner.fastReruns``, on by default) the newer message's run starts in a new thread while the
    old one may still be in its callback.  One key press so ran two label saves at once: each read
    the labels before the other had appended, and both were recorded (CI).  Held across the read,
    the check and the append, the second call waits, sees the first's label, and records nothing;
    what the first did (:meth:`Acting.did`) lets it say "Saved" rather than "already labelled"."""
    found = state.get(_ACTING)
    if found is None:
        with _MAKING:
            found = state.get(_ACTING)
            if found is None:
                found = state[_ACTING] = Acting()
    return found


def once(state: State, press: Hashable, act: Callable[[], T], keep: Callable[[T], bool] = lambda _: True) -> T:
    """What ``press`` (a button, the drawing it was pressed on, what it acts on) did: ``act()`` the
    first time, under the session's lock; the same result again when the press comes again (a
    callback called twice, the first cut short before it could say what it did), ``act`` not run.
    A result ``keep`` refuses (a failure to try again) is not recorded.  The caller then says and
    shows the result, which a call cut short may not have done."""
    with acting(state) as act_lock:
        done = act_lock.done(press)
        if done is None:
            done = act()
            if keep(done):
                act_lock.did(press, done)
        return done
