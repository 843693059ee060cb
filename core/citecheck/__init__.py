"""citecheck: check that RAG answers are faithful to the sources they cite.

Everything here is importable without Streamlit; the UI lives in ``app.py`` and ``pages/``.
"""

__version__ = "0.2.0"  # the one version: pyproject.toml reads it; every record citecheck writes carries it

from citecheck.text import compiled as _compiled

_compiled.install()  # the mypyc build of the hot modules when it is current (core/citecheck/text/compiled.py)
