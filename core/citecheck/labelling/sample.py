"""Calibration samples: items drawn at random for labelling, with their inclusion probabilities.

An estimate from labels (docs/estimate.md) holds only when the labelled items are a random
sample of the population it speaks for.  ``draw`` picks ``size`` item keys uniformly, or within
strata (a judge verdict, a checker status) with proportional or Neyman allocation; every item
records the probability it had of being drawn, which ``estimate`` turns into a weight.

The sample file (version 1) is JSON lines: a header record, then one record per item in the
order the review queue offers them (random)::

    {"record": "sample", "sample_version": 1, "sample_id": ..., "seed": ..., "unit": "item|answer",
     "size": units drawn, "items": items listed,
     "stratify": "none|judge|status", "allocation": "uniform|proportional|neyman",
     "population": N, "strata": {"stratum": {"population": N_h, "size": n_h}}, "created": ...}
    {"record": "item", "item": "a-001#s0#c0", "stratum": "...", "inclusion_probability": 0.05}
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citecheck.errors import CitecheckError, FieldError, RecordError
from citecheck.storage.lines import append_records, expect, expect_object, expect_version, now, read_jsonl

SAMPLE_VERSION = 1
ALL = "all"  # the one stratum of an unstratified sample


class SampleError(CitecheckError, ValueError):
    """A sample that cannot be drawn or read as asked."""


@dataclass(frozen=True)
class Sample:
    sample_id: str
    seed: int
    stratify: str
    allocation: str
    population: int
    strata: Mapping[str, tuple[int, int]]  # stratum -> (population N_h, sample size n_h), in units
    items: tuple[str, ...]  # item keys, in queue order
    stratum_of: Mapping[str, str] = field(default_factory=dict)
    probability: Mapping[str, float] = field(default_factory=dict)  # inclusion probability per item
    created: str = ""
    unit: str = "item"  # what was drawn: items, or whole answers (all their items, one probability)

    def __contains__(self, key: object) -> bool:
        return key in self.probability

    def __len__(self) -> int:
        return len(self.items)


def allocate(sizes: Mapping[str, int], total: int, spread: Mapping[str, float] | None = None) -> dict[str, int]:
    """Sample sizes per stratum summing to ``total``: proportional to N_h, or (Neyman) to
    N_h * spread_h, by largest remainders; each non-empty stratum gets at least one item when
    ``total`` allows, and none more than it holds."""
    strata = [s for s in sorted(sizes) if sizes[s] > 0]
    total = min(total, sum(sizes[s] for s in strata))
    if not strata or total <= 0:
        return {s: 0 for s in sizes}
    share = {s: sizes[s] * (spread[s] if spread is not None else 1.0) for s in strata}
    if sum(share.values()) == 0:
        share = {s: float(sizes[s]) for s in strata}
    out = {s: 0 for s in sizes}
    left = total
    if total >= len(strata):
        for s in strata:
            out[s] = 1
        left -= len(strata)
    while left > 0:  # hand out what is left in proportion to the shares, capped by each stratum's size
        open_ = [s for s in strata if out[s] < sizes[s]]
        weight = sum(share[s] for s in open_) or len(open_)
        ideal = {s: left * (share[s] / weight if weight else 1 / len(open_)) for s in open_}
        given = 0
        for s in open_:
            k = min(int(math.floor(ideal[s])), sizes[s] - out[s])
            out[s] += k
            given += k
        if given == 0:  # only remainders: the largest goes first
            s = max(open_, key=lambda s: (ideal[s] - math.floor(ideal[s]), share[s], s))
            out[s] += 1
            given = 1
        left -= given
    return out


def sample_id(seed: int, keys: Sequence[str], stratify: str, size: int) -> str:
    h = hashlib.sha256(json.dumps([seed, stratify, size, sorted(keys)]).encode("utf-8")).hexdigest()[:10]
    return f"sample-{h}"


def draw(keys: Sequence[str], size: int, seed: int, strata: Mapping[str, str] | None = None,
         spread: Mapping[str, float] | None = None, stratify: str = "none",
         members: Mapping[str, Sequence[str]] | None = None) -> Sample:
    """Draw ``size`` of ``keys`` (the units) without replacement.  ``strata`` (key -> stratum)
    stratifies the draw; ``spread`` (stratum -> standard deviation of the label, from a previous
    estimate) turns proportional allocation into Neyman allocation.  With ``members`` (unit ->
    its item keys: an answer's citation items) whole units are drawn and the sample lists their
    items, each with its unit's inclusion probability."""
    keys = sorted(dict.fromkeys(keys))
    if size <= 0:
        raise SampleError(f"--size {size}: give a positive number of items to draw")
    if not keys:
        raise SampleError("there are no items to draw from: check the logs (and the verdicts, when stratifying)")
    if size > len(keys):
        raise SampleError(f"--size {size} is more than the {len(keys)} item(s) there are to draw from")
    groups: dict[str, list[str]] = {}
    for k in keys:
        groups.setdefault(strata.get(k, "unknown") if strata is not None else ALL, []).append(k)
    sizes = {s: len(g) for s, g in groups.items()}
    if strata is None:
        counts, allocation = {ALL: size}, "uniform"
    else:
        counts = allocate(sizes, size, spread)
        allocation = "neyman" if spread is not None else "proportional"
    rng = np.random.default_rng(seed)
    chosen: list[tuple[str, str]] = []  # (unit, its stratum)
    stratum_of: dict[str, str] = {}
    probability: dict[str, float] = {}
    for s in sorted(groups):
        g = groups[s]
        picked = [g[i] for i in rng.choice(len(g), size=counts[s], replace=False)] if counts[s] else []
        chosen.extend((k, s) for k in picked)
    order: list[str] = []
    for i in rng.permutation(len(chosen)):
        unit, s = chosen[i]
        for k in (members[unit] if members is not None else (unit,)):
            order.append(k)
            stratum_of[k] = s
            probability[k] = counts[s] / sizes[s]
    return Sample(sample_id(seed, keys, stratify, size), seed, stratify, allocation, len(keys),
                  {s: (sizes[s], counts[s]) for s in sorted(groups)}, tuple(order), stratum_of, probability, now(),
                  "answer" if members is not None else "item")


def write(path: str | Path, sample: Sample) -> None:
    """Write the sample as a new file (refuses to overwrite one: labels may refer to it)."""
    path = Path(path)
    if path.exists():
        raise SampleError(f"{path} exists; a sample is never overwritten (labels refer to it): choose another --out")
    header = {"record": "sample", "sample_version": SAMPLE_VERSION, "sample_id": sample.sample_id,
              "seed": sample.seed, "unit": sample.unit, "size": sum(k for _, k in sample.strata.values()),
              "items": len(sample), "stratify": sample.stratify,
              "allocation": sample.allocation, "population": sample.population,
              "strata": {s: {"population": n, "size": k} for s, (n, k) in sample.strata.items()},
              "created": sample.created}
    rows = [{"record": "item", "item": k, "stratum": sample.stratum_of[k],
             "inclusion_probability": round(sample.probability[k], 12)} for k in sample.items]
    append_records(path, [header, *rows])


def _record(value) -> dict:
    obj = expect_object(value)
    if obj.get("record") == "sample":
        expect_version(obj, "sample_version", SAMPLE_VERSION)
        expect(obj, "sample_id", str)
        return obj
    expect(obj, "item", str)
    p = expect(obj, "inclusion_probability", float)
    if not 0 < p <= 1:
        raise FieldError("inclusion_probability", f"{p!r} is not in (0, 1]")
    return obj


MAX_LISTED = 10  # bad lines named in the message; the rest are counted


def read(path: str | Path) -> Sample:
    """Read a sample file.  Any bad line raises ``SampleError`` naming the bad lines with their
    field (the first MAX_LISTED; the rest counted): a sample missing a line would no longer be the
    random sample it claims to be.  A file with no sample header is not a sample file, said once."""
    header: dict | None = None
    items: list[str] = []
    stratum_of: dict[str, str] = {}
    probability: dict[str, float] = {}
    errors: list[RecordError] = []
    for n, obj in read_jsonl(path, _record):
        if isinstance(obj, RecordError):
            errors.append(obj)
        elif obj.get("record") == "sample":
            if header is not None or items:
                errors.append(RecordError(str(path), n, "record", "a second sample header: one sample per file"))
            header = obj
        elif header is None:
            errors.append(RecordError(str(path), n, "record", "an item before the sample header"))
        else:
            items.append(obj["item"])
            stratum_of[obj["item"]] = str(obj.get("stratum", ALL))
            probability[obj["item"]] = float(obj["inclusion_probability"])
    if header is None:  # another kind of file (a labels file given as the sample): one message, not a line each
        first = f" (first bad line {errors[0]})" if errors else ""
        raise SampleError(f"{path}: not a sample file: no line is a sample header{first}; give the file "
                          "citecheck sample wrote, or draw a sample with citecheck sample")
    if errors:
        listed = "; ".join(map(str, errors[:MAX_LISTED]))
        more = f"; and {len(errors) - MAX_LISTED:,} more bad line(s)" if len(errors) > MAX_LISTED else ""
        raise SampleError(listed + more + " (draw the sample again with citecheck sample)")
    strata = {s: (int(v["population"]), int(v["size"])) for s, v in header.get("strata", {}).items()}
    return Sample(header["sample_id"], int(header.get("seed", 0)), header.get("stratify", "none"),
                  header.get("allocation", "uniform"), int(header.get("population", 0)), strata,
                  tuple(items), stratum_of, probability, header.get("created", ""), header.get("unit", "item"))


def find(folders) -> list[Path]:
    """The sample files (``*.jsonl`` whose first line is a sample header) directly in ``folders``,
    by name: the page offers these, so the browser never names a path."""
    found = []
    for folder in folders:
        for path in sorted(Path(folder).glob("*.jsonl")):
            try:
                with open(path, "rb") as handle:
                    first = handle.readline(4096)
                obj = json.loads(first)
            except (OSError, ValueError):
                continue
            if isinstance(obj, dict) and obj.get("record") == "sample" and "sample_version" in obj:
                found.append(path)
    return list(dict.fromkeys(found))
