"""Where the review page is, kept in the session and the address: the reviewer, the filter and blind
mode, the answer open and the focused item, and each move the buttons and keys make.

Every function takes the session's state and the page's address as mappings (``st.session_state``
and ``st.query_params`` on the page, plain dicts in the tests), so the page only lays out widgets
and passes these functions as their callbacks.  A move that cannot be made leaves the place as it
is and sets ``state["flash"]``: a ``(kind, text)`` notice the next run shows once.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence

from citecheck.labelling import labels
from citecheck.labelling.items import Item
from citecheck.review import address
from citecheck.review.identity import Identity, clean_name

State = MutableMapping  # st.session_state, or a dict
Params = MutableMapping  # st.query_params, or a dict


# --- reviewer, filter and blind mode ----------------------------------------------------------------


def settle(state: State, params: Params, who: Identity) -> str:
    """Make the session and the address agree on the reviewer, the answer filter and blind mode
    (the session wins, a page switch leaves the address bare); returns the reviewer's name."""
    if who.name and not who.by_login:
        state["reviewer_name"] = who.name
    reviewer = who.name
    if reviewer and not who.by_login and params.get("reviewer") != reviewer:
        params["reviewer"] = reviewer
    if "reviewer_box" not in state:  # widget state is dropped on a page switch; the name is not
        state["reviewer_box"] = reviewer
    state["filter_name"] = address.filter_name(params.get("show"), state.get("filter_name"))
    address.sync(params, "show", address.show_param(state["filter_name"]))
    if "filter_box" not in state:
        state["filter_box"] = state["filter_name"]
    state["blind_on"] = address.blind(params.get("blind"), state.get("blind_on"))
    address.sync(params, "blind", address.blind_param(state["blind_on"]))
    if "blind" not in state:
        state["blind"] = state["blind_on"]
    return reviewer


def rename(state: State, params: Params) -> None:
    """The name box changed: keep the cleaned name in the session and the address."""
    name = clean_name(state.get("reviewer_box", ""))
    state["reviewer_name"] = name
    if name:
        params["reviewer"] = name
    elif "reviewer" in params:
        del params["reviewer"]


def refilter(state: State, params: Params) -> None:
    state["filter_name"] = state["filter_box"]
    address.sync(params, "show", address.show_param(state["filter_name"]))


def reblind(state: State, params: Params) -> None:
    state["blind_on"] = state["blind"]
    address.sync(params, "blind", address.blind_param(state["blind_on"]))


# --- the answer open and its focused item -------------------------------------------------------------


def first_open(items: Sequence[Item], current: Mapping, reviewer: str) -> int:
    """Where to put the focus on opening an answer: its first item this reviewer has not labelled."""
    return next((n for n, item in enumerate(items) if not labels.is_done(item, current, reviewer)), 0)


def linked_focus(raw: object, items: Sequence[Item], current: Mapping, reviewer: str) -> int:
    """The focus the address names (``?item=N``, 1-based: what the open tab showed), else the first
    open item."""
    raw = raw if isinstance(raw, str) else ""
    n = int(raw) - 1 if raw.isascii() and raw.isdigit() else -1
    return n if 0 <= n < len(items) else first_open(items, current, reviewer)


def jump(state: State, data, wanted: str) -> str | None:
    """Open the answer the reviewer typed; the error to show when there is no such answer."""
    wanted = wanted.strip()
    if not wanted:
        return None
    if data.get(wanted) is None:
        return f"No answer with id {wanted!r} in the loaded logs."
    state["answer_id"] = wanted
    state["focus"] = 0
    return None


def open_answer(state: State, params: Params, data, ids: Sequence[str], current: Mapping, reviewer: str):
    """Settle which answer is open and which of its items has the focus, and write both into the
    address (``?answer=``, ``?item=``); returns the answer's checked result and its items.

    A link (a deep link, a reload, a restarted server, the Failures page) opens its answer once;
    after that the session's answer stands until the reviewer moves."""
    asked = params.get("answer")
    if asked and asked != state.get("linked") and data.get(asked) is not None:
        state["answer_id"] = asked
        state["focus"] = linked_focus(params.get("item", ""), data.items(asked), current, reviewer)
    elif "answer_id" not in state or data.get(state["answer_id"]) is None:
        state["answer_id"] = ids[0] if ids else data.answer_ids[0]
        state["focus"] = first_open(data.items(state["answer_id"]), current, reviewer)
    if asked != state["answer_id"]:
        params["answer"] = state["answer_id"]
    state["linked"] = state["answer_id"]
    items = data.items(state["answer_id"])
    state["focus"] = min(state.get("focus", 0), max(len(items) - 1, 0))
    if params.get("item") != str(state["focus"] + 1):
        params["item"] = str(state["focus"] + 1)
    return data.get(state["answer_id"]), items


# --- moves --------------------------------------------------------------------------------------------


def moved(state: State) -> None:
    """Count focus moves, so the keyboard script runs again (and scrolls) even onto the same item."""
    state["moves"] = state.get("moves", 0) + 1


def go(state: State, answer_id: str) -> None:
    state["answer_id"] = answer_id
    state["focus"] = 0
    moved(state)


def step_answer(state: State, ids: Sequence[str], where: Mapping[str, int], delta: int) -> None:
    """N/P: the answer ``delta`` places on in ``ids``; it does not wrap round."""
    if not ids:
        return
    pos = where.get(state["answer_id"], -1)
    to = pos + delta
    if not 0 <= to < len(ids):
        end = "last" if delta > 0 else "first"
        state["flash"] = ("info", f"This is the {end} answer ({pos + 1} of {len(ids)}); it does not wrap round. "
                                  "Press U for your next unlabelled item.")
        return
    go(state, ids[to])


def step_item(state: State, data, delta: int) -> None:
    """J/K: the item ``delta`` places on in the open answer (the session's answer now, not the one
    drawn last); it does not wrap round."""
    items = data.items(state["answer_id"])
    if not items:
        return
    to = state["focus"] + delta
    if not 0 <= to < len(items):
        state["flash"] = ("info", f"This is the {'last' if delta > 0 else 'first'} item of this answer; "
                                  "N/P change answer, U goes to your next unlabelled item.")
        return
    state["focus"] = to
    moved(state)


def finished_text(overlap: int, in_sample: bool) -> str:
    return ("Your queue is finished: every item" + (" of the sample" if in_sample else " here")
            + f" is labelled by you or already has {overlap} reviewer(s). Thank you!")


def arrive(state: State, found: tuple[str, int] | None, finished: str) -> bool:
    """Focus ``found`` (answer id, item), the queue's next item; False and ``finished`` flashed
    when the queue has none."""
    if found is None:
        state["flash"] = ("success", finished)
        return False
    state["answer_id"], state["focus"] = found
    moved(state)
    return True
