"""Malformed answer logs for the fuzz test (tests/test_fuzz.py) and bench/bench_fuzz.py.

Every case is a small log built from the bundled sample log: a good line, the mutated line, a
good line (so a test can see that the lines around a bad one are still checked), or a file-level
oddity (BOM, CRLF, CR-only ends, a directory, an empty file...).  The families are the sample
log mutated field by field (missing, null, wrong type, huge numbers, negative and out-of-range
offsets, end before start, lone surrogates, combining characters, NUL, right-to-left and markup
text, deep nesting) and whole-line or whole-file defects (non-UTF-8 bytes, truncated and huge
lines, pathological answers, duplicate ids, unknown versions).

``cases(full=False)`` is the bounded sample CI runs; ``full=True`` adds the large ones (a 50 MB
line, answers of hundreds of thousands of characters).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"
_HOLE = "\u2063FUZZ\u2063"  # a string no sample holds: replaced by raw JSON text after dumping

HUGE_INT = "1" + "0" * 5000
DEEP = 2000  # levels of nesting: beyond orjson's limit (1024) and Python's recursion limit


@dataclass(frozen=True)
class Case:
    """One fuzz case: ``kind`` is "file" (``data`` is the log's bytes), "dir" or "missing"."""

    family: str
    name: str
    data: bytes = b""
    kind: str = "file"
    lines: int = 0  # non-blank lines the file holds (each must come back as an answer or an error)

    def write(self, folder: Path) -> Path:
        path = folder / "log.jsonl"
        if self.kind == "dir":
            path.mkdir()
        elif self.kind == "file":
            path.write_bytes(self.data)
        return path


def sample_lines() -> list[str]:
    return SAMPLE.read_text(encoding="utf-8").splitlines()


def _dump(obj, raw: str | None = None) -> str:
    text = json.dumps(obj, ensure_ascii=False)
    if raw is not None:
        text = text.replace(json.dumps(_HOLE, ensure_ascii=False), raw)
    return text


def _file(family: str, name: str, middle: str | bytes, good: list[str]) -> Case:
    mid = middle.encode("utf-8", "surrogatepass") if isinstance(middle, str) else middle
    data = good[0].encode() + b"\n" + mid + b"\n" + good[1].encode() + b"\n"
    return Case(family, name, data, lines=2 + sum(1 for part in mid.split(b"\n") if part.strip()))


# values that replace a field; raw JSON text where it cannot be written as a Python value
_WRONG = [("number", 12345), ("string", "text"), ("true", True), ("list", []), ("object", {}), ("float", 1.5)]
_RAW = [
    ("huge-int", HUGE_INT), ("huge-negative", "-" + HUGE_INT), ("2^64", str(2 ** 64)), ("1e400", "1e400"),
    ("lone-surrogate", '"\\ud800"'), ("lone-low-surrogate", '"a\\udfffb"'),
    ("deep-list", "[" * DEEP + "]" * DEEP), ("deep-object", '{"a":' * DEEP + "1" + "}" * DEEP),
    ("just-under-orjson-limit", "[" * 1000 + "]" * 1000),
]
_TEXT = [
    ("combining", "e\u0301\u0301\u0301 a\u20dd"), ("nul", "a\u0000b"), ("rtl", "\u202eevil\u202c \u05e9\u05dc\u05d5\u05dd"),
    ("markup", "**bold** _it_ `code` [link](http://x) $x^2$ <b>b</b> # h"), ("long-word", "w" * 5000),
    ("empty", ""), ("whitespace", " \t "),
]


def _paths(obj: dict) -> list[tuple[str, ...]]:
    paths = [(k,) for k in obj]
    if obj.get("chunks"):
        paths += [("chunks", 0, k) for k in obj["chunks"][0]]
    if obj.get("citations"):
        paths += [("citations", 0, k) for k in obj["citations"][0]]
    return paths


def _set(obj, path, value, delete=False):
    target = obj
    for part in path[:-1]:
        target = target[part]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value


def _field_cases(line: str, tag: str, good: list[str]) -> Iterator[Case]:
    base = json.loads(line)
    for path in _paths(base):
        where = tag + ":" + ".".join(str(p) for p in path)
        obj = json.loads(line)
        _set(obj, path, None, delete=True)
        yield _file("missing", where, _dump(obj), good)
        obj = json.loads(line)
        _set(obj, path, None)
        yield _file("null", where, _dump(obj), good)
        for name, value in _WRONG:
            obj = json.loads(line)
            _set(obj, path, value)
            yield _file("wrong-type", f"{where}={name}", _dump(obj), good)
        for name, raw in _RAW:
            obj = json.loads(line)
            _set(obj, path, _HOLE)
            family = "huge-number" if "int" in name or "e4" in name or "^" in name else (
                "lone-surrogate" if "surrogate" in name else "deep-nesting")
            yield _file(family, f"{where}={name}", _dump(obj, raw), good)
        old = obj_get(base, path)
        if isinstance(old, int) and not isinstance(old, bool):
            for name, value in (("negative", -1), ("out-of-range", old + 10 ** 6), ("zero", 0)):
                obj = json.loads(line)
                _set(obj, path, value)
                yield _file("offset", f"{where}={name}", _dump(obj), good)
        if isinstance(old, str):
            for name, value in _TEXT:
                obj = json.loads(line)
                _set(obj, path, value if name in ("empty", "whitespace") else old + value)
                yield _file("text", f"{where}+{name}", _dump(obj), good)
    for container, pairs in (("chunks", (("start", "end"),)),
                             ("citations", (("quote_start", "quote_end"), ("answer_start", "answer_end")))):
        for a, b in pairs:
            obj = json.loads(line)
            items = obj.get(container) or []
            if items and a in items[0] and b in items[0]:
                items[0][a], items[0][b] = items[0][b] + 1, items[0][a]
                yield _file("end-before-start", f"{tag}:{container}.0.{a}>{b}", _dump(obj), good)


def obj_get(obj, path):
    for part in path:
        obj = obj[part]
    return obj


def _with_answer(line: str, text: str) -> str:
    obj = json.loads(line)
    obj["answer"] = text
    return _dump(obj)


def cases(full: bool = False) -> Iterator[Case]:
    lines = sample_lines()
    good = [lines[2], lines[3]]
    span, marker = lines[0], lines[1]
    yield from _field_cases(span, "span", good)
    yield from _field_cases(marker, "marker", good)

    # versions and ids
    for name, version in (("2", 2), ("0", 0), ("string", '"1"'), ("true", "true"), ("float", "1.0")):
        obj = json.loads(marker)
        obj["log_version"] = _HOLE
        yield _file("unknown-version", name, _dump(obj, str(version)), good)
    yield _file("duplicate-id", "same answer_id twice", lines[2], good)

    # whole-line defects
    yield _file("truncated", "half a line", marker[: len(marker) // 2], good)
    yield _file("truncated", "one byte short", marker[:-1], good)
    yield _file("not-json", "plain text", "this is not JSON", good)
    yield _file("not-json", "a JSON array line", "[1, 2, 3]", good)
    yield _file("not-json", "NaN score", marker.replace('"retrieval_score": ', '"retrieval_score": NaN, "x": ', 1), good)
    yield _file("nul", "raw NUL byte in a string", marker.encode().replace(b"Casual", b"Cas\x00ual", 1), good)
    yield _file("nul", "raw NUL line", b"\x00" * 64, good)
    yield _file("non-utf8", "latin-1 byte", marker.encode().replace(b"e", b"\xe9", 3), good)
    yield _file("non-utf8", "lone 0xff", marker.encode()[:40] + b"\xff" + marker.encode()[40:], good)
    yield _file("non-utf8", "CESU surrogate bytes", marker.encode().replace(b"Casual", b"\xed\xa0\x80", 1), good)
    yield _file("lone-surrogate", "in the answer text", marker.replace('"answer": "', '"answer": "\\ud83d', 1), good)
    yield _file("deep-nesting", "extra field", marker[:-1] + ', "extra": ' + "[" * DEEP + "]" * DEEP + "}", good)
    yield _file("deep-nesting", "locator", span.replace('"locator": ', '"locator": {"x": ' + "[" * DEEP + "]" * DEEP
                                                         + "}, \"old\": ", 1), good)
    yield _file("deep-nesting", "whole line", "[" * 100_000 + "]" * 100_000, good)

    # pathological answers: every one must be checked (or refused) in linear time
    sizes = (12_000, 48_000, 200_000) if full else (12_000,)
    for n in sizes:
        yield _file("pathological", f"x.\\n answer of {n} characters", _with_answer(marker, "x.\n" * (n // 3)), good)
        yield _file("pathological", f"[1] answer of {n} characters", _with_answer(marker, "[1]" * (n // 3)), good)
        yield _file("pathological", f"one sentence of {n} numbers",
                    _with_answer(marker, " ".join(["1.5"] * (n // 4)) + " [1]."), good)
    yield _file("pathological", "5,000-digit marker", _with_answer(marker, f"It is so [{HUGE_INT}]."), good)
    yield _file("pathological", "5,000-digit number in a cited sentence",
                _with_answer(marker, f"Casual leave is {HUGE_INT} days [1]."), good)
    yield _file("pathological", "5,000-digit marker list", _with_answer(marker, "It is [1, " + "1" * 5000 + "]."),
                good)

    # huge lines: over the documented limit (and, in the full run, the 50 MB line of the issue)
    big = 50_000_000 if full else 17_000_000
    obj = json.loads(marker)
    obj["answer"] = "Casual leave is 8 days per year. " * (big // 33)
    yield _file("huge-line", f"{big // 1_000_000} MB answer line", _dump(obj), good)
    yield _file("huge-line", f"{big // 1_000_000} MB unbroken junk", b"x" * big, good)

    # file-level
    body = "\n".join(lines[:4]) + "\n"
    yield Case("bom", "UTF-8 BOM", b"\xef\xbb\xbf" + body.encode(), lines=4)
    yield Case("crlf", "CRLF line ends", body.replace("\n", "\r\n").encode(), lines=4)
    yield Case("cr", "CR-only line ends", body.replace("\n", "\r").encode(), lines=4)
    yield Case("blank", "blank lines between", body.replace("\n", "\n\n  \n").encode(), lines=4)
    yield Case("no-final-newline", "last line without newline", body.rstrip("\n").encode(), lines=4)
    yield Case("empty", "empty file", b"", lines=0)
    yield Case("empty", "only blank lines", b"\n\n   \n", lines=0)
    yield Case("dir", "a directory as the log", kind="dir")
    yield Case("missing", "no such file", kind="missing")
    yield Case("json", "a JSON array of answers", ("[" + ",".join(lines[:3]) + "]").encode(), lines=1)
    yield Case("json", "one pretty-printed answer", json.dumps(json.loads(lines[0]), indent=2).encode(),
               lines=len(json.dumps(json.loads(lines[0]), indent=2).splitlines()))


def sample(every: int, seed: int = 11) -> list[Case]:
    """A bounded, reproducible sample: every family's first case, then one case in ``every``."""
    rng = random.Random(seed)
    out: list[Case] = []
    seen: set[str] = set()
    for case in cases():
        if case.family not in seen or rng.randrange(every) == 0:
            seen.add(case.family)
            out.append(case)
    return out


# --- running a case ----------------------------------------------------------------------------

COMMANDS = (("check", "text"), ("check", "json"), ("report", "text"), ("report", "json"))
PAGES = ("pages/review.py", "pages/failures.py", "pages/calibration.py", "pages/data.py")


class Hang(Exception):
    """A case ran past its time limit."""


@dataclass(frozen=True)
class Outcome:
    target: str  # "check text", "pages/review.py", ...
    status: str  # "ok", "traceback", "hang" or "lost" (fewer records than non-blank lines)
    detail: str = ""
    seconds: float = 0.0


def _alarm(limit: float):
    import signal

    def on_alarm(signum, frame):
        raise Hang(f"over {limit:.0f} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    return previous


def _disarm(previous) -> None:
    import signal

    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def run_command(case: Case, path: Path, command: str, fmt: str, limit: float = 30.0) -> Outcome:
    """``citecheck COMMAND LOG --format FMT`` in this process; a traceback is any exception that
    escapes the command's ``main``."""
    import io
    import time
    import traceback

    from citecheck.cli.main import main

    target = f"{command} {fmt}"
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    previous = _alarm(limit)
    try:
        code = main([command, str(path), "--format", fmt], out, err)
    except Hang as exc:
        return Outcome(target, "hang", str(exc), time.perf_counter() - started)
    except BaseException as exc:  # noqa: BLE001 - anything that escapes is the defect measured
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return Outcome(target, "traceback", f"{type(exc).__name__} at {Path(tb.filename).name}:{tb.lineno}: "
                       f"{str(exc)[:120]}", time.perf_counter() - started)
    finally:
        _disarm(previous)
    seconds = time.perf_counter() - started
    if case.kind != "file":
        return Outcome(target, "ok" if code == 2 and err.getvalue() else "lost",
                       "" if code == 2 else f"exit {code} for a {case.kind}", seconds)
    if command == "check" and fmt == "json":
        kinds = [json.loads(line)["record"] for line in out.getvalue().splitlines()]
        got = sum(1 for k in kinds if k in ("answer", "error"))
        if got != case.lines:
            return Outcome(target, "lost", f"{got} records for {case.lines} lines", seconds)
    return Outcome(target, "ok", "", seconds)


def run_pages(path: Path, folder: Path, limit: float = 60.0, pages=PAGES) -> list[Outcome]:
    """Open the app on the log (the default page), then switch to every page (and open each of the
    Failures page's tabs: only the open one is drawn); an exception shown by the app, or one that
    escapes the script run, is a traceback."""
    import os

    import streamlit as st
    from citecheck.reports.failures_view import TAB_KEY, TABS
    from streamlit.testing.v1 import AppTest

    env = {"CITECHECK_LOGS": str(path), "CITECHECK_CORPUS": "", "CITECHECK_GOLDEN": "",
           "CITECHECK_LABELS": str(folder / "labels.jsonl"), "CITECHECK_VERDICTS": str(folder / "verdicts.jsonl")}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    st.cache_resource.clear()
    st.cache_data.clear()
    out: list[Outcome] = []
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=limit)
        for page in pages:
            first = page == PAGES[0] and not out
            outcome, broke = _page_run(at, page, at.run if first else lambda: at.switch_page(page).run())
            out.append(outcome)
            if page == "pages/failures.py" and outcome.status == "ok":
                for tab in TABS[1:]:
                    at.session_state[TAB_KEY] = tab
                    outcome, broke = _page_run(at, f"{page} [{tab}]", at.run)
                    out.append(outcome)
                    if broke:
                        break
            if broke:  # (the script run itself broke: a new app for the next page)
                at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=limit)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out


def _page_run(at, target: str, run) -> tuple[Outcome, bool]:
    """One script run of the app (``run``): its outcome, and whether the run itself broke (an
    exception that escaped it, or a hang), after which the caller starts a new app."""
    import time

    started = time.perf_counter()
    try:
        run()
    except RuntimeError as exc:
        status = "hang" if "timed out" in str(exc) else "traceback"
        return Outcome(target, status, str(exc)[:160], time.perf_counter() - started), True
    except Exception as exc:  # noqa: BLE001
        return Outcome(target, "traceback", f"{type(exc).__name__}: {str(exc)[:120]}",
                       time.perf_counter() - started), True
    seconds = time.perf_counter() - started
    if at.exception:
        return Outcome(target, "traceback", f"{at.exception[0].message[:160]}", seconds), False
    return Outcome(target, "ok", "", seconds), False
