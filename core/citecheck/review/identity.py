"""Who is labelling: the signed-in user, else the name in the URL, else the one kept in the session.

The name is kept in the page's URL (``?reviewer=``) as well as the session, so it survives a
page switch (the session), a reload and a server restart (the URL, which the open tab keeps).
When the deployment has Streamlit's OIDC login configured (an ``[auth]`` section in
``.streamlit/secrets.toml``), ``st.user`` carries ``is_logged_in``: the signed-in user's email
is then the reviewer, no name can be typed and the URL's name is ignored; a user who has not
signed in is nobody until they do (docs/app.md).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_NAME = 80


@dataclass(frozen=True, slots=True)
class Identity:
    name: str  # "" when nobody is known yet
    source: str  # "login", "signed-out" (login configured, not signed in), "url", "session" or "none"

    @property
    def signed_in(self) -> bool:
        return self.source == "login"

    @property
    def by_login(self) -> bool:
        """The deployment signs reviewers in: no name box, and no name from the URL."""
        return self.source in ("login", "signed-out")


def clean_name(value: object) -> str:
    """A typed or linked name: stripped, control characters removed, at most MAX_NAME characters."""
    text = value if isinstance(value, str) else ""
    return "".join(ch for ch in text if ch.isprintable()).strip()[:MAX_NAME]


def resolve(url_value: object, session_value: object, user: dict | None = None) -> Identity:
    """The reviewer for this run.  ``user`` is the signed-in user's claims (``st.user``) or None;
    it has ``is_logged_in`` only when the deployment configured the login."""
    if user and "is_logged_in" in user:
        email = clean_name(user.get("email")) if user.get("is_logged_in") is True else ""
        return Identity(email, "login") if email else Identity("", "signed-out")
    for value, source in ((session_value, "session"), (url_value, "url")):
        name = clean_name(value)
        if name:
            return Identity(name, source)
    return Identity("", "none")


def how_to_name(who: Identity) -> str:
    """What a reviewer without a name does to get one, for the page's messages."""
    return "Sign in (sidebar)" if who.by_login else "Enter your name in the sidebar"


AUTHLIB_MISSING = ("Sign-in is configured ([auth] in .streamlit/secrets.toml) but Authlib 1.3.2 or later, which "
                   "Streamlit's login needs, is not installed. Install it with: pip install -e '.[auth]' "
                   "(docs/app.md, Signing in), then restart the app.")


def login_problem(who: Identity, authlib_ready: bool) -> str | None:
    """Why a reviewer who must sign in cannot (the login library missing), else None."""
    return AUTHLIB_MISSING if who.source == "signed-out" and not authlib_ready else None
