"""What the app is serving, every setting included, in words for the Data page.

The Data page must describe what the pages actually read: with a checked store, the answers come
from the store (its logs, checked against the corpus recorded in it), not from the logs setting.
Built here without Streamlit; the page shows the rows as a table.
"""

from __future__ import annotations

from citecheck.reports.inputs import NONE_MEANS, shown_path, store_corpus
from citecheck.storage import streams


def answers_come_from(settings, store_logs: list[dict] | None, uploaded: str | None) -> str:
    """One sentence: where every page's answers come from."""
    if settings.store is not None:
        files = ", ".join(shown_path(e.get("path") or e.get("file", "?")) for e in store_logs or []) or "no log yet"
        return (f"Every page reads its answers from the checked store {shown_path(settings.store)} "
                f"({files}); the logs setting is not used.")
    if uploaded is not None:
        return f"Every page reads the uploaded log {uploaded} (switch back to the configured logs below)."
    return "Every page reads its answers from the logs below, checked as the server started (and again when they change)."


def setting_rows(settings, store_logs: list[dict] | None, signed_in: bool) -> list[dict[str, str]]:
    """(setting, value, what it does) for every setting the server runs with."""
    def path(value) -> str:
        return "none" if value is None else shown_path(value)

    def target(value) -> str:
        return streams.describe(value) if streams.is_database(value) else shown_path(value)

    if settings.store is not None:
        answers = [("checked store", path(settings.store), "the answers of Review, Failures, Calibration and "
                                                           "Disagreements"),
                   ("logs in the store", ", ".join(shown_path(e.get("path") or e.get("file", "?"))
                                                   for e in store_logs or []) or "none yet",
                    "checked into the store with citecheck check LOG --store DIR"),
                   ("corpus", store_corpus(store_logs or []) or NONE_MEANS["corpus"],
                    "recorded in the store when its logs were checked")]
    else:
        answers = [("logs", ", ".join(shown_path(p) for p in settings.logs), "the answers of every page"),
                   ("corpus", path(settings.corpus) if settings.corpus else NONE_MEANS["corpus"],
                    "the current sources: a changed source fails its citations")]
    refusals = "; ".join(settings.refusals) if settings.refusals else "the default sentence"
    rows = answers + [
        ("golden set", path(settings.golden) if settings.golden else NONE_MEANS["golden"],
         "refusal and retrieval figures on Failures"),
        ("labels", target(settings.labels), "every label, undo and adjudication (append-only)"),
        ("verdicts", target(settings.verdicts), "the judges' verdicts (Calibration)"),
        ("overlap", str(settings.overlap), "an item is done when this many reviewers labelled it; the majority "
                                           "of this many labels settles it"),
        ("refusal sentence", refusals, "an answer saying this is a refusal"),
        ("casefold", "on" if settings.casefold else "off", "quotes matched ignoring case"),
        ("guidelines", path(settings.guidelines) if settings.guidelines else "the bundled guidelines",
         "shown on the Review page; each label records their version"),
        ("sign-in", "configured ([auth]): reviewers are who they signed in as" if signed_in
         else "not configured: reviewers give their name", "who a label is recorded under"),
        ("roles", path(settings.roles) if settings.roles else "none",
         "who is a lead (adjudicates, assigns, sees team figures) under sign-in; without sign-in everyone is"),
        ("lock", f"{settings.lock_minutes} minutes", "how long an opened item is held for its reviewer"),
    ]
    return [{"setting": s, "value": v, "what it does": w} for s, v, w in rows]


def how_to_set() -> str:
    """How this server's settings are changed, in the words of how it was installed (Markdown)."""
    from citecheck.web.serve import installed

    start = ("`citecheck app --log LOG --corpus DIR ...`" if installed()
             else "`python3 dev.py run -- --log LOG --corpus DIR ...` (or `citecheck app --log LOG ...`)")
    return (f"Set when the server starts: {start}, or the `CITECHECK_*` environment variables "
            "(docs/app.md, Settings).")
