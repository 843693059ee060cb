"""A damaged checked store (a part cut short, zero-filled, overwritten with garbage, deleted, or a
whole partition folder gone) is said plainly by ``report --store``, ``store verify`` and the app:
the damaged file, the command that repairs it and exit code 6, never a DuckDB or pyarrow
traceback; and ``check --store`` repairs it (the store then reports what a clean one does)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import streamlit as st
from citecheck.cli.main import main
from citecheck.storage.checked.folder import Store
from helpers import figures_only
from streamlit.testing.v1 import AppTest
from test_store import generated_log

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv], out, err)
    return code, figures_only(out.getvalue()), err.getvalue()  # (the inputs statement differs by path)


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _zeros(path: Path) -> None:
    path.write_bytes(b"\0" * path.stat().st_size)


def _garbage_inside(path: Path) -> None:
    """Bytes overwritten in the middle: the footer still reads, the rows do not."""
    data = bytearray(path.read_bytes())
    for i in range(8, len(data) // 2):
        data[i] = (i * 131) % 251
    path.write_bytes(bytes(data))


def _delete(path: Path) -> None:
    path.unlink()


def _delete_folder(path: Path) -> None:
    shutil.rmtree(path.parent)


DAMAGE = {"cut": _cut, "zero-filled": _zeros, "garbage": _garbage_inside, "deleted": _delete,
          "folder deleted": _delete_folder}


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    return generated_log(tmp_path_factory.mktemp("log") / "log.jsonl", 400)


@pytest.fixture(scope="module")
def clean_report(log, tmp_path_factory):
    store = tmp_path_factory.mktemp("clean") / "store"
    assert run(["check", log, "--store", store, "--quiet"])[0] in (0, 1, 4)
    return json.loads(run(["report", "--store", store, "--format", "json"])[1])


@pytest.mark.parametrize("table", ["answers", "citations"])
@pytest.mark.parametrize("how", DAMAGE)
def test_damage_is_said_and_repaired(tmp_path, log, clean_report, how, table):
    store = tmp_path / "store"
    assert run(["check", log, "--store", store, "--quiet"])[0] in (0, 1, 4)
    (part,) = Store(store).files(table)
    DAMAGE[how](Path(part))
    code, out, err = run(["report", "--store", store, "--format", "json"])
    if how != "garbage" or code != 4:  # (garbage under a sound footer may read as rows: verify finds it)
        assert code == 6, (code, err)
        assert "is damaged" in err and f"citecheck check {log} --store {store}" in err and "Traceback" not in err
        assert table in err  # the damaged file is named
    code, out, err = run(["store", "verify", store])
    assert code == 6 and "damaged:" in out
    code, _, err = run(["check", log, "--store", store, "--quiet"])  # the repair
    assert code in (0, 1, 4), err
    assert run(["store", "verify", store])[0] == 0
    assert json.loads(run(["report", "--store", store, "--format", "json"])[1]) == clean_report


def test_the_app_says_a_store_is_damaged(tmp_path, log, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    store = tmp_path / "store"
    assert run(["check", log, "--store", store, "--quiet"])[0] in (0, 1, 4)
    _cut(Path(Store(store).files("answers")[0]))
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_STORE", str(store))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    for page in ("pages/review.py", "pages/failures.py"):
        at = at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        shown = "\n".join(str(h.proto.body) for h in at.get("html"))
        assert "is damaged" in shown and "citecheck check" in shown, page


def test_verify_names_files_a_stopped_check_left_and_a_log_that_changed(tmp_path, log):
    store = tmp_path / "store"
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(log.read_bytes())
    assert run(["check", copy, "--store", store, "--quiet"])[0] in (0, 1, 4)
    (part,) = Store(store).files("answers")
    left = Path(part).with_name("part-999999.parquet")
    left.write_bytes(b"half a part")
    with open(copy, "ab") as handle:
        handle.write(log.read_bytes().splitlines(keepends=True)[0])
    code, out, _ = run(["store", "verify", store])
    assert code == 0  # neither is damage: the store still reads as it was
    assert f"not listed: {left}" in out and f"changed: {copy}" in out and "sound" in out
    assert run(["check", copy, "--store", store, "--quiet"])[0] in (0, 1, 4)
    code, out, _ = run(["store", "verify", store])
    assert code == 0 and "not listed" not in out and "changed:" not in out
