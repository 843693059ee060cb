"""State shared by the pages: settings, the checked answers, the labels file. No logic lives here."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st
from citecheck.errors import CitecheckError, StoreError
from citecheck.labelling import dataset
from citecheck.review.html import FRAME_KEY, STYLE, notice_html
from citecheck.web import memory, notices
from citecheck.web.settings import Settings, server_settings
from citecheck.web.stamps import stamps


def enter(page: str) -> None:
    """Run this page through app.py's router.  Opened directly (Streamlit's pages/ discovery on a
    fresh server's first request), hand over to the entry point, which comes back to ``page``."""
    memory.watch()
    memory.settle()  # (a slow full collection since the last run: freeze what is alive, citecheck.web.memory)
    from pages import _drafts

    _drafts.keep_drawn()  # (the text of the boxes drawn last run, before a run that does not draw them drops it)
    if not st.session_state.get("_citecheck_router"):
        st.switch_page("app.py", query_params={**st.query_params.to_dict(), "goto": page})


APP_ROOT = Path(__file__).resolve().parent.parent  # the checkout: its sample_data/ is the default data


def settings() -> Settings:
    return server_settings(sys.argv[1:], root=APP_ROOT)


_stamp = stamps  # (path, mtime_ns, size) of each file


# (``stamp`` is part of the cache key: an argument named with a leading _ would not be, and a
# changed log would never be re-read.)
@st.cache_resource(show_spinner="Checking the answer logs ...", max_entries=4)
def _load(logs: tuple, corpus, casefold: bool, refusals: tuple, stamp: tuple) -> dataset.Dataset:
    data = dataset.load(logs, settings().check_options())
    for line in notices.plain_lines(notices.load_facts(len(data), data.errors)):
        print(line, file=sys.stderr, flush=True)  # (once per load: the terminal that started the app)
    return data


def using_upload() -> bool:
    return st.session_state.get("uploaded") is not None and bool(st.session_state.get("use_upload"))


def uploaded_name() -> str | None:
    """The name of the uploaded log in use, or None when the configured logs are."""
    return st.session_state.get("uploaded_name", "uploaded log") if using_upload() else None


def show_notice(data: dataset.Dataset, data_page: str | None = "./data") -> None:
    """Say, above the page, which logs could not be opened, how many lines could not be read, and
    whether an uploaded log is in use (built in citecheck.web.notices).  Every page that shows
    answers calls it once: it also follows the configured logs (``_follow``)."""
    uploaded = st.session_state.get("uploaded_name", "uploaded log") if using_upload() else None
    banner = notices.notice_html(notices.load_facts(len(data), data.errors), uploaded, data_page)
    if banner:
        st.html(banner)
    if uploaded is None and settings().store is None:
        _follow(st.session_state.get("_logs_stamp") or _stamp(settings().logs))


FOLLOW_SECONDS = 1.0  # how often a page looks whether a log it shows has grown (docs/collect.md)


@st.fragment(run_every=FOLLOW_SECONDS)
def _follow(shown: tuple) -> None:
    """Draw the page again when a configured log changed since it was drawn (an application's
    AnswerLog or ``citecheck collect`` appending answers): new answers show without a restart.
    Looking costs one ``stat`` per log; nothing is re-read until a log changed."""
    if _stamp(settings().logs) != shown:
        st.rerun()


def current_dataset() -> dataset.Dataset:
    """The uploaded log if the reviewer chose one, else the configured logs (reloaded when they change)."""
    if using_upload():
        return st.session_state["uploaded"]
    cfg = settings()
    stamp = _stamp(cfg.logs)
    st.session_state["_logs_stamp"] = stamp  # (what the page shows: _follow compares against it)
    try:
        return _load(cfg.logs, cfg.corpus, cfg.casefold, cfg.refusals, stamp)
    except CitecheckError as exc:  # a setting names a folder that is not there: say so, on every page
        st.html(notice_html("error", str(exc)))
        st.stop()


@st.cache_resource(show_spinner="Opening the checked store ...", max_entries=2)
def _store_answers(folder: str, stamp: tuple):
    from citecheck.storage.checked.answers import StoreAnswers

    return StoreAnswers(folder)


def review_dataset():
    """The answers to review: from the checked store when one is set (read one at a time, by
    offset), else the uploaded or configured logs in memory (``current_dataset``)."""
    cfg = settings()
    if cfg.store is None:
        return current_dataset()
    from citecheck.storage.checked.folder import META

    try:
        return _store_answers(str(cfg.store), _stamp([cfg.store / META]))
    except StoreError as exc:
        st.html(notice_html("error", str(exc)))
        st.stop()


def labelled_dataset(records) -> dataset.Dataset:
    """The answers the Calibration and Disagreements pages work on: the loaded logs, or with a
    checked store, the store's answers that have a label or an adjudication (``records``)."""
    if settings().store is None:
        return current_dataset()
    return dataset.of_answers(review_dataset(), sorted({r.answer_id for r in records if getattr(r, "answer_id", None)}))


def say_inputs(data, **more) -> None:
    """The line above a page's figures: what they come from (``reports.inputs``: the logs or the
    store, the corpus, and ``more``: labels, verdicts, golden set)."""
    cfg = settings()
    source = review_dataset() if cfg.store is not None else data
    st.html(notices.served_inputs(cfg, source, uploaded_name(), **more).html())


def _or_stop(read, target):
    """``read(target)``, or the page stops with the store's error (which never shows a password)."""
    try:
        return read(target)
    except StoreError as exc:
        st.html(notice_html("error", f"{exc}. Check the labels/verdicts settings of this server (docs/app.md)."))
        st.stop()


@st.cache_resource(max_entries=4)
def _label_cache(target: str):
    """The labels store read incrementally, kept between runs and sessions (``web.label_cache``)."""
    from citecheck.web.label_cache import LabelCache

    return LabelCache(target)


def label_cache():
    """The configured labels store's cache (``LabelCache``): its ``team``, ``others`` and ``progress``
    figures are kept between runs and updated with the labels appended since."""
    return _label_cache(str(settings().labels))


def label_state():
    """The labels store as it is now (``label_cache.LabelState``: every event, the warnings, the labels
    that count); each run reads only what other sessions appended since the last read."""
    return _or_stop(lambda target: _label_cache(str(target)).state(), settings().labels)


def label_figure(state, key, make, kinds=()):
    """``make(state)`` kept until the labels store changes, or with ``kinds`` until an event of those
    types is appended (``LabelCache.derived``); shared: not to be changed."""
    return label_cache().derived(state, key, make, kinds)


def read_labels():
    """The labels that count and the warnings, as the store is now (``label_state``)."""
    state = label_state()
    return state.effective, state.errors


def read_label_events():
    """Every label, retraction, adjudication and team event, and warnings (the history, the disagreements view)."""
    state = label_state()
    return state.events, state.errors


@st.cache_resource(max_entries=4)
def holds_scan(target: str):
    """The pass over a labels store's events kept between runs and sessions (``review.holds.Scan``)."""
    from citecheck.review.holds import Scan

    return Scan()


def guidelines():
    """The labelling guidelines the server is configured with, or None and the error saying why."""
    from citecheck.labelling import guidelines as labelling_guidelines

    try:
        return labelling_guidelines.load(settings().guidelines), None
    except labelling_guidelines.GuidelinesError as exc:
        return None, str(exc)


@st.cache_resource(max_entries=4)
def _verdict_cache(target: str):
    """A verdicts store read incrementally, kept between runs and sessions (``storage.event_cache``)."""
    from citecheck.judging import verdicts
    from citecheck.storage.event_cache import EventCache

    return EventCache(target, verdicts.STREAM, verdicts.parse_verdict_record)


def read_verdicts(path=None):
    """All verdict records and warnings as the store is now (a judge run may be appending: each run
    reads only what was appended since the last read)."""
    snap = _or_stop(lambda target: _verdict_cache(str(target)).read(), path or settings().verdicts)
    return snap.records, snap.errors


def search_verdict_facts():
    """Each judge run's verdict per item and the unstable items (``web.search_facts.verdict_facts``),
    made again only when verdicts were appended; shared: not to be changed."""
    from citecheck.web.search_facts import verdict_facts

    cache = _verdict_cache(str(settings().verdicts))
    snap = _or_stop(lambda _: cache.read(), None)
    return cache.derived(snap, "search_verdict_facts", lambda s: verdict_facts(s.records))


def judged_by_item():
    """Item key -> the latest verdict of each judge run (``review_view.judged_by_item``) over the
    configured verdicts, made again only when verdicts were appended; shared: not to be changed."""
    from citecheck.review.review_view import judged_by_item as judged

    cache = _verdict_cache(str(settings().verdicts))
    snap = _or_stop(lambda _: cache.read(), None)
    return cache.derived(snap, "judged_by_item", lambda s: judged(s.records))


def signed_in_user() -> dict | None:
    """The OIDC user's claims when the deployment configured ``[auth]`` (docs/app.md), else None."""
    try:
        return st.user.to_dict()
    except Exception:  # no [auth] section: Streamlit has no user to give
        return None


def identity():
    """Who is labelling (``review.identity.Identity``), from the login, the session or the URL."""
    from citecheck.review import identity as reviewer_identity

    return reviewer_identity.resolve(st.query_params.get("reviewer"), st.session_state.get("reviewer_name"), signed_in_user())


def style() -> None:
    st.html(STYLE)


def script_frame(html: str, name: str) -> None:
    """A frame of the same origin that runs one of the review page's scripts (core/citecheck/review/keypresses.py,
    reconnect.py) and takes no room: ``st.iframe`` (``components.html`` is deprecated),
    inside a container the page's style lays out of the flow (``FRAME_KEY``), out of the Tab order."""
    with st.container(key=f"{FRAME_KEY}{name}"):
        st.iframe(html, height=1, tab_index=-1)
