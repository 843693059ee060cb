"""A filling disk for tests of writes (issue 17): a real tiny tmpfs (``small_disk`` in conftest)
or ``os.write`` made to write short and then fail with ENOSPC."""

from __future__ import annotations

import errno
import os


def fill(folder):
    """Fill the filesystem of ``folder`` to the last byte."""
    fd = os.open(folder / "ballast", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while os.write(fd, b"x" * 512):
            pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


class FlakyWrite:
    """``os.write`` that writes at most ``step`` bytes per call and, once ``room`` bytes have been
    written, fails with ENOSPC: a filling disk as the kernel presents it."""

    def __init__(self, monkeypatch, step: int = 7, room: int | None = None):
        self.real = os.write
        self.step = step
        self.room = room
        self.calls = 0
        monkeypatch.setattr(os, "write", self)

    def __call__(self, fd, data):
        self.calls += 1
        data = bytes(data)[: self.step]
        if self.room is not None:
            if self.room <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            data = data[: self.room]
            self.room -= len(data)
        return self.real(fd, data)
