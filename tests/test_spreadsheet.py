"""Every CSV citecheck writes keeps a spreadsheet from running a text as a formula
(core/citecheck/contract/spreadsheet.py): a question from a log, a model's name, a reviewer's name or
note that begins with = + - @ (or a tab or carriage return) is written after a ', on every path
(the failing answers from a log, from a store and from the page; the report; the labels export;
the Team figures), and the JSON formats keep the text as it was."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from citecheck.cli.main import main
from citecheck.contract import spreadsheet
from citecheck.labelling import labels as label_store
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"
EVIL = "=HYPERLINK(\"http://x.example\",\"y\")"


@given(st.text())
def test_a_cell_reads_back_as_the_text_or_the_text_after_a_quote(text):
    out = io.StringIO()
    spreadsheet.Writer(out).writerow([text, 3, None, -2.5])
    (back,) = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert back[1:] == ["3", "", "-2.5"]  # (numbers as they are: only texts are guarded)
    if text.startswith(spreadsheet.FORMULA_STARTS):
        assert back[0] == "'" + text
    else:
        assert back[0] == text


def _log(tmp_path: Path) -> Path:
    lines = LOG.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["question"], first["model"] = EVIL, "@model"
    first["answer"] = first["answer"].rstrip() + " Another claim."  # (failing: an uncited sentence)
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def _rows(argv: list[str]) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    assert main(argv, out, err) in (0, 1), err.getvalue()
    return list(csv.DictReader(io.StringIO(out.getvalue())))


def test_the_failing_answers_and_the_report_guard_texts_from_the_log_on_every_path(tmp_path):
    log = _log(tmp_path)
    assert main(["check", str(log), "--corpus", str(CORPUS), "--store", str(tmp_path / "store")], io.StringIO(),
                io.StringIO()) == 0
    for source in ([str(log), "--corpus", str(CORPUS)], ["--store", str(tmp_path / "store")]):
        failing = _rows(["report", *source, "--format", "failing-csv"])
        row = next(r for r in failing if r["question"].endswith(EVIL))
        assert (row["question"], row["model"]) == ("'" + EVIL, "'@model")
        assert not any(v.startswith(spreadsheet.FORMULA_STARTS) for r in failing for v in r.values())
        report = _rows(["report", *source, "--format", "csv"])
        assert {r["group"] for r in report if r["section"] == "model"} >= {"'@model"}
        out = io.StringIO()
        main(["report", *source, "--format", "json"], out, io.StringIO())
        assert "@model" in {g["model"] for g in json.loads(out.getvalue())["by_model"]}  # (JSON: as logged)


def test_the_labels_export_guards_names_and_notes(tmp_path):
    from citecheck.checking.files import check_options
    from citecheck.labelling import dataset

    data = dataset.load([LOG], check_options(CORPUS))
    item = next(i for i in data.all_items if i.citation is not None)
    labels = tmp_path / "labels.jsonl"
    label_store.append(labels, label_store.make_label(item, "not_supported", "+ana", note="-1 is wrong; =SUM(A1)"))
    rows = _rows(["labels", "export", str(labels), "--log", str(LOG), "--corpus", str(CORPUS), "--format", "csv"])
    row = next(r for r in rows if r.get("label:+ana"))  # (a header begins with label: or note:)
    assert row["note:+ana"] == "'-1 is wrong; =SUM(A1)"
