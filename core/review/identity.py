"""Who is labelling: the signed-in user, else the name in the URL, else the one kept in the session.

The name is kept in the page's URL (``?reviewer=``) as well as the session, so it survives a
page switch (the session), a reload and a server restart (the URL, which the open tab keeps).
When the deployment has Streamlit's OIDC login configured, the signed-in user's email is the
reviewer and no name can be typed (docs/app.md).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_NAME = 80


@dataclass(frozen=True, slots=True)
class Identity:
    name: str  # "" when nobody is known yet
    source: str  # "login", "url", "session" or "none"

    @property
    def signed_in(self) -> bool:
        return self.source == "login"


def clean_name(value: object) -> str:
    """A typed or linked name: stripped, control characters removed, at most MAX_NAME characters."""
    text = value if isinstance(value, str) else ""
    return "".join(ch for ch in text if ch.isprintable()).strip()[:MAX_NAME]


def resolve(url_value: object, session_value: object, user: dict | None = None) -> Identity:
    """The reviewer for this run.  ``user`` is the signed-in user's claims (``st.user``) or None."""
    if user and user.get("is_logged_in") and clean_name(user.get("email")):
        return Identity(clean_name(user.get("email")), "login")
    for value, source in ((session_value, "session"), (url_value, "url")):
        name = clean_name(value)
        if name:
            return Identity(name, source)
    return Identity("", "none")
