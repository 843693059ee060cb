"""A checked store survives a crash at any moment: ``check --store`` killed (SIGKILL) at random
moments of a first check and of later ones; the next check finishes without a hand deletion, and
``report --store`` then equals a clean run's.  Before the next check, ``report`` says the store is
unfinished and how to finish it, instead of "not a checked store"."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from citecheck.cli.main import main
from citecheck.storage.checked.folder import META, interrupted
from test_store import generated_log

KILLS = int(os.environ.get("CITECHECK_CRASH_KILLS", "8"))  # bench/ runs more
ANSWERS = int(os.environ.get("CITECHECK_CRASH_ANSWERS", "4000"))


def run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _check_process(log: Path, store: Path) -> subprocess.Popen:
    code = ("import sys; from citecheck.cli.main import main; "
            f"sys.exit(main(['check', {str(log)!r}, '--store', {str(store)!r}, '--quiet']))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _report(store: Path) -> dict:
    code, out, err = run(["report", "--store", store, "--format", "json"])
    assert code in (0, 4), err
    report = json.loads(out)
    assert report.pop("inputs")["store"] == str(store)  # (the one field that names the store)
    return report


def test_a_check_killed_at_any_moment_is_finished_by_the_next(tmp_path):
    log = generated_log(tmp_path / "log.jsonl", ANSWERS)
    grown = tmp_path / "grown.jsonl"
    grown.write_bytes(log.read_bytes() + generated_log(tmp_path / "more.jsonl", 300, seed=11).read_bytes())
    clean = tmp_path / "clean"
    started = time.monotonic()
    assert run(["check", log, "--store", clean, "--quiet"])[0] in (0, 1, 4)
    seconds = time.monotonic() - started
    want = _report(clean)
    rng = random.Random(5)
    said = {"killed": 0, "finished before the kill": 0, "unfinished said": 0}
    for n in range(KILLS):
        store = tmp_path / f"store-{n}"
        later = n % 2 == 1  # odd rounds: the kill hits a later check, of the log grown since, into a finished store
        target = tmp_path / f"log-{n}.jsonl"
        target.write_bytes(log.read_bytes())
        if later:
            assert run(["check", target, "--store", store, "--quiet"])[0] in (0, 1, 4)
            target.write_bytes(grown.read_bytes())
        process = _check_process(target, store)
        time.sleep(rng.uniform(0.0, seconds * (0.5 if later else 1.2)))  # (a later check re-checks few lines)
        process.send_signal(signal.SIGKILL)
        code = process.wait()
        said["killed" if code == -signal.SIGKILL else "finished before the kill"] += 1
        if not later and not (store / META).exists() and store.exists() and interrupted(store):
            code, _, err = run(["report", "--store", store])
            assert code == 2 and "unfinished checked store" in err and "check LOG... --store" in err
            said["unfinished said"] += 1
        code, _, err = run(["check", target, "--store", store, "--quiet"])  # no hand deletion
        assert code in (0, 1, 4), err
        clean_target = tmp_path / f"clean-{n}"
        assert run(["check", target, "--store", clean_target, "--quiet"])[0] in (0, 1, 4)
        assert _report(store) == _report(clean_target)
        if not later:
            assert _report(store)["headline"] == want["headline"]
    print(said)
    assert said["killed"] >= KILLS // 4, said  # (the others finished before their kill: still checked above)


def test_a_folder_that_is_not_a_store_is_never_taken_for_an_unfinished_one(tmp_path):
    folder = tmp_path / "mine"
    (folder / "answers").mkdir(parents=True)
    (folder / "answers" / "notes.txt").write_text("my own file")
    assert not interrupted(folder)
    log = generated_log(tmp_path / "log.jsonl", 20)
    code, _, err = run(["check", log, "--store", folder, "--quiet"])
    assert code == 2 and "not empty and has no store.json" in err
    assert (folder / "answers" / "notes.txt").read_text() == "my own file"


def test_a_store_written_with_relative_paths_works_from_anywhere_and_moves_with_its_logs(tmp_path, monkeypatch):
    from citecheck.labelling import labels as label_store
    from citecheck.labelling.items import items_of
    from citecheck.storage.checked.answers import StoreAnswers

    work = tmp_path / "work"
    work.mkdir()
    generated_log(work / "a.jsonl", 30)
    monkeypatch.chdir(work)
    assert run(["check", "a.jsonl", "--store", "S", "--quiet"])[0] in (0, 1, 4)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    answers = StoreAnswers(work / "S")
    first = answers.answer_ids[0]
    result = answers.get(first)
    assert result is not None and result.answer.answer_id == first  # (an AttributeError on None before)
    labels = tmp_path / "labels.jsonl"
    item = next(i for i in items_of(result) if i.citation is not None)
    label_store.append(labels, label_store.make_label(item, "not_supported", "ana"))
    code, out, err = run(["report", "--store", work / "S", "--labels", labels, "--format", "json"])
    assert code in (0, 4) and "changed since" not in err, err
    human = [r for r in json.loads(out)["headline"] if r["key"] == "human_not_supported_rate"]
    assert (human[0]["count"], human[0]["total"]) == (1, 1)
    moved = tmp_path / "moved"
    work.rename(moved)  # the store and its log move together
    assert StoreAnswers(moved / "S").get(first) is not None
    (moved / "a.jsonl").unlink()
    gone = StoreAnswers(moved / "S")
    assert gone.get(first) is None and "a.jsonl" in str(gone.errors[0]) and "is gone" in str(gone.errors[0])
