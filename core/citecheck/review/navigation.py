"""Where the review page is, kept in the session and the address: the reviewer, the filter and blind
mode, the answer open and the focused item, and each move the buttons and keys make.

Every function takes the session's state and the page's address as mappings (``st.session_state``
and ``st.query_params`` on the page, plain dicts in the tests), so the page only lays out widgets
and passes these functions as their callbacks.  The session's keys are read and written through
:class:`~citecheck.review.session_state.ReviewState`.  A move that cannot be made leaves the place
as it is and sets its ``flash``: a ``(kind, text)`` notice the next run shows once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from citecheck.checking import answer_problems
from citecheck.checking.checker import AnswerResult
from citecheck.labelling import labels
from citecheck.labelling.dataset import AnswerSource
from citecheck.labelling.items import Item
from citecheck.review import address
from citecheck.review.identity import Identity, clean_name
from citecheck.review.session_state import Params, ReviewState, State, acting, once

# --- reviewer, filter and blind mode ----------------------------------------------------------------


def settle(state: State, params: Params, who: Identity) -> str:
    """Make the session and the address agree on the reviewer, the answer filter and blind mode
    (the session wins, a page switch leaves the address bare); returns the reviewer's name."""
    session = ReviewState(state)
    if who.name and not who.by_login:
        session.reviewer_name = who.name
    reviewer = who.name
    if reviewer and not who.by_login and params.get("reviewer") != reviewer:
        params["reviewer"] = reviewer
    if not session.has("reviewer_box"):  # widget state is dropped on a page switch; the name is not
        session.reviewer_box = reviewer
    session.filter_name = address.filter_name(params.get("show"), session.filter_name)
    address.sync(params, "show", address.show_param(session.filter_name))
    if not session.has("filter_box"):
        session.filter_box = session.filter_name
    session.blind_on = address.blind(params.get("blind"), session.blind_on)
    address.sync(params, "blind", address.blind_param(session.blind_on))
    if not session.has("blind"):
        session.blind = session.blind_on
    return reviewer


def rename(state: State, params: Params) -> None:
    """The name box changed: keep the cleaned name in the session and the address (never while
    another of the session's callbacks, a label's save, reads the name: :func:`acting`)."""
    with acting(state):
        session = ReviewState(state)
        name = clean_name(session.reviewer_box)
        session.reviewer_name = name
        if name:
            params["reviewer"] = name
        elif "reviewer" in params:
            del params["reviewer"]


def refilter(state: State, params: Params) -> None:
    """The "Show answers" choice changed: kept in the session and the address (under :func:`acting`)."""
    with acting(state):
        session = ReviewState(state)
        session.filter_name = session.filter_box
        address.sync(params, "show", address.show_param(session.filter_name))


def reblind(state: State, params: Params) -> None:
    """Blind mode was switched: kept in the session and the address (under :func:`acting`)."""
    with acting(state):
        session = ReviewState(state)
        session.blind_on = session.blind
        address.sync(params, "blind", address.blind_param(session.blind_on))


# --- the answer open and its focused item -------------------------------------------------------------


def first_open(items: Sequence[Item], current: dict[tuple[str, str], labels.Label], reviewer: str) -> int:
    """Where to put the focus on opening an answer: its first item this reviewer has not labelled."""
    return next((n for n, item in enumerate(items) if not labels.is_done(item, current, reviewer)), 0)


def linked_focus(raw: object, items: Sequence[Item], current: dict[tuple[str, str], labels.Label],
                 reviewer: str) -> int:
    """The focus the address names (``?item=N``, 1-based: what the open tab showed), else the first
    open item."""
    raw = raw if isinstance(raw, str) else ""
    n = int(raw) - 1 if raw.isascii() and raw.isdigit() else -1
    return n if 0 <= n < len(items) else first_open(items, current, reviewer)


def jump(state: State, data: AnswerSource, wanted: str) -> str | None:
    """Open the answer the reviewer typed; the error to show when there is no such answer."""
    wanted = wanted.strip()
    if not wanted:
        return None
    if data.get(wanted) is None:
        return f"No answer with id {wanted!r} in the loaded logs."
    session = ReviewState(state)
    session.answer_id = wanted
    session.focus = 0
    return None


def open_answer(state: State, params: Params, data: AnswerSource, ids: Sequence[str],
                current: dict[tuple[str, str], labels.Label], reviewer: str,
                start: Callable[[], tuple[str, int] | None] | None = None) -> tuple[AnswerResult, list[Item]]:
    """Settle which answer is open and which of its items has the focus, and write both into the
    address (``?answer=``, ``?item=``); returns the answer's checked result and its items.

    A link (a deep link, a reload, a restarted server, the Failures page) opens its answer once;
    after that the session's answer stands until the reviewer moves.  Without either, a session
    opens where ``start()`` says (the reviewer's queue: their assigned work first, as Resume), else
    at the first answer."""
    session = ReviewState(state)
    asked = params.get("answer")
    answer_id = session.answer_id
    if asked and asked != session.linked and data.get(asked) is not None:
        answer_id = session.answer_id = asked
        session.focus = linked_focus(params.get("item", ""), data.items(asked), current, reviewer)
    elif answer_id is None or data.get(answer_id) is None:
        head = start() if start is not None else None
        if head is not None and data.get(head[0]) is not None:
            answer_id, session.focus = head
            session.answer_id = answer_id
        else:
            answer_id = session.answer_id = ids[0] if ids else data.answer_ids[0]
            session.focus = first_open(data.items(answer_id), current, reviewer)
    if asked and asked != session.linked and asked != answer_id:  # a link to an answer not loaded: said, not hidden
        session.flash = ("warning", missing_answer_text(asked, answer_id))
    if asked != answer_id:
        params["answer"] = answer_id
    session.linked = answer_id
    items = data.items(answer_id)
    session.focus = min(session.focus, max(len(items) - 1, 0))
    if params.get("item") != str(session.focus + 1):
        params["item"] = str(session.focus + 1)
    result = data.get(answer_id)
    assert result is not None  # (the answer was found above)
    return result, items


def missing_answer_text(asked: str, opened: str) -> str:
    """What the page says when the address names an answer the loaded logs do not hold (an old link,
    a log changed since, another server's link): it opened another answer instead."""
    shown = asked if len(asked) <= 120 else asked[:120] + "\u2026"
    return (f"The link asks for answer {shown}, which is not in the loaded logs (an old link, or the log changed "
            f"since); {opened} is shown instead.")


# --- moves --------------------------------------------------------------------------------------------


def moved(state: State) -> None:
    """Count focus moves, so the keyboard script runs again (and scrolls) even onto the same item."""
    session = ReviewState(state)
    session.moves = session.moves + 1


def open_failing(state: State, data: AnswerSource, answer_id: str) -> int:
    """Open ``answer_id`` at the item that shows its first problem (``checking.answer_problems``;
    its first item when none does); returns that item's position."""
    result = data.get(answer_id)
    focus = (answer_problems.first_failing_item(result, data.items(answer_id)) if result is not None else None) or 0
    open_at(state, answer_id, focus)
    return focus


def open_at(state: State, answer_id: str, focus: int) -> None:
    """Open ``answer_id`` with its item ``focus`` focused and scrolled into view (the Failures page
    sends a product owner to an answer's first failing item)."""
    session = ReviewState(state)
    session.answer_id = session.linked = answer_id
    session.focus = max(focus, 0)
    moved(state)


def go(state: State, answer_id: str) -> None:
    session = ReviewState(state)
    session.answer_id = answer_id
    session.focus = 0
    moved(state)


def step_answer(state: State, ids: Sequence[str], where: Mapping[str, int], delta: int, drawn: str) -> None:
    """N/P: the answer ``delta`` places on in ``ids``; it does not wrap round.  ``drawn`` is the
    answer the button was drawn on: the step is taken from it, so a press that Streamlit delivers
    twice (it can call a button's callback again when a run is cut short) moves once."""
    with acting(state):  # one callback of this session at a time (session_state.acting)
        if not ids:
            return
        session = ReviewState(state)
        pos = where.get(drawn, -1)
        to = pos + delta
        if not 0 <= to < len(ids):
            end = "last" if delta > 0 else "first"
            session.flash = ("info", f"This is the {end} answer ({pos + 1:,} of {len(ids):,}); it does not wrap round. "
                                      "Press U for your next unlabelled item.")
            return
        if session.answer_id == ids[to]:
            return  # the same press again: already there
        go(state, ids[to])


def step_item(state: State, data: AnswerSource, delta: int, drawn: tuple[str, int]) -> None:
    """J/K: the item ``delta`` places on in the open answer; it does not wrap round.  ``drawn`` is
    the (answer, item) the button was drawn on: the step is taken from it, so a press delivered
    twice moves once, and a press drawn on an answer no longer open moves nothing."""
    with acting(state):  # one callback of this session at a time (session_state.acting)
        session = ReviewState(state)
        if drawn[0] != (session.answer_id or ""):
            return
        items = data.items(session.answer_id or "")
        if not items:
            return
        to = drawn[1] + delta
        if not 0 <= to < len(items):
            session.flash = ("info", f"This is the {'last' if delta > 0 else 'first'} item of this answer; "
                                      "N/P change answer, U goes to your next unlabelled item.")
            return
        if session.focus == to:
            return  # the same press again: already there
        session.focus = to
        moved(state)


def finished_text(overlap: int, in_sample: bool) -> str:
    return ("Your queue is finished: every item" + (" of the sample" if in_sample else " here")
            + f" is labelled by you or already has {overlap} reviewer(s). Thank you!")


def resumed_text(answer_id: str, item: int) -> str:
    """What Resume (U) says of the item it focused (the answer id is untrusted: the page escapes it)."""
    return f"Your queue's next item: item {item + 1} of answer {answer_id} (the queue comes round to items you passed over)."


def arrive(state: State, found: tuple[str, int] | None, finished: str) -> bool:
    """Focus ``found`` (answer id, item), the queue's next item; False and ``finished`` flashed
    when the queue has none."""
    session = ReviewState(state)
    if found is None:
        session.flash = ("success", finished)
        return False
    session.answer_id, session.focus = found
    moved(state)
    return True


# --- the Disagreements page's moves and decisions --------------------------------------------------
# Its session keys: dis_at (the disagreement shown), dis_pos (its place when it was decided),
# dis_moves (moves so far: the key listener scrolls on each).  Each button passes the disagreement
# it was drawn on: a press Streamlit delivers twice moves once and records one adjudication.


def step_disagreement(state: State, keys: Sequence[str], drawn: str, delta: int) -> None:
    """J/K on Disagreements: the disagreement ``delta`` places from ``drawn``, the one the button
    was drawn on; nothing when the page has moved on since (the same press again)."""
    from citecheck.labelling.adjudication import step

    with acting(state):
        if state.get("dis_at") != drawn:
            return
        state["dis_at"] = step(list(keys), drawn, delta)
        state["dis_moves"] = state.get("dis_moves", 0) + 1


def decide_disagreement(state: State, keys: Sequence[str], drawn: str, decide: Callable[[], tuple[str, str]]) -> None:
    """1-4 on Disagreements: ``decide()`` records the lead's label for ``drawn`` (the one shown
    when the button was drawn) and gives the notice; once recorded, the next disagreement is shown.
    The same press again, once the page has moved on, records nothing more."""
    from citecheck.labelling.adjudication import after_decision

    with acting(state) as act:
        press = ("adjudicate", drawn, state.get("dis_moves", 0))
        if act.done(press) is None and state.get("dis_at") != drawn:
            return  # (decided by this press already: the page has moved on)
        # (the same press, cut short after it recorded: said and done again; a failure is tried
        # again by the next press, on the same place)
        flash = once(state, press, decide, keep=lambda said: said[0] == "success")
        state["adjudication_flash"] = flash
        if flash[0] == "success":
            position = list(keys).index(drawn)
            state["dis_at"], state["dis_pos"] = after_decision(list(keys), position), position
            state["dis_moves"] = state.get("dis_moves", 0) + 1
