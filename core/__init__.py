"""citecheck: check that RAG answers are faithful to the sources they cite.

Everything here is importable without Streamlit; the UI lives in ``app.py`` and ``pages/``.
"""

__version__ = "0.1.0"
