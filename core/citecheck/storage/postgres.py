"""Append-only event streams on PostgreSQL: labels and verdicts shared by a team (docs/labels-format.md).

A row of ``citecheck_events`` holds exactly the JSON object a line of the labels or verdicts file
holds, in a named stream (``labels`` or ``verdicts``).  Rows are only ever inserted; readers get
them in insertion order (``seq``) and apply the same latest-wins rules as to a file.  Like a line
of a file, every append is stored, even one identical to an earlier record.  Each row carries
``event_sha256``, the SHA-256 of its stream and canonical JSON (:func:`event_id`), which
``citecheck labels copy`` uses to tell which records a destination already holds.

The schema belongs to citecheck: :data:`MIGRATIONS` are applied in order, under an advisory lock,
the first time a process opens a database, and ``citecheck_schema`` records which were applied.
A database migrated by a newer citecheck is refused with a message saying so.

The password of a URL is never put into an error or a display string: see :func:`redact`.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
from typing import TYPE_CHECKING, NamedTuple, TypeGuard
from urllib.parse import unquote, urlsplit

from citecheck.errors import DatabaseError

if TYPE_CHECKING:  # imported when the first pool is made (see _pool): most commands never open a database
    from psycopg_pool import ConnectionPool

SCHEMES = ("postgresql://", "postgres://")
SCHEMA_VERSION = 2
_LOCK_KEY = 7_201_512  # pg_advisory_xact_lock key that serialises citecheck migrations

# Each migration is the list of statements that takes the schema from version n-1 to n.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE citecheck_events (
               seq bigserial PRIMARY KEY,
               stream text NOT NULL,
               event_sha256 text NOT NULL,
               record json NOT NULL,
               stored_at timestamptz NOT NULL DEFAULT now())""",
        "CREATE INDEX citecheck_events_stream_seq ON citecheck_events (stream, seq)",
        "CREATE INDEX citecheck_events_stream_sha ON citecheck_events (stream, event_sha256)",
    ),
    2: (
        # the item key, for looking up one item's events without reading the stream
        "ALTER TABLE citecheck_events ADD COLUMN item text",
        "UPDATE citecheck_events SET item = record->>'item' WHERE item IS NULL",
        "CREATE INDEX citecheck_events_stream_item ON citecheck_events (stream, item)",
    ),
}


def is_url(target: object) -> TypeGuard[str]:
    return isinstance(target, str) and target.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` with any password (in the user part or a ``password=`` parameter) replaced by
    ``***``: the only form of a URL citecheck shows."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hosts = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:***@{hosts}"
    query = "&".join(f"{k}=***" if k == "password" else pair
                     for pair in parts.query.split("&") if pair for k in [pair.split("=", 1)[0]])
    return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
            + (f"#{parts.fragment}" if parts.fragment else ""))


def _secrets(url: str) -> list[str]:
    parts = urlsplit(url)
    found = []
    userinfo = parts.netloc.rsplit("@", 1)[0] if "@" in parts.netloc else ""
    if ":" in userinfo:
        found.append(userinfo.split(":", 1)[1])
    found += [pair.split("=", 1)[1] for pair in parts.query.split("&") if pair.startswith("password=")]
    return [v for s in found if s for v in {s, unquote(s)}]


def _scrub(message: str, url: str) -> str:
    message = message.replace(url, redact(url))
    for secret in sorted(_secrets(url), key=len, reverse=True):
        message = message.replace(secret, "***")
    return message


def event_id(stream: str, record: dict) -> str:
    canonical = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{stream}\n{canonical}".encode()).hexdigest()


def migrate(conn) -> int:
    """Bring the schema up to :data:`SCHEMA_VERSION`; returns the version found before."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("""CREATE TABLE IF NOT EXISTS citecheck_schema (
                            version int PRIMARY KEY,
                            applied_at timestamptz NOT NULL DEFAULT now())""")
        found = conn.execute("SELECT coalesce(max(version), 0) FROM citecheck_schema").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise DatabaseError(f"the database's citecheck schema is version {found}; this citecheck knows up to "
                             f"{SCHEMA_VERSION}: upgrade citecheck")
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO citecheck_schema (version) VALUES (%s)", (version,))
    return found


# --- connections: one pool per database per process -------------------------------------------------

_pools: dict[tuple[int, str], ConnectionPool] = {}
_orphans: list[ConnectionPool] = []  # pools inherited through fork: kept alive, never used (their sockets are the parent's)
_guard = threading.Lock()


def _after_fork() -> None:
    _orphans.extend(_pools.values())
    _pools.clear()


os.register_at_fork(after_in_child=_after_fork)
atexit.register(lambda: close_all())


def _pool(url: str):
    key = (os.getpid(), url)
    with _guard:
        pool = _pools.get(key)
        if pool is None:
            import psycopg
            from psycopg_pool import ConnectionPool

            try:
                with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
                    migrate(conn)
            except psycopg.Error as exc:
                raise DatabaseError(f"cannot use {redact(url)}: {_scrub(str(exc).strip(), url)}") from None
            # check: a connection broken since its last use (a database restart) is replaced, not used
            pool = ConnectionPool(url, min_size=1, max_size=4, open=True, name="citecheck",
                                  check=ConnectionPool.check_connection,
                                  kwargs={"autocommit": True, "connect_timeout": 10})
            _pools[key] = pool
        return pool


def close_all() -> None:
    """Close this process's pools (tests and benchmarks; the pools also close at exit)."""
    with _guard:
        for (pid, _), pool in list(_pools.items()):
            if pid == os.getpid():
                pool.close()
        _pools.clear()


# SQLSTATEs of a connection the server ended (administrator command, crash shutdown, cannot connect
# now): the statement did not run to its end, and a fresh connection may well succeed.
_ENDED = {"57P01", "57P02", "57P03"}


def _ended(exc: Exception) -> bool:
    """A connection failure rather than a refused statement: the server ended the connection, or it
    broke (class 08, or no SQLSTATE at all on a dropped socket)."""
    import psycopg

    state = getattr(exc, "sqlstate", None)
    return isinstance(exc, psycopg.OperationalError) and (state is None or state in _ENDED or state.startswith("08"))


def _run(url: str, work, retry: bool = False):
    """``work(conn)`` on a pooled connection.  With ``retry`` (a statement safe to run twice: a read,
    or a copy that is idempotent), a connection the server ended or that broke is given up and the
    work run once more on a fresh one; an append is never run twice (it may have been stored)."""
    import psycopg

    for attempt in (1, 2):
        try:
            with _pool(url).connection() as conn:
                return work(conn)
        except psycopg.Error as exc:
            if retry and attempt == 1 and _ended(exc):
                continue
            raise DatabaseError(f"{redact(url)}: {_scrub(str(exc).strip(), url)}") from None


_INSERT = "INSERT INTO citecheck_events (stream, event_sha256, record, item) VALUES (%s, %s, %s::json, %s)"


def append(url: str, stream: str, records: list[dict]) -> int:
    """Insert ``records`` in one transaction, in order; returns how many were stored (all of them)."""
    if not records:
        return 0
    rows = [(stream, event_id(stream, r), json.dumps(r, ensure_ascii=False),
             r.get("item") if isinstance(r.get("item"), str) else None) for r in records]

    def work(conn) -> int:
        _insert_rows(conn, rows)
        return len(rows)

    try:
        return _run(url, work)
    except DatabaseError as exc:
        # The connection ended with the insert sent: it may have been stored (committed, then the
        # acknowledgement lost).  Look, on a fresh connection, before saying it was not: a save
        # the database holds is acknowledged once, and never stored twice by a retry.
        if not isinstance(exc.__context__, Exception) or not _ended(exc.__context__):
            raise
        if _stored(url, stream, [row[1] for row in rows]):
            return len(rows)
        raise


def _insert_rows(conn, rows: list[tuple]) -> None:
    if len(rows) == 1:  # one statement in autocommit: one round trip
        conn.execute(_INSERT, rows[0])
    else:
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(_INSERT, rows)


def _stored(url: str, stream: str, keys: list[str]) -> bool:
    """Whether every record of an append (by :func:`event_id`; one append is one transaction, so
    all of it or none of it) is in the stream."""

    def work(conn) -> bool:
        found = conn.execute("SELECT count(DISTINCT event_sha256) FROM citecheck_events "
                             "WHERE stream = %s AND event_sha256 = ANY(%s)", (stream, list(set(keys)))).fetchone()[0]
        return found == len(set(keys))

    return _run(url, work, retry=True)


_COPY_LOCK = 7_201_513  # pg_advisory_xact_lock key (with the stream) that serialises copies into a stream


def append_missing(url: str, stream: str, records: list[dict]) -> int:
    """Insert the ``records`` the stream does not hold yet (by :func:`event_id`, each occurrence
    counted: a record held twice in ``records`` is stored twice), in one transaction under the
    stream's copy lock; returns how many were inserted.  Copies running at once take turns, so the
    second finds the first's rows and adds none; a copy cut off (a server restart) stored nothing,
    and run again it adds what is missing: copying is idempotent under concurrency and retries."""

    def work(conn) -> int:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_COPY_LOCK, stream))
            cur.execute("SELECT event_sha256 FROM citecheck_events WHERE stream = %s", (stream,))
            have: dict[str, int] = {}
            for (key,) in cur.fetchall():
                have[key] = have.get(key, 0) + 1
            rows = []
            for record in records:
                key = event_id(stream, record)
                if have.get(key, 0):
                    have[key] -= 1
                    continue
                rows.append((stream, key, json.dumps(record, ensure_ascii=False),
                             record.get("item") if isinstance(record.get("item"), str) else None))
            if rows:
                cur.executemany(_INSERT, rows)
            return len(rows)

    return _run(url, work, retry=True)


def read(url: str, stream: str) -> list[tuple[int, dict]]:
    """``(seq, record)`` of every event of ``stream`` in insertion order."""

    def work(conn) -> list[tuple[int, dict]]:
        with conn.cursor() as cur:
            cur.execute("SELECT seq, record FROM citecheck_events WHERE stream = %s ORDER BY seq", (stream,))
            return [(seq, record) for seq, record in cur]

    return _run(url, work, retry=True)


def ids(url: str, stream: str) -> list[str]:
    """The :func:`event_id` of every event of ``stream`` (one per row: duplicates repeat)."""

    def work(conn) -> list[str]:
        with conn.cursor() as cur:
            cur.execute("SELECT event_sha256 FROM citecheck_events WHERE stream = %s", (stream,))
            return [row[0] for row in cur]

    return _run(url, work, retry=True)



class Since(NamedTuple):
    """The rows of a stream after a ``seq`` (:func:`read_since`) and the snapshot they were read in."""

    rows: list[tuple[int, dict, str]]  # (seq, record, event_sha256)
    xmin: int  # the oldest transaction still running then (every older one had ended)
    xmax: int  # the first transaction id not yet given out then
    known: bool  # the row ``seq`` named holds the hash given: the stream is the one read before (else: every row)


def read_since(url: str, stream: str, seq: int = 0, sha256: str = "") -> Since:
    """``(seq, record, event_sha256)`` of every event of ``stream`` with a ``seq`` over ``seq``, in
    insertion order, read in one snapshot, with its transaction bounds.  When the row ``seq`` is not
    there with ``event_sha256`` equal to ``sha256`` (``known`` false), every row of the stream.

    A row's ``seq`` is taken when it is inserted, not when its transaction commits: a row of a
    lower ``seq`` may still appear after a higher one was read, until every transaction running at
    the time of that read has ended (a later read's ``xmin`` at or past this read's ``xmax``)."""

    def work(conn) -> Since:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            xmin, xmax = conn.execute("SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint "
                                      "FROM pg_current_snapshot() AS s").fetchone()
            known = True
            if seq:
                row = conn.execute("SELECT event_sha256 FROM citecheck_events WHERE seq = %s AND stream = %s",
                                   (seq, stream)).fetchone()
                known = row is not None and row[0] == sha256
            with conn.cursor() as cur:
                cur.execute("SELECT seq, record, event_sha256 FROM citecheck_events WHERE stream = %s AND seq > %s "
                            "ORDER BY seq", (stream, seq if known else 0))
                rows = [(s, record, sha) for s, record, sha in cur]
        return Since(rows, xmin, xmax, known)

    return _run(url, work, retry=True)
