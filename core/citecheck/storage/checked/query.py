"""Figures from the checked store: SQL run by DuckDB (embedded, no server) over its Parquet files.

Every figure is the one ``citecheck.reports.figures`` computes from the in-memory table of the
same answers: the SQL only sums, counts and groups; the figures are then made by the same
functions (``headline_of``, ``reasons_of``) and the same pandas steps on the small aggregates.
Nothing here holds one row per answer, except the optional golden-set figures, which need each
answer's question (three columns, not the checked answers).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import duckdb
import pandas as pd

from citecheck.checking.checker import check_answer
from citecheck.contract import reasons as reason_codes
from citecheck.contract.log import answer_of
from citecheck.errors import CheckedStoreError, RecordError
from citecheck.labelling.labels import Label
from citecheck.reports import figures as report_figures
from citecheck.reports.check_report import Summary
from citecheck.reports.failures import Overview
from citecheck.reports.golden import GoldenQuestion, RetrievalEval, evaluate_retrieval, question_key
from citecheck.reports.golden import index as golden_index
from citecheck.storage.checked import schema as store_schema
from citecheck.storage.checked.folder import Store, options_from
from citecheck.storage.lines import Line, line_at

_SQL_TYPES = {"int64": "BIGINT", "bool": "BOOLEAN", "double": "DOUBLE", "string": "VARCHAR"}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


class StoreQuery:
    """A DuckDB connection with views ``answers``, ``citations``, ``sentences``, ``errors`` over the
    store's parts (of the logs ``sources``, default all) and ``logs`` (source, seq: log order)."""

    def __init__(self, store: Store, sources: Iterable[str] | None = None, threads: int | None = None):
        self.store = store
        self._values: dict[str, list[str]] = {}
        wanted = None if sources is None else list(sources)
        self.sources = [e["source"] for e in store.logs] if wanted is None else wanted
        found = store.damage(self.sources)  # (Parquet footers only: a missing or cut part is said before any query)
        if found:
            raise store.damaged(found)
        self.con = duckdb.connect(":memory:")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        for table, schema in store_schema.TABLES.items():
            files = store.files(table, self.sources)
            if files:
                self._view(table, schema, files)
            else:
                self.con.register(table, schema.empty_table())
        order = {s: i for i, s in enumerate(self.sources)}
        self.con.register("logs", pd.DataFrame({"source": list(order), "seq": list(order.values())},
                                               columns=["source", "seq"]).astype({"source": object, "seq": "int64"}))
        self._labels(None)

    def _view(self, table: str, schema, files: list[str]) -> None:
        """A view over the parts; a column a part written by an older citecheck lacks (a reason code
        added since) reads as 0 for a count, null otherwise."""
        source = f"read_parquet({_list(files)}, union_by_name = true)"
        have = {row[0] for row in self.con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        added = [f"{'0' if f.name in reason_codes.ALL_REASONS else 'NULL'}::{_SQL_TYPES.get(str(f.type), 'VARCHAR')} AS {_q(f.name)}"
                 for f in schema if f.name not in have]
        self.con.execute(f"CREATE VIEW {table} AS SELECT *{''.join(', ' + a for a in added)} FROM {source}")

    def close(self) -> None:
        self.con.close()

    def sql(self, query: str, params: Sequence | None = None) -> pd.DataFrame:
        with self._damage_said():
            return self.con.execute(query, params or []).fetchdf()

    def one(self, query: str, params: Sequence | None = None) -> tuple[Any, ...]:
        """The row of a query that always gives one: an aggregate (counts, sums, min and max)."""
        with self._damage_said():
            return one_row(self.con, query, params or [])

    def first(self, query: str, params: Sequence | None = None) -> tuple[Any, ...] | None:
        """The first row of a query, or None when it gives none."""
        with self._damage_said():
            return self.con.execute(query, params or []).fetchone()

    @contextlib.contextmanager
    def _damage_said(self):
        """A query that fails on a part's rows (garbage under a sound footer): the store's damage,
        named with the command that repairs it, instead of DuckDB's own error."""
        try:
            yield
        except duckdb.Error as exc:
            found = self.store.damage(self.sources, deep=True)
            if found:
                raise self.store.damaged(found) from exc
            raise

    # --- labels ---------------------------------------------------------------------------

    def _labels(self, counts: pd.DataFrame | None) -> None:
        """The view ``a``: answers with their label counts (``labelled``, ``not_supported``)."""
        if counts is None or counts.empty:
            self.con.execute("CREATE OR REPLACE VIEW a AS SELECT *, 0::BIGINT AS labelled, "
                             "0::BIGINT AS not_supported FROM answers")
            return
        self.con.register("label_counts", counts)
        self.con.execute("CREATE OR REPLACE VIEW a AS SELECT answers.*, coalesce(l.labelled, 0)::BIGINT AS labelled,"
                         " coalesce(l.not_supported, 0)::BIGINT AS not_supported FROM answers LEFT JOIN "
                         "label_counts l USING (source, \"offset\")")

    def use_labels(self, labels: Mapping[tuple[str, str], Label]) -> list[str]:
        """Count the current labels per answer (as ``figures.answer_table`` does): each labelled
        answer's line is read back from its log by offset and checked again.  Returns warnings."""
        by_answer: dict[str, list[Label]] = {}
        for label in labels.values():
            if label.citation is not None:
                by_answer.setdefault(label.answer_id, []).append(label)
        if not by_answer:
            self._labels(None)
            return []
        self.con.register("labelled_ids", pd.DataFrame({"answer_id": list(by_answer)}, dtype=object))
        rows = self.sql("SELECT source, file, \"offset\", length, line_hash, answer_id FROM answers "
                        "WHERE answer_id IN (SELECT answer_id FROM labelled_ids)")
        warnings: list[str] = []
        out = []
        options = {e["source"]: options_from(e["options"]) for e in self.store.logs}
        for row in rows.itertuples(index=False):
            line = read_line(self.store.log_file(row.source), row.offset)
            answer = answer_at(row.file, line)
            if self.store.line_hash(line.raw) != bytes(row.line_hash) or answer is None:
                warnings.append(f"{row.file}: the line of answer {row.answer_id} at byte {row.offset} changed "
                                "since it was checked; check the log into the store again")
                continue
            result = check_answer(answer, options[row.source])
            labelled, not_supported = report_figures.label_counts(result, by_answer[row.answer_id])
            out.append((row.source, int(row.offset), labelled, not_supported))
        self._labels(pd.DataFrame(out, columns=["source", "offset", "labelled", "not_supported"]))
        return warnings

    def result(self, answer_id: str):
        """The checked answer ``answer_id`` (the first with that id, in log order), read back from its
        log by offset and checked with its log's options; None when the store has no such answer.
        Raises CheckedStoreError when the line changed since it was checked."""

        row = self.first("SELECT source, file, \"offset\", line_hash FROM answers JOIN logs USING (source) "
                         "WHERE answer_id = ? ORDER BY seq, \"offset\" LIMIT 1", [answer_id])
        if row is None:
            return None
        source, file, offset, digest = row
        line = read_line(self.store.log_file(source), offset)
        answer = answer_at(file, line)
        if self.store.line_hash(line.raw) != bytes(digest) or answer is None:
            raise CheckedStoreError(f"{file}: the line of answer {answer_id} at byte {offset} changed since it was "
                             "checked; check the log into the store again")
        entry = cast(dict, self.store.log(source))  # (the join with logs keeps only the store's logs)
        return check_answer(answer, options_from(entry["options"]))

    # --- the check summary --------------------------------------------------------------------

    def summary(self) -> Summary:
        """``citecheck check``'s running totals, from the store."""
        codes = ", ".join(f"coalesce(sum({_q(c)}), 0)::BIGINT" for c in reason_codes.ALL_REASONS)
        row = self.one(
            "SELECT count(*), coalesce(sum(refused::INT), 0)::BIGINT, coalesce(sum(ok::INT), 0)::BIGINT, "
            + ", ".join(f"coalesce(sum({c}), 0)::BIGINT" for c in (
                "invalid_markers", "citations", "failed", "with_quote", "quote_in_source", "sentences", "uncited",
                "multi_claim"))
            + f", coalesce(sum(unsupported_number::INT), 0)::BIGINT, {codes}, "
            "coalesce(sum(not_verifiable), 0)::BIGINT FROM answers")
        s = Summary()
        (s.answers, s.refused, s.answers_ok, s.invalid_markers, s.citations, s.failed, s.with_quote,
         s.quote_in_source, s.sentences, s.uncited, s.multi_claim, s.answers_with_unsupported_number) = row[:12]
        s._reasons = list(row[12:-1])
        s.not_verifiable = row[-1]
        s.unreadable_lines = self.one("SELECT count(*) FROM errors")[0]
        return s

    def unreadable(self) -> list[RecordError]:
        """Every unreadable line, in log order then line order."""
        rows = self.con.execute("SELECT file, line, field, message FROM errors JOIN logs USING (source) "
                                "ORDER BY seq, line").fetchall()
        return [RecordError(*r) for r in rows]

    # --- the report figures -------------------------------------------------------------------

    def _sums(self, where: str = "", group: str | None = None) -> pd.DataFrame:
        cols = [f"coalesce(sum({_q(c)}::BIGINT), 0)::BIGINT AS {_q(c)}" for c in report_figures.HEADLINE_SUMS]
        cols += ["coalesce(count_if(invalid_markers > 0), 0)::BIGINT AS invalid_marker_answers",
                 "count(faithfulness)::BIGINT AS scored", "count(*)::BIGINT AS n"]
        if group:
            return self.sql(f"SELECT {_q(group)} AS g, {', '.join(cols)} FROM a {where} GROUP BY 1 ORDER BY 1")
        return self.sql(f"SELECT {', '.join(cols)} FROM a {where}")

    def headline(self, where: str = "") -> list[report_figures.Figure]:
        row = self._sums(where).iloc[0]
        return report_figures.headline_of({k: int(v) for k, v in row.items()}, int(row["n"]))

    def reasons(self) -> pd.DataFrame:
        cols = ", ".join(f"coalesce(sum({_q(c)}), 0)::BIGINT, coalesce(count_if({_q(c)} > 0), 0)::BIGINT" for c in reason_codes.ALL_REASONS)
        row = self.one(f"SELECT count(*), coalesce(sum(citations), 0)::BIGINT, coalesce(sum(sentences), 0)::BIGINT, "
                       f"{cols} FROM a")
        n, cites, sentences = row[:3]
        counts = {code: (row[3 + 2 * i], row[4 + 2 * i]) for i, code in enumerate(reason_codes.ALL_REASONS)}
        return report_figures.reasons_of(counts, cites, sentences, n)

    def breakdown(self, column: str) -> pd.DataFrame:
        """``figures.breakdown``: the headline figures per value of ``column``."""
        rows = []
        for group in self._sums(group=column).to_dict("records"):
            n = int(group["n"])
            row: dict = {column: group["g"], "answers": n}
            for f in report_figures.headline_of({k: int(v) for k, v in group.items() if k != "g"}, n):
                row[f"{f.key}.count"] = f.count
                row[f"{f.key}.total"] = f.total
                row[f"{f.key}.rate"] = f.rate
            rows.append(row)
        return pd.DataFrame(rows)

    def over_time(self, freq: str = "D") -> pd.DataFrame:
        """``figures.over_time``: per day or week (Monday to Sunday, UTC)."""
        unit = {"D": "day", "W": "week"}[freq]
        sums = ", ".join(f"sum({_q(c)}::BIGINT)::BIGINT AS {_q(c)}" for c in report_figures.PERIOD_SUMS)
        g = self.sql(f"SELECT date_trunc('{unit}', time) AS period, count(*)::BIGINT AS answers, {sums} FROM a "
                     "WHERE time IS NOT NULL GROUP BY 1 ORDER BY 1")
        if not g.empty:
            g["period"] = pd.to_datetime(g["period"])
        return report_figures.period_rates(g)

    def faithfulness_scores(self) -> pd.DataFrame | None:
        """``figures.faithfulness_scores``, or None when no answer was scored."""
        scored = self.one("SELECT count(faithfulness) FROM a")[0]
        if not scored:
            return None
        rows = []
        bins = report_figures.SCORE_BINS
        for low, high in zip(bins, bins[1:]):
            op = "<=" if high == bins[-1] else "<"
            answers, withheld = self.one(
                f"SELECT count(*), coalesce(sum(withheld::INT), 0)::BIGINT FROM a WHERE faithfulness >= ? "
                f"AND faithfulness {op} ?", [low, high])
            rows.append({"bin": f"{low:.1f}-{high:.1f}", "low": low, "high": high, "answers": answers,
                         "withheld": withheld, "share": answers / scored})
        return pd.DataFrame(rows)

    def answers_count(self) -> int:
        return self.one("SELECT count(*) FROM answers")[0]

    def overview(self, golden: Sequence[GoldenQuestion] | None = None, k: int = 5) -> Overview:
        """Every figure of ``citecheck report`` (``reports.failures.build``) from the store."""
        n = self.answers_count()
        refusals = retrieval = None
        if golden is not None:
            refusals, retrieval = self._golden_figures(golden, n, k)
        has_models = self.one(f"SELECT count(*) > 0 FROM answers WHERE model <> '{report_figures.NONE}'")[0]
        has_prompts = self.one(f"SELECT count(*) > 0 FROM answers WHERE prompt_version <> '{report_figures.NONE}'")[0]
        overview = StoreOverview(
            table=pd.DataFrame(index=pd.RangeIndex(n)),  # only its length is used: no row is held
            headline=self.headline(), reasons=self.reasons(), by_model=self.breakdown("model"),
            by_prompt=self.breakdown("prompt_version"), weekly=self.over_time("W"), refusals=refusals,
            retrieval=retrieval, unreadable=self.one("SELECT count(*) FROM errors")[0],
            faithfulness=self.faithfulness_scores(), models=bool(has_models), prompts=bool(has_prompts))
        release_memory(self.con)
        return overview

    def _golden_figures(self, golden: Sequence[GoldenQuestion], n: int,
                        k: int) -> tuple[report_figures.RefusalFigures, RetrievalEval]:
        """``figures.refusals`` and ``golden.evaluate_retrieval`` of every answer, reading only the
        answers whose question the golden set has: each distinct question is matched once (by
        ``question_key``, in Python, as the in-memory report matches), and the few that match go
        back to DuckDB as a table to join.  A million answers whose questions are not in the set
        cost one DISTINCT, not a million rows in Python."""
        by_key = golden_index(golden)
        kinds = {}
        for (question,) in self.con.execute("SELECT DISTINCT coalesce(question, '') FROM answers").fetchall():
            if (g := by_key.get(question_key(question))) is not None:
                kinds[question] = int(g.answerable)
        self.con.register("golden_kinds", pd.DataFrame({"question": list(kinds), "kind": list(kinds.values())},
                                                        columns=["question", "kind"]).astype({"question": object,
                                                                                            "kind": "int64"}))
        try:
            rows = self.con.execute(
                "SELECT answer_id, coalesce(a.question, ''), chunk_ids, refused, kind FROM answers a "
                "JOIN logs USING (source) JOIN golden_kinds g ON coalesce(a.question, '') = g.question "
                "ORDER BY seq, \"offset\"").fetchall()
        finally:
            self.con.unregister("golden_kinds")
        answerable = sum(1 for r in rows if r[4] == 1)
        refusals = report_figures.RefusalFigures(
            answerable=answerable, over_refused=sum(1 for r in rows if r[4] == 1 and r[3]),
            unanswerable=len(rows) - answerable, under_refused=sum(1 for r in rows if r[4] == 0 and not r[3]),
            not_in_golden=n - len(rows),
            over_refused_ids=tuple(r[0] for r in rows if r[4] == 1 and r[3]),
            under_refused_ids=tuple(r[0] for r in rows if r[4] == 0 and not r[3]))
        retrieval = evaluate_retrieval(golden, ((r[0], r[1], r[2]) for r in rows), k)
        return refusals, replace(retrieval, not_in_golden=retrieval.not_in_golden + n - len(rows))

    # --- what the Failures page asks -----------------------------------------------------------

    def values(self, column: str) -> list[str]:
        """The distinct values of ``model`` or ``prompt_version``, sorted."""
        if column not in ("model", "prompt_version"):
            raise ValueError(f"no breakdown by {column!r}")
        # kept: the views are over the parts as they were when this query was made (a scan of every
        # answer, asked on each run of the review page's filters: 40 ms at a million answers)
        found = self._values.get(column)
        if found is None:
            found = self._values[column] = [v for (v,) in self.con.execute(
                f"SELECT DISTINCT {column} FROM answers ORDER BY 1").fetchall()]
        return list(found)

    def date_range(self):
        """(first, last) date of the dated answers, or None."""
        first, last = self.one("SELECT min(time), max(time) FROM answers")
        return None if first is None else (first.date(), last.date())

    def undated(self) -> int:
        return self.one("SELECT count(*) - count(time) FROM answers")[0]

    def any_failing(self) -> bool:
        return bool(self.one("SELECT coalesce(count_if(failing), 0) > 0 FROM answers")[0])

    def compare(self, column: str, a: str, b: str) -> list[report_figures.Difference]:
        """``figures.compare``: every headline figure for ``column == a`` against ``column == b``."""
        if column not in ("model", "prompt_version"):
            raise ValueError(f"no comparison by {column!r}")
        groups = {g["g"]: g for g in self._sums(group=column).to_dict("records")}
        empty = {k: 0 for k in (*report_figures.HEADLINE_SUMS, "invalid_marker_answers", "scored")}

        def figures(value):
            g = groups.get(value)
            return report_figures.headline_of({k: int(v) for k, v in g.items() if k != "g"} if g else empty,
                                 int(g["n"]) if g else 0)

        return report_figures.differences(figures(a), figures(b))

    # --- the failing answers table --------------------------------------------------------------

    # The failing-answers table's order: worst first, then by id; ties (an id logged twice) in log order.
    _RANK = "problems DESC, failure_rate DESC, answer_id ASC, seq, \"offset\""
    _RATE = "coalesce(CASE WHEN citations > 0 THEN failed / citations END, 0.0)"
    # The columns the ranking needs besides its keys, read with them (all fixed-width but the id).
    _NARROW = ("answer_id", "problems", "failed", "citations", "labelled", "not_supported")

    def failing(self, filters: report_figures.Filters = report_figures.Filters(), limit: int | None = None) -> pd.DataFrame:
        """``figures.failing``: the answers that match ``filters``, worst first (``limit`` rows).

        With a ``limit``, the matching answers are ranked on the narrow columns the order needs
        (and the label counts, which come from a join), and the wide ones (question, timestamp,
        model, prompt version, reason codes, file) are read only for the rows kept: DuckDB's top-N
        over every failing row's wide columns held about 45 MB more at a million answers.  The rows
        and their order are those of ranking every column at once (``failing_whole``; a test holds
        them equal)."""
        if limit is None:
            return self.failing_whole(filters)
        where, params = self._where(filters)
        cut, cut_params = self._cut(where, params, int(limit))
        where, params = f"{where} AND {cut}", params + cut_params
        narrow = ", ".join(_q(c) for c in self._NARROW)
        kept = self.sql(f"SELECT source, \"offset\", {narrow}, failure_rate FROM (SELECT source, \"offset\", seq, "
                        f"{narrow}, {self._RATE} AS failure_rate FROM a JOIN logs USING (source) WHERE {where} "
                        f"ORDER BY {self._RANK} LIMIT {int(limit)})", params)
        kept["rank"] = range(len(kept))
        wide = [c for c in report_figures.TABLE_COLUMNS if c not in self._NARROW and c != "reasons"]
        columns = ", ".join(f"k.{_q(c)}" if c in self._NARROW else f"w.{_q(c)}"
                            for c in report_figures.TABLE_COLUMNS if c != "reasons")
        name = f"kept_{id(kept):x}"
        self.con.register(name, kept)
        try:
            out = self.sql(f"SELECT {columns}, {self._reasons('w.')} AS reasons, "
                            f"k.failure_rate, k.source, k.\"offset\" FROM {name} k JOIN (SELECT source, \"offset\", "
                            f"{', '.join(_q(c) for c in wide)}, reasons FROM answers) w USING (source, \"offset\") "
                            "ORDER BY k.rank")
        finally:
            self.con.unregister(name)
        release_memory(self.con)
        return out

    def _cut(self, where: str, params: list, limit: int) -> tuple[str, list]:
        """A condition that keeps every one of the ``limit`` worst rows and as few others as the
        first two rank keys can tell: from the rows' count per (problems, failure rate), the pair
        the ``limit``-th worst row has; rows ranked below that pair are left out before DuckDB's
        top-N, which holds every row it is given (about 140 bytes each: 139 MB over a million).
        The rows that tie with that pair are still all ranked."""
        groups = self.con.execute(f"SELECT problems, {self._RATE} AS failure_rate, count(*) FROM a WHERE {where} "
                                  "GROUP BY ALL", params).fetchall()
        if limit <= 0 or sum(n for _, _, n in groups) <= limit or any(p is None for p, _, _ in groups):
            return "TRUE", []
        seen = 0
        for problems, rate, n in sorted(groups, key=lambda g: (g[0], g[1]), reverse=True):
            seen += n
            if seen >= limit:
                return f"(problems > ? OR (problems = ? AND {self._RATE} >= ?))", [problems, problems, rate]
        return "TRUE", []  # (not reached: the counts add up to more than ``limit``)

    @staticmethod
    def _reasons(table: str) -> str:
        """The Reasons cell (``figures.failing``'s): the answer's reason codes, then ``uncited``
        when a sentence has no valid citation."""
        return (f"array_to_string(CASE WHEN {table}uncited > 0 THEN list_append({table}reasons, "
                f"'{report_figures.UNCITED}') ELSE {table}reasons END, ', ')")

    def failing_whole(self, filters: report_figures.Filters = report_figures.Filters(), limit: int | None = None) -> pd.DataFrame:
        """``failing`` in one query: every column of every matching answer ranked at once."""
        where, params = self._where(filters)
        columns = ", ".join(_q(c) for c in report_figures.TABLE_COLUMNS if c not in ("reasons",))
        query = (f"SELECT {columns}, {self._reasons('')} AS reasons, {self._RATE} AS failure_rate, "
                 f"source, \"offset\" FROM a JOIN logs USING (source) WHERE {where} ORDER BY {self._RANK}"
                 + (f" LIMIT {int(limit)}" if limit is not None else ""))
        return self.sql(query, params)

    def _where(self, filters: report_figures.Filters) -> tuple[str, list]:
        """The SQL condition on the view ``a`` for ``filters``, and its parameters."""
        where: list[str] = ["TRUE"]
        params: list[object] = []
        if filters.failing_only:
            where.append("failing")
        if filters.reason:
            if filters.reason not in report_figures.TABLE_REASONS:
                raise ValueError(f"unknown reason code {filters.reason!r}")
            where.append(f"{_q(filters.reason)} > 0")
        if filters.model:
            where.append("model = ?")
            params.append(filters.model)
        if filters.prompt_version:
            where.append("prompt_version = ?")
            params.append(filters.prompt_version)
        if filters.start:
            where.append("time >= ?::TIMESTAMP")
            params.append(str(pd.Timestamp(filters.start, tz="UTC").tz_localize(None)))
        if filters.end:
            where.append("time < ?::TIMESTAMP")
            params.append(str(pd.Timestamp(filters.end, tz="UTC").tz_localize(None) + pd.Timedelta(days=1)))
        if filters.refused is not None:
            where.append("refused = ?")
            params.append(filters.refused)
        if filters.human_not_supported is not None:
            where.append("(not_supported > 0) = ?")
            params.append(filters.human_not_supported)
        if filters.labelled is not None:
            where.append("(labelled > 0) = ?")
            params.append(filters.labelled)
        return " AND ".join(where), params


@dataclass(frozen=True)
class StoreOverview(Overview):
    """An Overview whose answers stay in the store: ``table`` has their number of rows and no column."""

    models: bool = False
    prompts: bool = False

    @property
    def has_models(self) -> bool:
        return self.models

    @property
    def has_prompts(self) -> bool:
        return self.prompts


def one_row(con: duckdb.DuckDBPyConnection, query: str, params: Sequence | None = None) -> tuple[Any, ...]:
    """The row of a query that always gives exactly one (an aggregate without GROUP BY, a setting):
    DuckDB types every fetch as possibly empty, these never are."""
    return cast(tuple[Any, ...], con.execute(query, params).fetchone())


def release_memory(con: duckdb.DuckDBPyConnection) -> None:
    """Give back the memory DuckDB's buffer manager keeps after a query for the next one.

    DuckDB keeps the blocks a finished query freed (hash tables, sorts, scan buffers) up to its
    memory limit, for reuse; nothing else frees them but a lower limit or closing the connection.
    A one-off query over a million answers (the review index, the item total) left 60-160 MB held
    that way.  Setting the limit to what DuckDB still uses (its tables) and back evicts them; the
    tables stay (the limit is never set below them)."""
    used = one_row(con, "SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()")[0]
    (limit,) = one_row(con, "SELECT current_setting('memory_limit')")
    con.execute(f"SET memory_limit = '{int(used) + 16 * 2**20}B'")
    con.execute(f"SET memory_limit = '{limit}'")


def read_line(file: str, offset: int) -> Line:
    """The log line that starts at ``offset`` (its end included), read by the rules of every reader
    (``storage.lines.line_at``); its number is not known here (0)."""
    with open(file, "rb") as handle:
        return Line(0, offset, line_at(handle, offset))


def answer_at(file: str, line: Line):
    """The answer a line read back holds, parsed as every reader parses it; None when it holds none
    (the caller checked its hash first, so this is a line a newer citecheck wrote, or none at all)."""
    record = answer_of(file, line)
    return None if record is None or type(record) is RecordError else record
