"""Who may lead: the roles file (``--roles FILE``, docs/app.md "Roles") and the role of whoever is signed in.

With sign-in configured, a reviewer's role decides what they may do: only a **lead** adjudicates,
assigns work and sees the team's figures.  The roles file names leads (and, to be explicit,
reviewers) by email or by group; anyone it does not name is a reviewer::

    roles_version = 1

    [roles]
    "ada@example.org" = "lead"
    "group:labelling-leads" = "lead"     # everyone whose sign-in claims list this group
    "bob@example.org" = "reviewer"       # a reviewer even if a group says lead

An email's own entry wins over its groups' (compared without regard to case); among groups, lead
wins.  Groups come from the ``groups`` claim of the sign-in (a list of names, or one name), when
the identity provider gives it.  Without sign-in (one person, or a trusted network) everyone is a lead.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from citecheck.errors import CitecheckError
from citecheck.review.identity import Identity

ROLES_VERSION = 1
LEAD = "lead"
REVIEWER = "reviewer"
GROUP = "group:"  # the prefix of a group's entry
GROUPS_CLAIM = "groups"


class RolesError(CitecheckError, ValueError):
    """A roles file that cannot be read (the message names the file, the entry and what to write)."""


@dataclass(frozen=True, slots=True)
class Roles:
    people: Mapping[str, str] = field(default_factory=dict)  # email (case-folded) -> role
    groups: Mapping[str, str] = field(default_factory=dict)  # group name -> role
    source: str = ""  # the file, "" when none is configured


@dataclass(frozen=True, slots=True)
class Role:
    name: str  # who ("" when nobody is signed in)
    role: str  # LEAD or REVIEWER
    why: str  # how it was decided, for the page that says it

    @property
    def lead(self) -> bool:
        return self.role == LEAD


def parse_roles(text: str, source: str = "roles file") -> Roles:
    """The roles in ``text`` (TOML); :class:`RolesError` names ``source``, the entry and what to write."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RolesError(f"{source}: not TOML ({exc}); write entries as \"ada@example.org\" = \"lead\" under [roles]") from None
    version = doc.get("roles_version", ROLES_VERSION)
    if version != ROLES_VERSION or type(version) is not int:
        raise RolesError(f"{source}: roles_version {version!r} is not one this citecheck reads ({ROLES_VERSION})")
    unknown = sorted(set(doc) - {"roles_version", "roles"})
    if unknown:
        raise RolesError(f"{source}: unknown key {unknown[0]!r}; the file holds roles_version and a [roles] table")
    table = doc.get("roles", {})
    if not isinstance(table, dict):
        raise RolesError(f"{source}: roles must be a table: write [roles] then \"ada@example.org\" = \"lead\"")
    people: dict[str, str] = {}
    groups: dict[str, str] = {}
    for who, role in table.items():
        if role not in (LEAD, REVIEWER):
            raise RolesError(f"{source}: [roles] {who!r} = {role!r}: a role is \"lead\" or \"reviewer\"")
        name = who.strip()
        if not name or name == GROUP:
            raise RolesError(f"{source}: [roles] has an entry with an empty name; name an email or group:NAME")
        if name.startswith(GROUP):
            groups[name[len(GROUP):].strip()] = role
        else:
            people[name.casefold()] = role
    return Roles(people, groups, source)


def load(path: str | Path | None) -> Roles:
    """The roles file at ``path`` (None: no file, so no leads under sign-in)."""
    if path is None:
        return Roles()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RolesError(f"cannot read the roles file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_roles(text, str(path))


def groups_of(user: Mapping | None) -> tuple[str, ...]:
    """The groups in a sign-in's claims (``groups``: a list of names, or one name), else none."""
    raw = (user or {}).get(GROUPS_CLAIM)
    if isinstance(raw, str):
        raw = [raw]
    return tuple(g for g in raw if isinstance(g, str)) if isinstance(raw, list) else ()


def role_of(who: Identity, roles: Roles, user: Mapping | None = None) -> Role:
    """The role of the person using the app (``user``: their sign-in's claims, for the groups)."""
    if not who.by_login:
        return Role(who.name, LEAD, "no sign-in is configured, so everyone is a lead")
    if not who.signed_in:
        return Role("", REVIEWER, "nobody is signed in")
    own = roles.people.get(who.name.casefold())
    if own is not None:
        return Role(who.name, own, f"the roles file names {who.name} a {own}")
    leading = sorted(g for g in groups_of(user) if roles.groups.get(g) == LEAD)
    if leading:
        return Role(who.name, LEAD, f"the roles file makes group {leading[0]} a lead")
    return Role(who.name, REVIEWER, "the roles file does not name them a lead" if roles.source else
                "no roles file is configured, so nobody is a lead")


def needs_lead(role: Role, what: str) -> str | None:
    """What a page says to someone who may not do ``what`` (None for a lead)."""
    if role.lead:
        return None
    name = role.name or "nobody"
    return (f"{what[:1].upper()}{what[1:]} needs the lead role (you are signed in as {name}, a reviewer). "
            "Ask a lead to add you to the roles file.")
