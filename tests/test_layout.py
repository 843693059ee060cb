"""The shape of the code: core/citecheck/ is the package (the folder is the import name), a ladder
of domain packages each importing only from the packages below it, with no import cycle between
modules; every module name says one thing; no cryptic module aliases; and core/ never imports Streamlit."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core" / "citecheck"

# Bottom to top.  A module may import from its own rung and from any rung below it.  A rung is a
# package (or a sub-package, ``storage.checked``: the checked store checks answers and makes
# figures, so it sits above them while the rest of storage sits at the bottom), or one of the two
# top-level modules: ``errors`` (the root of every error) and ``config`` (every setting, declared once).
LADDER = ("errors", "config", "text", "storage", "contract", "llm", "checking", "labelling", "review", "reports",
          "storage.checked", "judging", "importers", "pipeline", "web", "cli")
# The modules allowed at the top of the package (besides __init__): the error root and the settings.
TOP_MODULES = {"errors.py", "config.py"}
# Module aliases that are conventions everyone reads (pandas as pd...), not cryptic letters.
CONVENTIONAL_ALIASES = {"pd", "np", "pa", "pq", "pc", "st", "alt", "hs", "cli"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["citecheck", *parts])


def imports_of(path: Path, package_root: Path = CORE) -> list[tuple[str, int]]:
    """Every citecheck module this file imports (absolute name, line), relative imports resolved."""
    name = module_name(path) if path.is_relative_to(CORE) else ""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "citecheck" or target.startswith("citecheck.")):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((sub if module_path(sub) else target, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("citecheck")]
    return out


def module_path(name: str) -> Path | None:
    parts = name.split(".")[1:]
    if not parts:
        return CORE / "__init__.py"
    rel = Path(*parts)
    for candidate in (CORE / rel.with_suffix(".py"), CORE / rel / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def rung(name: str) -> int | None:
    """The ladder rung of a module: its longest ladder entry (``storage.checked.query`` is on
    ``storage.checked``, ``storage.lines`` on ``storage``)."""
    rest = name.split(".", 1)[1] if "." in name else ""
    best = None
    for i, entry in enumerate(LADDER):
        if (rest == entry or rest.startswith(entry + ".")) and (best is None or len(entry) > len(LADDER[best])):
            best = i
    return best


MODULES = sorted(CORE.rglob("*.py"))
USERS = sorted([ROOT / "app.py", ROOT / "dev.py", *ROOT.glob("pages/*.py"), *ROOT.glob("tests/*.py"),
                *ROOT.glob("bench/*.py"), *MODULES])


def test_every_package_is_on_the_ladder():
    packages = {module_name(p.parent / "__init__.py").removeprefix("citecheck.") for p in CORE.rglob("__init__.py")}
    packages.discard("citecheck")
    tops = {m.removesuffix(".py") for m in TOP_MODULES}
    assert {p for p in packages if "." not in p} | tops == {e for e in LADDER if "." not in e}, \
        "add the new package to LADDER"
    for package in packages:
        assert rung(f"citecheck.{package}") is not None
    loose = {p.name for p in CORE.glob("*.py")} - {"__init__.py", "__main__.py"}  # (__main__: python -m citecheck)
    assert loose == TOP_MODULES, f"modules outside a package: {loose - TOP_MODULES}"


def test_the_package_folder_is_the_import_name():
    """Every citecheck module imported anywhere (core, pages, tests, bench) is a file at its path
    under core/, so git grep and import-graph tools land on it."""
    missing = [f"{path.relative_to(ROOT)}:{line}: {target}" for path in USERS
               for target, line in imports_of(path) if module_path(target) is None]
    assert missing == []
    assert module_path("citecheck.labelling.labels") == ROOT / "core/citecheck/labelling/labels.py"


def test_every_module_name_says_one_thing():
    """No two modules of core/ share a file name (besides __init__): a name means one thing."""
    names = Counter(p.name for p in MODULES if p.name != "__init__.py")
    packages = {p.parent.name for p in CORE.rglob("__init__.py")}
    same = {n: [str(p.relative_to(CORE)) for p in MODULES if p.name == n] for n, c in names.items() if c > 1}
    assert same == {}
    shadowing = sorted(n for n in names if n.removesuffix(".py") in packages)
    assert shadowing == [], "a module named like a package"


def _short_aliases(path: Path) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{found}" for found in _short_aliases_in(path)]


def _short_aliases_in(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                cryptic = len(a.asname or "") <= 3 or (a.asname or "").isupper()  # R, F, VIEW: letters, not words
                if a.asname and cryptic and a.asname not in CONVENTIONAL_ALIASES:
                    module = f"{node.module}." if isinstance(node, ast.ImportFrom) and node.module else ""
                    found.append(f"{node.lineno}: {module}{a.name} as {a.asname}")
    return found


def test_no_cryptic_aliases():
    """Import names as they are, or with an alias that is a word: ``R`` was reasons in one file and
    estimate_report in another."""
    assert [f for p in USERS for f in _short_aliases(p)] == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_no_import_goes_up_the_ladder(path):
    here = rung(module_name(path))
    upward = [f"line {line}: {target}" for target, line in imports_of(path)
              if here is not None and (rung(target) or 0) > here]
    assert upward == [], f"{path.relative_to(ROOT)} imports from higher packages: {upward}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle_between_modules():
    graph = {module_name(p): {t for t, _ in imports_of(p) if t != module_name(p)} for p in MODULES}
    # A package's __init__ re-exporting its own modules is not a cycle worth refusing.
    for name in graph:
        graph[name] = {t for t in graph[name] if not (name.startswith(t + ".") and module_path(t).name == "__init__.py")}
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_the_checks_themselves_catch_what_they_must(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert rung("citecheck.cli.main") > rung("citecheck.contract.log")
    assert rung("citecheck.storage.lines") < rung("citecheck.contract.log") < rung("citecheck.storage.checked.query")
    assert rung("citecheck.errors") == 0
    # The highest and lowest rungs hold what they should.
    assert module_path("citecheck.contract.log") and module_path("citecheck.cli.main")
    bad = tmp_path / "bad.py"
    bad.write_text("from citecheck.labelling import labels as L\nimport pandas as pd\nfrom citecheck import errors\n"
                   "from citecheck.judging import calibration_view as VIEW\nfrom citecheck import config as settings\n")
    assert [a.split(": ")[-1] for a in _short_aliases_in(bad)] == ["citecheck.labelling.labels as L",
                                                                   "citecheck.judging.calibration_view as VIEW"]


def test_core_never_imports_streamlit():
    offenders = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "streamlit"]
    assert offenders == []


def _ruff(path_name: str, source: str) -> str:
    import shutil
    import subprocess
    import sys

    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    proc = subprocess.run([ruff, "check", "--no-cache", "--stdin-filename", path_name, "-"], input=source,
                          capture_output=True, text=True, cwd=ROOT)
    return proc.stdout + proc.stderr


def test_ruff_bans_streamlit_in_core_and_only_there():
    source = "import streamlit as st\n\nst.write(1)\n"
    assert "TID251" in _ruff("core/citecheck/review/x.py", source)
    assert "TID251" not in _ruff("pages/x.py", source)
    assert "TID251" not in _ruff("app.py", source)


# --- every third-party module core/ imports is declared ----------------------------------------------


def _declared() -> set[str]:
    """Distribution names in pyproject's runtime dependencies (not the extras, but for the ``dask``
    extra: only ``check --engine dask`` and URL logs import it, lazily, saying to install it; and the
    ``otel`` extra: only ``collect`` imports it, for protobuf exports, saying to install it), normalised."""
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    deps = project["dependencies"] + extras["dask"] + extras["otel"]
    return {re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0].lower().replace("_", "-") for d in deps}


def _third_party_imports() -> dict[str, list[str]]:
    """Top-level module name -> where core/ imports it, for every module outside the stdlib."""
    import sys

    out: dict[str, list[str]] = {}
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("citecheck", "__future__"):
                    out.setdefault(top, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_every_third_party_module_core_imports_is_a_declared_dependency():
    from importlib.metadata import packages_distributions

    dists = packages_distributions()
    declared = _declared()
    imported = _third_party_imports()
    assert {"anthropic", "pandas", "numpy"} <= set(imported)  # the walk finds real imports
    undeclared = {}
    for module, where in imported.items():
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not names & declared:
            undeclared[module] = where
    assert not undeclared, f"imported by core/ but not in pyproject dependencies: {undeclared}"


def test_the_declared_check_would_catch_an_undeclared_import():
    from importlib.metadata import packages_distributions

    declared = _declared() - {"rapidfuzz"}
    dists = packages_distributions()
    missing = [m for m in _third_party_imports() if not {d.lower() for d in dists.get(m, [m])} & declared]
    assert missing == ["rapidfuzz"]


def test_the_installed_package_is_this_folder():
    """The editable install (the README's commands) imports each module from its file under core/."""
    import importlib

    for name in ("citecheck", "citecheck.labelling.labels", "citecheck.storage.checked.folder"):
        module = importlib.import_module(name)
        assert Path(module.__file__).resolve() == module_path(name).resolve()
