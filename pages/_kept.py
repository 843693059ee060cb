"""Widget choices kept where Streamlit drops them: in the session under another key (a page switch
drops a widget's own state) and in the page's address (a reload or a restart gives a new session).
The rules for reading them back are in citecheck.judging.calibration_address."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import calibration_address
from citecheck.review.address import sync

LABEL_SETS = list(calibration_address.LABEL_SETS)
SPLITS = list(calibration_address.SPLITS)
state = st.session_state


def _remember(key: str, params_of) -> None:
    """Copy widget ``key``'s value where a page switch does not drop it, and into the address."""
    state[f"{key}!"] = state[key]
    for name, value in params_of(state[key]).items():
        sync(st.query_params, name, value)


def keep(key: str, choices: list, url_value, params_of) -> dict:
    """Give widget ``key`` the kept choice (the session's, else the address's, else the first) and
    return the widget's ``on_change`` argument, which keeps the next choice the same way."""
    if key not in state or state[key] not in choices:
        state[key] = calibration_address.chosen(url_value, state.get(f"{key}!", calibration_address.ABSENT), choices)
    _remember(key, params_of)
    return {"on_change": lambda: _remember(key, params_of)}


def kept(key: str, name: str, choices: list, label=str) -> dict:
    """``keep`` for a choice held in one address parameter, ``?name=``, written as ``label(choice)``."""
    url_value = calibration_address.from_param(st.query_params.get(name), choices, label)
    return keep(key, choices, url_value, lambda v: {name: calibration_address.param(v, choices, label)})


def kept_run(key: str, runs: list) -> dict:
    """``keep`` for the judge run, held in ``?judge=`` and ``?prompt=``."""
    return keep(key, runs, calibration_address.run_from(st.query_params.get("judge"), st.query_params.get("prompt")),
                 lambda v: dict(zip(("judge", "prompt"), calibration_address.run_params(v, runs))))
