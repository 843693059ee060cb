"""Who may lead, for the pages: the role of whoever uses the app (core/citecheck/review/roles.py)
and the gate a lead's page or action calls (``require_lead``)."""

from __future__ import annotations

import streamlit as st
from citecheck.review import roles
from citecheck.review.html import notice_html
from citecheck.web.stamps import stamps

from pages._common import identity, settings, signed_in_user


@st.cache_data(max_entries=4, show_spinner=False)
def _roles(path: str | None, stamp: tuple) -> tuple[roles.Roles, str | None]:
    """The roles file (read again when it changes), or no roles and why it cannot be read."""
    try:
        return roles.load(path), None
    except roles.RolesError as exc:
        return roles.Roles(source=path or ""), f"{exc} Until it is fixed nobody is a lead."


def current() -> roles.Role:
    """The role of the person using this session."""
    path = settings().roles
    found, problem = _roles(str(path) if path else None, stamps([path]) if path else ())
    if problem:
        st.html(notice_html("error", problem))
    return roles.role_of(identity(), found, signed_in_user())


def require_lead(what: str = "This page") -> roles.Role:
    """Go on for a lead; for a reviewer, say which role ``what`` needs and stop the page."""
    role = current()
    message = roles.needs_lead(role, what)
    if message:
        st.html(notice_html("warning", message))
        st.stop()
    return role
