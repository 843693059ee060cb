"""Writes that never lie: a write is acknowledged only once every byte is on disk.

- :func:`write_all` keeps writing after a short write (``os.write`` may write fewer bytes than
  asked, most often because the disk filled) and fsyncs; it raises instead of returning early.
- :func:`replace_file` writes an output file (``--out``) to a temporary file in the same folder,
  fsyncs it and renames it into place: a reader, a crash or a full disk sees the old file or
  the whole new one, never a part.
- :func:`sync_folder` makes a file's creation (its folder entry) durable.
- :class:`WriteFailed` says plainly what was not saved and why ("the disk is full"), in words a
  page or a command can show as they are.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from citecheck.errors import CitecheckError

_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class WriteFailed(CitecheckError, OSError):
    """Nothing of ``what`` was saved in ``path`` (or, when ``undone`` is False, a partial last line
    was left that every reader skips).  ``str()`` is a sentence for a person."""

    def __init__(self, path: str | Path, what: str, cause: OSError, undone: bool = True):
        self.path = str(path)
        self.what = what
        self.cause = cause
        self.disk_full = cause.errno in _DISK_FULL
        self.undone = undone
        reason = "the disk is full" if self.disk_full else f"the write failed ({cause.strerror or cause})"
        left = ("nothing was written" if undone else
                "a partial last line may be left, which readers skip; earlier records are intact")
        advice = "free some disk space and try again" if self.disk_full else "try again"
        super().__init__(f"{what} NOT saved: {reason} ({self.path}); {left}; {advice}.")


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (looping over short writes), then fsync.

    Raises ``OSError`` (``ENOSPC`` when the disk is full) when the bytes cannot all be written:
    a write that made no progress is an error, never a silent success."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]
    os.fsync(fd)


def sync_folder(folder: str | Path) -> None:
    """fsync a folder, so that a file just created or renamed in it survives a power cut."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: str | Path, data: bytes | str, what: str = "the output") -> None:
    """Put ``data`` at ``path`` atomically: temporary file in the same folder, fsync, rename, fsync
    the folder.  On failure the temporary file is removed, ``path`` keeps its previous content,
    and :class:`WriteFailed` is raised."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = path.parent if str(path.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            if path.exists():
                os.fchmod(fd, path.stat().st_mode & 0o7777)
            else:
                os.fchmod(fd, 0o644)
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteFailed(path, what, exc) from exc
    sync_folder(folder)


class ReplacedText:
    """A text stream for an output file that appears at ``path`` only when complete: written to a
    temporary file in the same folder, renamed into place by :meth:`commit`.  :meth:`abort` (or
    leaving a ``with`` block by an exception) removes the temporary file, keeping the old one."""

    def __init__(self, path: str | Path, what: str = "the output"):
        self.path = Path(path)
        self.what = what
        self.folder = self.path.parent if str(self.path.parent) else Path(".")
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.folder)
        os.fchmod(fd, self.path.stat().st_mode & 0o7777 if self.path.exists() else 0o644)
        self._fd = fd
        self._buffer: list[bytes] = []
        self._size = 0
        self._done = False

    def write(self, text: str) -> int:
        self.write_bytes(text.encode("utf-8"))
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        """Write text already encoded as UTF-8 (what a JSON encoder gives), without decoding it first."""
        self._buffer.append(data)
        self._size += len(data)
        if self._size >= 1 << 20:
            self._flush()

    def _flush(self) -> None:
        data, self._buffer, self._size = b"".join(self._buffer), [], 0
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                if written <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = view[written:]
        except OSError as exc:
            self.abort()
            raise WriteFailed(self.path, self.what, exc) from exc

    def commit(self) -> None:
        try:
            self._flush()
            os.fsync(self._fd)
            os.close(self._fd)
            self._done = True
            os.replace(self.tmp, self.path)
        except WriteFailed:
            raise
        except OSError as exc:
            self.abort()
            raise WriteFailed(self.path, self.what, exc) from exc
        sync_folder(self.folder)

    def abort(self) -> None:
        if not self._done:
            self._done = True
            os.close(self._fd)
        try:
            os.unlink(self.tmp)
        except OSError:
            pass

    def __enter__(self) -> ReplacedText:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()
