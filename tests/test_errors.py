"""One error root: every error citecheck raises on purpose derives from CitecheckError, so the
command line handles them all in one place (``cli.main``) and the pages can catch them as one."""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil

import citecheck
import pytest
from citecheck.cli.main import main
from citecheck.errors import CheckedStoreError, CitecheckError, DatabaseError, StoreError


def _error_classes():
    found = {}
    for info in pkgutil.walk_packages(citecheck.__path__, "citecheck."):
        if info.name.endswith("cluster"):  # needs the optional dask extra; holds no error class
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


ERRORS = _error_classes()


def test_the_walk_finds_the_errors_of_every_domain():
    names = {name.rsplit(".", 1)[1] for name in ERRORS}
    assert {"EstimateError", "EventError", "GuidelinesError", "LabelError", "SampleError", "UnknownPrice",
            "WriteFailed", "StoreError", "ClaimsError"} <= names


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_every_error_derives_from_the_root(name):
    assert issubclass(ERRORS[name], CitecheckError)


def test_one_store_error_family():
    assert issubclass(DatabaseError, StoreError) and issubclass(CheckedStoreError, StoreError)
    assert [n for n in ERRORS if n.endswith(".StoreError")] == ["citecheck.errors.StoreError"]


def test_the_old_bases_still_hold_for_callers_that_catch_them():
    from citecheck.labelling.sample import SampleError
    from citecheck.llm.pricing import UnknownPrice
    from citecheck.storage.durable import WriteFailed

    assert issubclass(SampleError, ValueError) and issubclass(UnknownPrice, KeyError)
    assert issubclass(WriteFailed, OSError)


def test_main_says_a_domain_error_in_one_place(tmp_path):
    """No verdicts to estimate from: the command raises, main says it as every error, exit 2."""
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("")
    (tmp_path / "l.jsonl").write_text("")
    out, err = io.StringIO(), io.StringIO()
    code = main(["estimate", "--log", "sample_data/answers.jsonl", "--labels", str(tmp_path / "l.jsonl"),
                 "--verdicts", str(verdicts)], out, err)
    assert code == 2 and err.getvalue().startswith("citecheck estimate: no verdicts in ")
