"""citecheck: check that RAG answers are faithful to the sources they cite.

Everything here is importable without Streamlit; the UI lives in ``app.py`` and ``pages/``.
"""

__version__ = "0.2.0"  # the one version: pyproject.toml reads it; every record citecheck writes carries it

from citecheck.text import compiled as _compiled

_compiled.install()  # the mypyc build of the hot modules when it is current (core/citecheck/text/compiled.py)


def __getattr__(name: str):
    """``from citecheck import AnswerLog``: the logging API (core/citecheck/importers/answer_log.py),
    imported on first use so that ``import citecheck`` stays light."""
    if name == "AnswerLog":
        from citecheck.importers.answer_log import AnswerLog

        return AnswerLog
    raise AttributeError(f"module 'citecheck' has no attribute {name!r}")


__all__ = ["AnswerLog", "__version__"]
