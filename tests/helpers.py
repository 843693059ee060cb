"""Small builders for hand-made answers in tests, the command line and trace imports run in-process, and
the Failures page's tabs opened in AppTest."""

from __future__ import annotations

import io

from citecheck.contract.log import Answer, Chunk, Citation, checksum
from citecheck.errors import RecordError


def chunk(text: str, chunk_id: str = "c1", source: str | None = "doc.md", start: int | None = 0,
          document_id: str | None = None, **kw) -> Chunk:
    end = None if start is None else start + len(text)
    fields = dict(chunk_id=chunk_id, document_id=document_id or (source or chunk_id), source=source, title=None,
                  section=None, text=text, start=start, end=end, checksum=checksum(text),
                  retrieval_score=None, rerank_score=None)
    fields.update(kw)
    return Chunk(**fields)


def answer(text: str, chunks, citations=(), **kw) -> Answer:
    return Answer(answer_id=kw.pop("answer_id", "a1"), question=kw.pop("question", "q?"), answer=text,
                  chunks=tuple(chunks), citations=tuple(citations), **kw)


def marker(n: int, quote: str | None = None, qs: int | None = None, qe: int | None = None, at: int | None = None):
    return Citation("marker", marker=n, at=at, quote=quote, quote_start=qs, quote_end=qe)


def span(start: int, end: int, chunk_id: str | None, quote: str | None = None, qs=None, qe=None, document_id=None):
    return Citation("span", answer_start=start, answer_end=end, chunk_id=chunk_id, document_id=document_id,
                    quote=quote, quote_start=qs, quote_end=qe)


def figures_only(output: str) -> str:
    """A check or report output without the statement of its inputs (``reports.inputs``): the
    figures, which the plain and the store paths must give alike, while the inputs rightly differ
    (the store path names the store).  Text: the line that begins "from N answer(s)"; JSON: the
    ``inputs`` field of the report or of the check's summary record."""
    import json

    text = output.lstrip()
    if text.startswith("{") and "\n" in text.strip() and text.strip().endswith("}") and '"record": "overview"' in text:
        doc = json.loads(text)
        doc.pop("inputs", None)
        return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    out = []
    for line in output.splitlines(keepends=True):
        if line.startswith("from ") and " answer(s)" in line.split(";")[0]:
            continue
        if line.startswith('{"record":"summary"') or line.startswith('{"record": "summary"'):
            record = json.loads(line)
            record.pop("inputs", None)
            line = json.dumps(record, separators=(",", ":")) + "\n"
        out.append(line)
    return "".join(out)


def run_cli(*argv):
    """``citecheck ARGV...`` in this process: (exit code, standard output, standard error)."""
    from citecheck.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def imported_traces(paths, read, fmt: str, skip_without_retrieval: bool = False):
    """(answers, errors, summary) of a trace import of ``paths`` read by ``read`` (``citecheck import FMT``)."""
    from citecheck.importers.otel import import_spans
    from citecheck.importers.traces import TraceSummary

    summary = TraceSummary()
    items = list(import_spans([str(p) for p in paths], read, fmt, summary, skip_without_retrieval))
    return ([i for i in items if not isinstance(i, RecordError)], [i for i in items if isinstance(i, RecordError)],
            summary)


def open_tab(at, label: str):
    """Open the Failures page's tab ``label`` in an AppTest and run the page: AppTest cannot click a
    tab, so the tabs' state is set as a click sets it (only the open tab's content is drawn)."""
    from citecheck.reports.failures_view import TAB_KEY, TABS

    assert label in TABS, (label, TABS)
    at.session_state[TAB_KEY] = label
    return at.run()
