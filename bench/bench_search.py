#!/usr/bin/env python3
"""Benchmark searching the review queue of a checked store (issue #34: every search under 1 s at
1,000,000 answers with 20 reviewers' labels).

    python bench/bench_search.py [--answers 1000000] [--base 50000] [--repeat 5] [--rounds 3]
    python bench/bench_search.py --build [--base 50000]

Writes a log of ``--base`` answers (bench/out/search-log-N.jsonl; kept and reused) drawn from a
corpus of 5,000 chunks (200 documents of 25; each answer retrieves 5, so chunks recur as in a
real RAG log) with a vocabulary of 30 common words and 20,000 rarer ones (Zipf-like), questions
from templates, and four cited sentences; every 5,000th question holds the word "zyzzyva".  It is
checked into a store (bench/out/search-store-N, reused) and the store's search index is built
(timed: the one-off cost a first search on a store pays, per answer).

``--build`` times only building the index, against checking the same log: a plain ``citecheck
check LOG`` (its report thrown away), ``check LOG --store`` into a new folder, then ``citecheck store
index`` of that store, each once in this process; it prints each time, its time per answer and the
index's time as a ratio to the plain check's.

Then for ``--answers / 10`` and ``--answers`` answers, a store of copies of that store and its index
(each copy under another log id, its answer ids suffixed ``~k`` so they stay distinct; nothing is
checked or indexed again, as bench_app_store.py makes its million) is opened as the review page
opens it (``StoreAnswers``) and each typical search is timed: a rare word, a common word, a phrase
of two words and one of three, two words, a filter combination (model, status, text), and the
label filters over 100,000 labels by 20 reviewers (a label and a reviewer; "nobody's label yet",
alone, one label more each time as after each label on the review page, and with a status and a
word; "not labelled by r3"), and nothing asked (every answer).

The target (issue #34): each search's first run on a store opened afresh under 1 s at 1,000,000
answers.  Each round opens each store afresh (so the labelled items are placed again) and times
each search's first run and the median of ``--repeat`` more; ``--rounds`` rounds alternate the two
sizes and the best of each figure is kept (other benchmarks share the machine: the load average is
printed before, during and after), with the CPU time of the first run (all of this process's
threads: on an idle machine of two cores the clock time is at most about that).  Printed beside each figure: its ratio to "nothing asked" timed
in the same round (the floor of any search: marking every answer and keeping the result), the
ratio of the two sizes (how search scales), and the slowest first run at the larger size against
the target.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "core"))

import pyarrow.parquet as pq  # noqa: E402
from citecheck.contract.log import checksum  # noqa: E402

OUT = ROOT / "bench" / "out"
COMMON = ("refund invoice policy travel leave days employee manager approval booking hotel limit incident "
          "runbook credential rotate customer notice report export plan dashboard data retention month year "
          "business payment method original").split()
MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")


def vocabulary(rng: random.Random, n: int = 20_000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ra", "te", "vo", "sa", "ni", "pu", "de", "zo", "fi", "gu", "ha", "be", "ri"]
    out: dict[str, None] = {}
    while len(out) < n:
        out["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(out)


def corpus(rng: random.Random, rare: list[str]) -> list[dict]:
    cum = list(itertools.accumulate(1 / (k + 1) for k in range(len(rare))))
    chunks = []
    for d in range(200):
        for c in range(25):
            sentences = []
            while sum(len(s) + 1 for s in sentences) < 600:
                words = [rng.choice(COMMON) if rng.random() < 0.6 else rng.choices(rare, cum_weights=cum)[0]
                         for _ in range(rng.randint(8, 14))]
                words[rng.randrange(len(words))] = str(rng.randint(1, 90))
                sentences.append(" ".join(words).capitalize() + ".")
            text = " ".join(sentences)
            chunks.append({"chunk_id": f"doc{d}-{c}", "document_id": f"doc{d}", "source": f"doc{d}.md",
                           "title": f"Document {d}", "section": "Body", "text": text, "start": 0, "end": len(text),
                           "checksum": checksum(text)})
    return chunks


def answer(i: int, rng: random.Random, chunks: list[dict]) -> dict:
    got = rng.sample(chunks, 5)
    parts, citations, pos = [], [], 0
    for s in range(4):
        n = rng.randrange(5)
        src = got[n]["text"]
        start = rng.randrange(max(1, len(src) - 60))
        quote = src[start:start + 40]
        text = f"The policy says {quote.strip()} "
        citations.append({"kind": "marker", "marker": n + 1, "at": pos + len(text), "quote": quote,
                          "quote_start": start, "quote_end": start + 40})
        text += f"[{n + 1}]."
        parts.append(text)
        pos += len(text) + 1
    if i % 10 == 0:
        citations[0]["quote"] = "an invented quotation that is nowhere"
    topic = " ".join(rng.sample(COMMON, 3))
    question = f"What does the {topic} rule say{' about zyzzyva' if i % 5000 == 0 else ''}?"
    return {"log_version": 1, "answer_id": f"q-{i}", "timestamp": f"2026-{9 + i % 3:02d}-{1 + i % 28:02d}T00:00:00Z",
            "model": MODELS[i % 3], "prompt_version": "answer.v1", "question": question, "refused": False,
            "chunks": got, "answer": " ".join(parts), "citations": citations}


def generate(path: Path, n: int) -> None:
    rng = random.Random(20261206)
    chunks = corpus(rng, vocabulary(rng))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps(answer(i, rng, chunks)) + "\n")


def base_store(n: int) -> Path:
    from citecheck.cli.main import main
    from citecheck.storage.checked import search_index
    from citecheck.storage.checked.folder import Store

    log, store = OUT / f"search-log-{n}.jsonl", OUT / f"search-store-{n}"
    if not log.is_file():
        start = time.perf_counter()
        generate(log, n)
        print(f"wrote {log} ({n:,} answers) in {time.perf_counter() - start:.0f} s")
    if not (store / "store.json").is_file():
        shutil.rmtree(store, ignore_errors=True)
        start = time.perf_counter()
        assert main(["check", str(log), "--store", str(store)], io.StringIO(), io.StringIO()) in (0, 1)
        print(f"checked it into {store} in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    made = search_index.ensure(Store(store))
    if made:
        took = time.perf_counter() - start
        print(f"search index of {n:,} answers built in {took:.1f} s ({took / n * 1e6:.0f} µs an answer; "
              f"{_size(store / search_index.FOLDER) / 2**20:.0f} MB)")
    return store


class _Null(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def build_timing(n: int) -> None:
    """The index's build time against checking the same log (plain, and into a store), one run each."""
    from citecheck.cli.main import main
    from citecheck.storage.checked import search_index  # noqa: F401  (imported before the clock starts)

    log = OUT / f"search-log-{n}.jsonl"
    if not log.is_file():
        generate(log, n)
    work = OUT / f"search-build-{n}"
    shutil.rmtree(work, ignore_errors=True)
    took = {}
    for name, argv in (("check LOG (plain)", ["check", str(log)]),
                       ("check LOG --store DIR", ["check", str(log), "--store", str(work)]),
                       ("store index DIR", ["store", "index", str(work)])):
        start, cpu = time.perf_counter(), time.process_time()
        code = main(argv, _Null(), _Null())
        took[name] = (time.perf_counter() - start, time.process_time() - cpu)
        assert code in (0, 1), f"{argv}: exit {code}"
    plain, plain_cpu = took["check LOG (plain)"]
    for name, (secs, cpu) in took.items():
        print(f"  {name:24} {secs:7.1f} s  {secs / n * 1e6:6.0f} µs an answer  x{secs / plain:.2f} the plain check;"
              f"  CPU {cpu:7.1f} s  x{cpu / plain_cpu:.2f}")
    print(f"  index: {_size(work / search_index.FOLDER) / 2**20:.0f} MB")
    shutil.rmtree(work, ignore_errors=True)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def copies(base: Path, k: int) -> Path:
    """A store of ``k`` copies of ``base`` and of its search index (kept under bench/out)."""
    import duckdb
    from citecheck.storage.checked import schema, search_index
    from citecheck.storage.checked.folder import Store

    out = OUT / f"search-copies-{base.name}-{k}"
    if (out / "store.json").is_file():
        recompress(out)
        return out
    store = Store(base)
    (entry,) = store.logs
    shutil.rmtree(out, ignore_errors=True)
    con = duckdb.connect()
    logs = []
    index = search_index.log_folder(base / search_index.FOLDER, entry["source"])
    for i in range(k):
        source = f"{i:016x}"
        suffix = f"'~{i}'" if i else "''"
        for table in schema.TABLES:
            target = out / table / f"log-{source}" / "part-000001.parquet"
            target.parent.mkdir(parents=True)
            ids = ", answer_id || " + suffix + " AS answer_id" if table != "errors" else ""
            con.execute(f"COPY (SELECT * REPLACE ('{source}' AS source{ids}) FROM read_parquet("
                        f"[{', '.join(repr(str(f)) for f in store.files(table))}])) TO '{target}' "
                        "(FORMAT parquet, COMPRESSION zstd)")
        new = {**entry, "source": source, "parts": ["part-000001"], "digests": {}}
        logs.append(new)
        folder = search_index.log_folder(out / search_index.FOLDER, source)
        folder.mkdir(parents=True)
        for name, order in search_index.ORDER.items():
            ids = ", answer_id || " + suffix + " AS answer_id" if name == "items" else ""
            con.execute(f"COPY (SELECT * REPLACE ('{source}' AS source{ids}) FROM read_parquet('{index / name}.parquet') "
                        f"ORDER BY {order}) TO '{folder / name}.parquet' (FORMAT parquet, "
                        f"COMPRESSION {search_index.compression(name)}, "
                        f"ROW_GROUP_SIZE {search_index.ROW_GROUP})")
        (folder / search_index.STAMP).write_text(json.dumps({"stamp": search_index.stamp(new)}))
    (out / "store.json").write_text(json.dumps({"store_version": store.version, "next_part": 2, "logs": logs}))  # (the
    # parts' line hashes are the base's: a version 1 base kept from an earlier run makes a version 1 store)
    return out


def _label(n: int, key: str, who: str):
    from citecheck.labelling.labels import Label

    return Label(2, key, key.rsplit("#", 2)[0], 0, 0, None, "", ("supported", "partial")[n % 2],
                 "checked the invoice" if n % 50 == 0 else "", who, "", "")


def recompress(store: Path) -> None:
    """Bring the index tables of a store of copies kept from an earlier run to the compression the
    index is written with now (``search_index.COMPRESSION``): each file is written anew beside it
    and renamed over it, rows and order unchanged, so a reader sees the old file or the new one."""
    import duckdb
    from citecheck.storage.checked import search_index

    con = duckdb.connect()
    for folder in sorted((store / search_index.FOLDER).glob("log-*")):
        for name in search_index.ORDER:
            path = folder / f"{name}.parquet"
            want = search_index.compression(name).upper()
            meta = pq.ParquetFile(path).metadata
            if meta.num_row_groups and all(meta.row_group(0).column(c).compression.startswith(want)
                                           for c in range(meta.num_columns)):
                continue
            work = folder / f".{name}.parquet"
            con.execute(f"COPY (SELECT * FROM read_parquet('{path}')) TO '{work}' (FORMAT parquet, COMPRESSION "
                        f"{search_index.compression(name)}, ROW_GROUP_SIZE {search_index.ROW_GROUP})")
            os.replace(work, path)


def timings(folder: Path, repeat: int) -> dict[str, tuple[float, float, float, str]]:
    """Each search on a store opened afresh: (its first run, the median of ``repeat`` more, the CPU
    time of its first run in this process's threads, its summary).
    A first run places the labelled items (``StoreSearch._placed``); "a label added" searches again
    with one more label each time, as the review page does after each label."""
    from citecheck.review.search import Facts, Search
    from citecheck.storage.checked import search_index
    from citecheck.storage.checked.answers import StoreAnswers

    start, cpu = time.perf_counter(), time.process_time()
    data = StoreAnswers(folder)
    opened, opened_cpu = time.perf_counter() - start, time.process_time() - cpu
    searcher = search_index.StoreSearch(data)
    start, cpu = time.perf_counter(), time.process_time()
    searcher.prepare()
    prepared, prepared_cpu = time.perf_counter() - start, time.process_time() - cpu
    keys = [r[0] for r in data.rows("SELECT answer_id || '#s' || sentence || '#c' || citation FROM s_items "
                                    "WHERE citation IS NOT NULL USING SAMPLE 100000 ROWS (reservoir, 7)")]
    labels = {(k, f"r{n % 20}"): _label(n, k, f"r{n % 20}") for n, k in enumerate(keys)}
    facts = Facts(labels=labels)
    more = [r[0] for r in data.rows("SELECT answer_id || '#s' || sentence || '#c' || citation FROM s_items "
                                    f"WHERE citation IS NOT NULL USING SAMPLE {repeat + 1} ROWS (reservoir, 11)")]
    added, grown = [], dict(labels)
    for n, k in enumerate(more):  # (a label more each time: the review page searching again after a label)
        grown[(k, "r3")] = _label(n, k, "r3")
        added.append(Facts(labels=dict(grown)))
    cases = {
        "rare word (zyzzyva)": (Search(text="zyzzyva"), [facts]),
        "common word (policy)": (Search(text="policy"), [facts]),
        'phrase ("leave days")': (Search(text='"leave days"'), [facts]),
        'phrase of three ("the policy says")': (Search(text='"the policy says"'), [facts]),
        "two words (invoice hotel)": (Search(text="invoice hotel"), [facts]),
        "model + failed + word": (Search(text="refund", model=MODELS[1], status="failed"), [facts]),
        "label partial by r3": (Search(label="partial", reviewer="r3"), [facts]),
        "nobody's label yet": (Search(label="none"), [facts]),
        "nobody's label yet, a label added": (Search(label="none"), added),
        "not labelled by r3": (Search(label="none", reviewer="r3"), [facts]),
        "nobody's label yet + failed + word": (Search(text="invoice", label="none", status="failed"), [facts]),
        "nothing asked": (Search(), [facts]),
    }
    out = {"(opening the store)": (opened, opened, opened_cpu, ""),
           "(first search: the index's views)": (prepared, prepared, prepared_cpu, "")}
    for name, (search, given) in cases.items():
        took, cpu = [], 0.0
        for n in range(repeat + 1):
            start, started = time.perf_counter(), time.process_time()
            found = searcher.search(search, given[n % len(given)])
            took.append(time.perf_counter() - start)
            cpu = cpu or time.process_time() - started
        out[name] = (took[0], statistics.median(took[1:]), cpu, found.summary)
    return out


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--base", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating the two sizes; the best of each is kept")
    parser.add_argument("--build", action="store_true", help="time only building the index (against checking)")
    args = parser.parse_args()
    if args.build:
        build_timing(args.base)
        return
    base = base_store(args.base)
    sizes = sorted({max(1, args.answers // 10 // args.base), max(1, args.answers // args.base)})
    folders = {}
    for k in sizes:
        start = time.perf_counter()
        folders[k] = copies(base, k)
        print(f"store of {k * args.base:,} answers ({k} copies) ready in {time.perf_counter() - start:.0f} s")
    print(f"before: {load()}")
    best: dict[int, dict[str, tuple[float, float, float, str]]] = {}
    for r in range(args.rounds):
        for k in sizes if r % 2 == 0 else sizes[::-1]:
            got = timings(folders[k], args.repeat)
            kept = best.setdefault(k, got)
            for name, (first, then, cpu, summary) in got.items():
                assert summary == kept[name][3], f"{name}: {summary} in one round, {kept[name][3]} in another"
                kept[name] = (min(first, kept[name][0]), min(then, kept[name][1]), min(cpu, kept[name][2]), summary)
            print(f"  round {r + 1}, {k * args.base:,} answers done ({load()})")
    print(f"after: {load()}")
    for k in sizes:
        floor = best[k]["nothing asked"][1]
        print(f"{k * args.base:,} answers (best of {args.rounds} rounds; first run, then the median of {args.repeat} "
              "more; x: against nothing asked, timed in the same run; CPU: the first run's, all threads):")
        for name, (first, then, cpu, summary) in best[k].items():
            print(f"  {name:38} {first * 1000:7.0f} ms {then * 1000:7.0f} ms  x{then / max(floor, 1e-9):5.1f}  "
                  f"CPU {cpu * 1000:6.0f} ms  {summary}")
    if len(sizes) == 2:
        small, big = (best[k] for k in sizes)
        print(f"ratio {sizes[1] * args.base:,} / {sizes[0] * args.base:,} answers (x{sizes[1] // sizes[0]}), first run "
              "and then:")
        for name in small:
            print(f"  {name:38} x{big[name][0] / max(small[name][0], 1e-9):5.1f}  x{big[name][1] / max(small[name][1], 1e-9):5.1f}")
        slowest = max((v[0], n) for n, v in big.items() if not n.startswith("("))
        costliest = max((v[2], n) for n, v in big.items() if not n.startswith("("))
        print(f"slowest search at {sizes[1] * args.base:,} answers: {slowest[1]} in {slowest[0] * 1000:.0f} ms "
              f"(its first run; target under 1 s: {'met' if slowest[0] < 1 else 'NOT met'}); the most CPU: "
              f"{costliest[1]}, {costliest[0] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
