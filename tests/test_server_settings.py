"""The running server's settings (core/citecheck/web/settings.py ``server_settings``): parsed once, and parsed
again as soon as an argument, a CITECHECK_* variable or the working folder changes."""

from __future__ import annotations

from citecheck.web.settings import load_settings, server_settings


def test_the_same_arguments_and_variables_give_the_settings_parsed_before(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITECHECK_OVERLAP", "2")
    argv = ["--labels", str(tmp_path / "labels.jsonl")]
    first = server_settings(argv, root=tmp_path)
    assert first == load_settings(argv, root=tmp_path) and first.overlap == 2
    assert server_settings(list(argv), root=tmp_path) is first  # not parsed again

    monkeypatch.setenv("CITECHECK_OVERLAP", "3")  # a variable changed: parsed again, never stale
    assert server_settings(argv, root=tmp_path).overlap == 3
    assert server_settings([*argv, "--overlap", "4"], root=tmp_path).overlap == 4
    monkeypatch.setenv("UNRELATED", "x")  # other variables are not settings
    again = server_settings(argv, root=tmp_path)
    assert server_settings(argv, root=tmp_path) is again

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # relative paths resolve from the working folder
    moved = server_settings(["--labels", "labels.jsonl"], root=tmp_path)
    assert moved.labels == tmp_path / "elsewhere" / "labels.jsonl"
