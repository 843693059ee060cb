"""HTML for comment threads (``labelling.comments``): every name and text escaped, the mentions
marked (rendered with ``st.html``, never as Markdown)."""

from __future__ import annotations

from collections.abc import Sequence

from citecheck.labelling.comments import Comment, Thread, mention_spans
from citecheck.text.highlight import Span, escape, highlight

STYLE = """<style>
.cc-thread{border-left:3px solid #d0d7de;padding:2px 10px;margin:4px 0}
.cc-comment{margin:4px 0}
.cc-comment-text{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:plaintext}
mark.cc-mention{background:#dbeafe;color:#1a5fb4;font-weight:600;padding:0 1px}
.cc-thread-state{color:#57606a;font-size:.8rem}
</style>"""


def comment_text_html(comment: Comment) -> str:
    """The comment's text escaped, with each mention it records in ``<mark class="cc-mention">``."""
    spans = [Span(a, b, "cc-mention") for a, b, _ in mention_spans(comment.text, comment.mentions)]
    return highlight(comment.text, spans)


def _meta(*values: str) -> str:
    return '<div class="cc-meta">' + " \u00b7 ".join(f"<bdi>{escape(v)}</bdi>" for v in values if v) + "</div>"


def state_text(thread: Thread) -> str:
    n = len(thread.comments)
    said = f"{n} comment{'' if n == 1 else 's'}"
    return f"Open, {said}" if thread.open else f"Resolved by {thread.resolved_by} at {thread.resolved_at}, {said}"


def thread_html(thread: Thread) -> str:
    """A thread: its state, then every comment (author, time, text with mentions marked)."""
    rows = "".join(f'<div class="cc-comment">{_meta(c.author, c.at)}'
                   f'<div class="cc-comment-text">{comment_text_html(c)}</div></div>' for c in thread.comments)
    return (f'{STYLE}<div class="cc-thread"><div class="cc-thread-state">{escape(state_text(thread))}</div>'
            f"{rows}</div>")


def hidden_html() -> str:
    """What blind mode says instead of a thread (whether there is one or not: that could sway too)."""
    return ('<div class="cc-meta">Comments show once you have labelled this item '
            "(blind mode: comments would sway the label).</div>")


def open_threads_html(threads: Sequence[Thread], links: Sequence[str]) -> str:
    """The open threads as a table: thread key (a link to it), comments, last comment (author, time,
    text).  ``links``: each thread's address on the review page, same order."""
    if not threads:
        return '<div class="cc-meta">No open comment thread.</div>'
    rows = []
    for t, link in zip(threads, links):
        last = t.comments[-1]
        rows.append(f'<tr><td><a href="{escape(link)}" target="_self"><bdi>{escape(t.key)}</bdi></a></td>'
                    f"<td>{len(t.comments)}</td><td><bdi>{escape(last.author)}</bdi></td><td>{escape(last.at)}</td>"
                    f'<td class="cc-comment-text">{comment_text_html(last)}</td></tr>')
    return (f'{STYLE}<table class="cc-history"><tr><th>thread</th><th>comments</th><th>last by</th>'
            f"<th>when (UTC)</th><th>last comment</th></tr>{''.join(rows)}</table>")
