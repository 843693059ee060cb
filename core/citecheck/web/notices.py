"""What every page says first about what it loaded: logs that could not be opened, lines that could
not be read (with a link to the Data page that lists them), and an uploaded log in use.

HTML built here (escaped) and shown by the pages with ``st.html``; the terminal gets the same facts
in plain text when the app loads the configured logs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

from citecheck.errors import RecordError
from citecheck.reports.inputs import Inputs, Shown, store_corpus

_STYLE = ("margin:0 0 .5rem 0;padding:.5rem .75rem;border-radius:.4rem;border-left:.3rem solid {edge};"
          "background:{back};overflow-wrap:anywhere")
_BAD = _STYLE.format(edge="#d33", back="#fdecec")
_WARN = _STYLE.format(edge="#d9a000", back="#fff6db")
_INFO = _STYLE.format(edge="#3a7bd5", back="#eaf2fd")


@dataclass(frozen=True, slots=True)
class LoadFacts:
    """What loading found: each file that could not be read at all, and how many lines could not."""

    files: tuple[tuple[str, str], ...]  # (path, why): a folder, missing, unreadable or empty
    unreadable_lines: int
    answers: int


def load_facts(answers: int, errors: Iterable[RecordError]) -> LoadFacts:
    """Split a dataset's errors into whole-file problems (line 0, field ``(file)``) and bad lines."""
    files, lines = [], 0
    for e in errors:
        if e.line == 0 and e.field == "(file)":
            files.append((e.file, e.message))
        else:
            lines += 1
    return LoadFacts(tuple(files), lines, answers)


def unreadable_lines(errors: Iterable[RecordError]) -> int:
    """The lines that could not be read (a log that could not be opened at all is not a line)."""
    return load_facts(0, errors).unreadable_lines


def plain_lines(facts: LoadFacts) -> list[str]:
    """The facts as lines for the terminal (empty when every configured log was read in full)."""
    out = [f"citecheck: log {path} {why}" for path, why in facts.files]
    if facts.unreadable_lines:
        out.append(f"citecheck: {facts.unreadable_lines:,} of {facts.unreadable_lines + facts.answers:,} lines "
                   "could not be read (listed on the Data page)")
    return out


def notice_html(facts: LoadFacts, uploaded: str | None = None, data_page: str | None = "./data") -> str:
    """The banner a page shows above its figures ("" when there is nothing to say).

    ``uploaded`` is the name of the uploaded log in use, if one is; ``data_page`` the link to the page
    that lists the unreadable lines (None on that page itself)."""
    parts = []
    if uploaded is not None:
        parts.append(f'<div class="cc-notice" style="{_INFO}">Showing the uploaded log '
                     f"<code>{escape(uploaded)}</code>, not the configured logs (switch back on the Data page).</div>")
    for path, why in facts.files:
        parts.append(f'<div class="cc-notice" style="{_BAD}">The log <code>{escape(path)}</code> '
                     f"{escape(why)}.</div>")
    if facts.unreadable_lines:
        total = facts.unreadable_lines + facts.answers
        where = (f' They are listed on the <a href="{escape(data_page)}" target="_self">Data page</a>.'
                 if data_page else " They are listed below.")
        parts.append(f'<div class="cc-notice" style="{_WARN}">{facts.unreadable_lines:,} of {total:,} '
                     f"line(s) could not be read and are left out of every figure.{where}</div>")
    return "".join(parts)


def page_inputs(settings, answers: int, unreadable: int, uploaded: str | None = None,
                store_logs: list[dict] | None = None, **more) -> Inputs:
    """What a page's figures come from (``reports.inputs``): the checked store and its logs when
    the page reads the store (``store_logs``: its ``store.json`` entries), else the uploaded log or
    the configured logs with the configured corpus; then ``more`` (golden, labels, verdicts)."""
    if store_logs is not None:
        return Inputs.of(answers, unreadable, logs=[entry.get("file", "?") for entry in store_logs],
                         store=settings.store, corpus=store_corpus(store_logs), **more)
    if uploaded is not None:
        return Inputs.of(answers, unreadable, logs=Shown(f"uploaded: {uploaded}"), corpus=settings.corpus, **more)
    return Inputs.of(answers, unreadable, logs=list(settings.logs), corpus=settings.corpus, **more)


def served_inputs(settings, source, uploaded: str | None = None, **more) -> Inputs:
    """:func:`page_inputs` of the answers a page serves: ``source`` is the checked store's answers
    (``storage.checked.answers.StoreAnswers``, which knows its store) or the logs in memory."""
    store = getattr(source, "store", None) if settings.store is not None else None
    unreadable = unreadable_lines(source.errors)
    if store is not None:
        return page_inputs(settings, len(source), unreadable, store_logs=store.logs, **more)
    return page_inputs(settings, len(source), unreadable, uploaded, **more)
