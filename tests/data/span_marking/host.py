"""A page hosting the span marker alone, for bench/bench_span_marking.py (the browser tests use the
review page itself): ``streamlit run host.py -- LOG LABELS REVIEWER``.  Every item the reviewer labelled
gets its marker, as pages/_review_items.py would draw it under the item's label buttons."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st
from citecheck.labelling import dataset, labels
from citecheck.review.html import STYLE, heading_html

from pages import _span_marking

log, target, reviewer = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
st.html(STYLE)
data = dataset.load([log])
current = labels.latest(labels.read(target)[0])
for result, items in zip(data.results, data.items_by_answer):
    for item in items:
        if (label := current.get((item.key, reviewer))) is not None:
            st.html(heading_html(f"Item {item.key}: {label.label}", 4))
            _span_marking.span_marking(st, result, item, label, target)
