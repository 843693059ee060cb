"""Text as UTF-8 can hold it, for the stores that take only UTF-8 (Arrow, Parquet, DuckDB)."""

from __future__ import annotations


def utf8_text(text: str) -> str:
    """``text`` as UTF-8 can hold it: each lone surrogate (in a JSON key the standard library read
    from ``"\\udc00"``, or in a file name that is not UTF-8) written as its escape, the six
    characters ``\\udc00``; text without one is given back as it is.  Shown to people, the two
    read the same; only JSON tells them apart."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
