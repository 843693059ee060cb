"""Text from a log made harmless for a terminal: control characters shown, not obeyed.

A log is untrusted: an ``answer_id`` holding ``ESC [2J`` would clear the screen of whoever runs
``citecheck check``, ``ESC ]0;...`` retitle the terminal, a carriage return overwrite a line with
fake "verified" text, and a right-to-left override reorder what is shown.  :func:`visible` writes
each such character as its ``\\uXXXX`` escape, which is also a valid JSON escape of the same
character, so JSON output keeps its meaning; tab and newline stay as they are.  The command line
writes everything it prints through :class:`VisibleWriter`.
"""

from __future__ import annotations

from typing import Any, TextIO

# C0 controls but tab and newline, DEL, C1 controls, and the invisible bidirectional controls.
_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
             *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TABLE = {code: f"\\u{code:04x}" for code in _CONTROLS}


def visible(text: str) -> str:
    """``text`` with every terminal control character written as its ``\\uXXXX`` escape."""
    return text.translate(_TABLE)


class VisibleWriter:
    """A text stream that writes :func:`visible` text to the stream it wraps; everything else
    (``buffer``, ``encoding``, ``flush``, ``isatty``...) is the wrapped stream's.  JSON written as
    bytes straight to ``buffer`` has its control characters escaped by the JSON encoder already."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    @property
    def wrapped(self) -> TextIO:
        """The stream written to (for text citecheck writes itself, such as a carriage return)."""
        return self._stream

    def write(self, text: str) -> int:
        return self._stream.write(text.translate(_TABLE))

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def progress_line(stream: TextIO, text: str) -> None:
    """A progress line: on a terminal it overwrites the last one (a carriage return of citecheck's
    own, written past :class:`VisibleWriter`, which would show it as ``\\u000d``); elsewhere (a
    pipe, a file) it is a line of its own.  ``text`` is made :func:`visible` either way."""
    raw = stream.wrapped if isinstance(stream, VisibleWriter) else stream
    isatty = getattr(raw, "isatty", None)
    if callable(isatty) and isatty():
        raw.write("\r" + visible(text))
    else:
        raw.write(visible(text) + "\n")
