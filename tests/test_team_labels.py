"""Undo, adjudication, consensus, agreement and guidelines on the labels store: every behaviour on
both stores (the ``store`` fixture: a JSON-lines file, then PostgreSQL)."""

import io
import json
from dataclasses import asdict

import krippendorff
import numpy as np
import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.judging import calibration
from citecheck.judging import verdicts as verdict_store
from citecheck.labelling import agreement, consensus, dataset, guidelines, history
from citecheck.labelling import events as label_events
from citecheck.labelling import labels as label_store
from citecheck.labelling.items import items_of
from citecheck.storage import streams as event_store
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG, load_settings
from hypothesis import example, given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score


@pytest.fixture(scope="module")
def data():
    return dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))


def raw(target) -> list[dict]:
    return event_store.read_all(target, label_store.STREAM, lambda value: value)[0]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def at(n: int) -> str:
    return f"2026-12-03T10:00:{n:02d}.000Z"


# --- undo: a retraction is appended, never a deletion -------------------------------------------------


def test_undo_appends_a_retraction_and_gives_back_the_label_before(store, data):
    first, second = items_of(data.get("a-001"))[:2]
    label_store.append(store, label_store.make_label(first, "partial", "ana", at=at(1)))
    label_store.append(store, label_store.make_label(first, "supported", "ana", note="changed my mind", at=at(2)))
    label_store.append(store, label_store.make_label(second, "not_supported", "ben", at=at(3)))
    before = raw(store)

    counted, errors = label_store.read(store)
    withdrawn = label_store.retract_last(store, counted, "ana")
    assert withdrawn.label == "supported" and errors == []
    after = raw(store)
    assert after[:3] == before  # nothing rewritten
    assert {k: after[3][k] for k in ("labels_version", "event", "item", "reviewer", "retracts", "label")} == {
        "labels_version": 2, "event": "retraction", "item": first.key, "reviewer": "ana", "retracts": at(2),
        "label": "supported"}

    labels, errors = label_store.read(store)
    assert errors == [] and [lab.label for lab in labels] == ["partial", "not_supported"]
    assert label_store.latest(labels)[(first.key, "ana")].label == "partial"  # the label before it counts again
    said = label_store.withdrawn_message(withdrawn, counted)  # what the page says of it
    assert said.startswith("Withdrew your \u201cSupported\u201d for sentence 1 of a-001")
    assert "your earlier \u201cPartially supported\u201d for it counts again" in said

    withdrawn = label_store.retract_last(store, labels, "ana")
    assert withdrawn.label == "partial"  # a second undo walks back further
    said = label_store.withdrawn_message(withdrawn, labels)
    labels, _ = label_store.read(store)
    assert (first.key, "ana") not in label_store.latest(labels)
    assert "you have no other label on it, so it is yours to label again" in said and "earlier" not in said
    assert label_store.progress(items_of(data.get("a-001")), label_store.latest(labels), "ana").labelled == 0
    assert label_store.retract_last(store, labels, "ana") is None  # nothing left to withdraw: nothing written
    assert len(raw(store)) == 5
    assert [type(e).__name__ for e in label_store.read_events(store)[0]] == ["Label"] * 3 + ["Retraction"] * 2
    events = label_store.read_events(store)[0]
    assert label_store.latest(events) == label_store.latest(label_store.effective(events)) == label_store.latest(labels)  # the stream itself: the same


def test_only_the_reviewer_can_withdraw_their_label(data):
    item = items_of(data.get("a-001"))[0]
    label = label_store.make_label(item, "partial", "ana")
    with pytest.raises(label_events.EventError, match="only ana"):
        label_events.make_retraction(label, "ben")


def test_history_shows_who_what_when_and_what_was_withdrawn(store, data):
    item = items_of(data.get("a-001"))[0]
    label_store.append(store, label_store.make_label(item, "partial", "ana", at=at(1)))
    label_store.append(store, label_store.make_label(item, "supported", "ben", note="<b>sure</b>", at=at(2)))
    label_store.retract_last(store, label_store.read(store)[0], "ana")
    events, _ = label_store.read_events(store)
    entries = history.by_item(events)[item.key]
    assert [(e.who, e.what, e.label, bool(e.retracted_at)) for e in entries] == [
        ("ana", "label", "partial", True), ("ben", "label", "supported", False), ("ana", "retraction", "partial", False)]
    html = history.history_html(entries)
    assert "&lt;b&gt;sure&lt;/b&gt;" in html and "<b>sure" not in html
    assert f"label, withdrawn {entries[2].at}" in html
    mine = history.visible(entries, "ana")  # blind mode: only her own entries
    assert [e.who for e in mine] == ["ana", "ana"]
    assert "1 entry by others hidden" in history.history_html(mine, hidden=len(entries) - len(mine))


# --- adjudication ------------------------------------------------------------------------------------


def test_an_adjudication_is_an_event_that_calibration_prefers(store, data):
    item = [i for i in items_of(data.get("a-001")) if i.citation is not None][0]
    label_store.append(store, label_store.make_label(item, "supported", "ana", at=at(1)))
    label_store.append(store, label_store.make_label(item, "not_supported", "ben", at=at(2)))
    labels, _ = label_store.read(store)
    assert calibration.human_labels(labels, None, adjudicated={}, overlap=2) == {}  # one each way: no majority
    label_store.append_event(store, label_events.make_adjudication(item, "partial", "lead", labels, note="both half right",
                                              guidelines="sha256:abc", at=at(3)))
    record = raw(store)[-1]
    assert record["event"] == "adjudication" and record["labels_version"] == 2 and record["adjudicator"] == "lead"
    assert record["resolves"] == [{"reviewer": "ana", "label": "supported", "at": at(1)},
                                  {"reviewer": "ben", "label": "not_supported", "at": at(2)}]
    events, errors = label_store.read_events(store)
    adjudicated = label_store.adjudications(events)
    assert errors == [] and adjudicated[item.key].label == "partial" and adjudicated[item.key].guidelines == "sha256:abc"
    labels = label_store.effective(events)
    assert len(labels) == 2  # the reviewers' labels stay, side by side with the adjudication
    assert calibration.human_labels(labels, None, adjudicated=adjudicated, overlap=2) == {item.key: "partial"}
    fingerprints = {item.key: "sha256:changed"}  # an adjudication of an older version of the item is stale
    assert calibration.human_labels(labels, fingerprints, adjudicated=adjudicated, overlap=2) == {}

    verdict_store.append(store if event_store.is_database(store) else store.with_name("v.jsonl"),
             [verdict_store.make(item.key, "partial", "", "j", "v1", "h", item.fingerprint)])
    verdicts = verdict_store.read(store if event_store.is_database(store) else store.with_name("v.jsonl"))[0]
    report = calibration.calibrate(labels, verdicts, "j", "v1", adjudicated=adjudicated, overlap=2, draws=50)
    assert report.to_dict()["human_label_rules"] == {"adjudicated": 1, "majority": 0, "single": 0,
                                                     "no_majority": 0, "incomplete": 0}
    assert report.to_dict()["guidelines_versions"] == {"unknown": 2}
    assert "1 adjudicated, 0 by majority" in report.to_text()


def test_bad_events_are_skipped_with_their_field(store, data):
    item = items_of(data.get("a-001"))[0]
    good = label_events.make_adjudication(item, "partial", "lead", [label_store.make_label(item, "supported", "ana")]).to_record()
    event_store.append(store, label_store.STREAM, [
        {**good, "event": "merge"}, {**good, "resolves": [{"reviewer": "ana", "label": "maybe", "at": "x"}]},
        {**good, "adjudicator": " "}, {**good, "label": "needs_citation"},
        {"labels_version": 2, "event": "retraction", "item": item.key, "reviewer": "ana", "label": "partial"},
        {"labels_version": 3, "event": "retraction"}, good])
    events, errors = label_store.read_events(store)
    assert [(e.line, e.field) for e in errors] == [(1, "event"), (2, "resolves[0].label"), (3, "adjudicator"),
                                                   (4, "label"), (5, "retracts"), (6, "labels_version")]
    assert len(events) == 1 and "upgrade citecheck" in errors[-1].message


def test_a_label_records_the_guidelines_version_and_old_labels_still_read(store, data):
    item = items_of(data.get("a-001"))[0]
    old = asdict(label_store.make_label(item, "partial", "ana", at=at(1)))
    del old["sample"], old["guidelines"]  # as citecheck wrote labels before either field
    event_store.append(store, label_store.STREAM, [old])
    label_store.append(store, label_store.make_label(item, "supported", "ben", guidelines=guidelines.load().version, at=at(2)))
    labels, errors = label_store.read(store)
    assert errors == [] and [lab.guidelines for lab in labels] == ["", guidelines.load().version]
    assert "guidelines" not in raw(store)[0] and raw(store)[1]["guidelines"].startswith("sha256:")


def test_labels_copy_carries_the_events_both_ways(pg_url, tmp_path, data):
    item = items_of(data.get("a-001"))[0]
    src = tmp_path / "labels.jsonl"
    label_store.append(src, label_store.make_label(item, "partial", "ana", at=at(1)))
    label_store.append(src, label_store.make_label(item, "supported", "ben", at=at(2)))
    label_store.retract_last(src, label_store.read(src)[0], "ana")
    label_store.append_event(src, label_events.make_adjudication(item, "supported", "lead", label_store.read(src)[0]))
    assert run("labels", "copy", src, pg_url)[0] == 0
    back = tmp_path / "back.jsonl"
    assert run("labels", "copy", pg_url, back)[0] == 0
    assert raw(back) == raw(src) == raw(pg_url)
    assert label_store.read(back)[0] == label_store.read(src)[0] and label_store.adjudications(label_store.read_events(pg_url)[0])[item.key].label == "supported"


# --- consensus: adjudicated, else majority of at least K, else single ---------------------------------


def lab(item, value, reviewer, n=1, fingerprint="fp"):
    return label_store.Label(1, item, item.split("#")[0], 0, 0, "c", fingerprint, value, "", reviewer, at(n), "t")


@pytest.mark.parametrize("given, overlap, expected", [
    ([("supported", "ana")], 1, ("supported", "single")),
    ([("supported", "ana")], 2, ("supported", "single")),
    ([("supported", "ana"), ("supported", "ben")], 2, ("supported", "majority")),
    ([("supported", "ana"), ("partial", "ben")], 2, (None, "no_majority")),
    ([("supported", "ana"), ("partial", "ben")], 1, (None, "no_majority")),
    ([("supported", "ana"), ("partial", "ben"), ("partial", "cy")], 3, ("partial", "majority")),
    ([("supported", "ana"), ("partial", "ben"), ("cant_tell", "cy")], 3, (None, "no_majority")),
    ([("supported", "ana"), ("supported", "ben")], 3, (None, "incomplete")),
    ([("partial", "ana"), ("supported", "ana")], 2, ("supported", "single")),  # one reviewer counts once
])
def test_consensus_rules(given, overlap, expected):
    labels = [lab("x#s0#c0", value, who, n) for n, (value, who) in enumerate(given)]
    r = consensus.resolve(labels, {}, overlap)["x#s0#c0"]
    assert (r.label, r.rule) == expected
    assert sum(consensus.rule_counts([r]).values()) == 1


def test_labels_export_gives_each_items_rule_and_counts_them(store, data, tmp_path):
    cited = [i for i in data.all_items if i.citation is not None][:4]
    label_store.append(store, label_store.make_label(cited[0], "supported", "ana", at=at(1)))
    label_store.append(store, label_store.make_label(cited[0], "supported", "ben", at=at(2)))
    label_store.append(store, label_store.make_label(cited[1], "supported", "ana", at=at(3)))
    label_store.append(store, label_store.make_label(cited[1], "partial", "ben", at=at(4)))
    label_store.append(store, label_store.make_label(cited[2], "partial", "ana", at=at(5)))
    label_store.append(store, label_store.make_label(cited[3], "partial", "ana", at=at(6)))
    label_store.append(store, label_store.make_label(cited[3], "not_supported", "ben", at=at(7)))
    label_store.append_event(store, label_events.make_adjudication(cited[3], "not_supported", "lead", label_store.read(store)[0]))
    code, out, err = run("labels", "export", store, "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--overlap", 2)
    rows = {r["item"]: r for r in map(json.loads, out.splitlines())}
    assert code == 0
    assert [(rows[i.key]["human_label"], rows[i.key]["human_label_rule"]) for i in cited] == [
        ("supported", "majority"), (None, "no_majority"), ("partial", "single"), ("not_supported", "adjudicated")]
    assert rows[cited[3].key]["adjudication"]["adjudicator"] == "lead"
    assert "1 adjudicated, 1 by majority, 1 single label; left out: 1 with no majority" in err
    code, out, _ = run("labels", "export", store, "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--format", "csv")
    header = out.splitlines()[0].split(",")
    assert {"human_label", "human_label_rule", "adjudication", "adjudicated_by", "label:ana"} <= set(header)


def test_calibrate_command_ignores_a_retracted_label_and_reports_the_rules(store, data, tmp_path):
    item = [i for i in data.all_items if i.citation is not None][0]
    verdicts = store if event_store.is_database(store) else tmp_path / "verdicts.jsonl"
    verdict_store.append(verdicts, [verdict_store.make(item.key, "supported", "", "j", "v1", "h", item.fingerprint)])
    label_store.append(store, label_store.make_label(item, "supported", "ana", at=at(1)))
    label_store.append(store, label_store.make_label(item, "not_supported", "ana", at=at(2)))  # a slip ...
    label_store.retract_last(store, label_store.read(store)[0], "ana")  # ... undone
    code, out, _ = run("calibrate", "--labels", store, "--verdicts", verdicts, "--format", "json",
                       "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--overlap", 2)
    report = json.loads(out)
    assert code == 0 and report["items"] == 1 and report["confusion"][0][0] == 1  # supported / supported
    assert report["human_label_rules"]["single"] == 1
    with pytest.raises(SystemExit):  # argparse refuses it, saying why
        run("calibrate", "--labels", store, "--verdicts", verdicts, "--overlap", "0")


# --- agreement ----------------------------------------------------------------------------------------


def test_cohen_kappa_published_example_and_sklearn():
    # Cohen's kappa's textbook example (Wikipedia, "Cohen's kappa"): 50 proposals, 20 yes/yes,
    # 15 no/no, 5 yes/no, 10 no/yes: p_o = 0.7, p_e = 0.5, kappa = 0.4
    a = ["yes"] * 20 + ["no"] * 15 + ["yes"] * 5 + ["no"] * 10
    b = ["yes"] * 20 + ["no"] * 15 + ["no"] * 5 + ["yes"] * 10
    assert agreement.cohen_kappa(a, b) == pytest.approx(0.4)
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = list(rng.choice(["s", "p", "n", "c"], 40))
        y = [v if rng.random() < 0.6 else rng.choice(["s", "p", "n", "c"]) for v in x]
        assert agreement.cohen_kappa(x, y) == pytest.approx(cohen_kappa_score(x, y))
    assert agreement.cohen_kappa(["s", "s"], ["s", "s"]) is None and agreement.cohen_kappa([], []) is None


def test_krippendorff_alpha_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
    # values 1-5 with missing data; nominal alpha = 0.743
    rows = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    units = [[r[u] - 1 for r in rows if r[u] is not None] for u in range(12)]
    assert agreement.krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)
    matrix = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
    assert agreement.krippendorff_alpha(units) == pytest.approx(krippendorff.alpha(reliability_data=matrix,
                                                                           level_of_measurement="nominal"))


@given(st.lists(st.dictionaries(st.sampled_from(["ana", "ben", "cy"]),
                                st.sampled_from(["supported", "partial", "not_supported", "cant_tell"]),
                                min_size=1, max_size=3), min_size=1, max_size=30))
def test_team_agreement_matches_the_reference_packages(table):
    by_item = {f"i{n}#s0#c0": r for n, r in enumerate(table)}
    team = agreement.team_agreement(by_item)
    shared = [r for r in table if len(r) >= 2]
    assert team.n == len(shared) and team.values == sum(len(r) for r in shared)
    for pair in team.pairs:
        both = [r for r in shared if pair.first in r and pair.second in r]
        assert pair.n == len(both)
        x, y = [r[pair.first] for r in both], [r[pair.second] for r in both]
        if pair.kappa is not None:
            assert pair.kappa == pytest.approx(cohen_kappa_score(x, y))
    if team.alpha is not None:
        cats = sorted({v for r in shared for v in r.values()})
        matrix = np.array([[cats.index(r[who]) if who in r else np.nan for r in shared]
                           for who in ["ana", "ben", "cy"]], dtype=float)
        assert team.alpha == pytest.approx(krippendorff.alpha(reliability_data=matrix,
                                                              level_of_measurement="nominal"))


# --- guidelines ---------------------------------------------------------------------------------------


def test_the_bundled_guidelines_define_every_label_with_an_example():
    g = guidelines.load()
    assert guidelines.missing(g) == []
    for title in ("Supported", "Partially supported", "Not supported", "Can't tell", "Needs a citation"):
        section = g.text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
        assert "Example:" in section
    assert g.definitions["partial"].startswith("The chunk supports some of what the sentence claims")
    assert g.version == guidelines.version_of(g.text) and g.version.startswith("sha256:")


def test_own_guidelines_a_setting_and_their_definitions(tmp_path):
    path = tmp_path / "ours.md"
    path.write_text("# Ours\n\n## supported\nEvery word is in the chunk.\nAll of it.\n\nExample: x\n\n"
                    "## Can\u2019t tell ##\nUnreadable chunk.\n", encoding="utf-8")
    g = guidelines.load(path)
    assert g.definitions == {"supported": "Every word is in the chunk. All of it.", "cant_tell": "Unreadable chunk."}
    assert "Partially supported" in guidelines.missing(g) and g.version != guidelines.load().version
    assert load_settings(["--guidelines", str(path)]).guidelines == path.resolve()
    assert load_settings([], {"CITECHECK_GUIDELINES": str(path)}).guidelines == path.resolve()
    assert load_settings([], {}).guidelines is None
    with pytest.raises(guidelines.GuidelinesError, match="cannot read the guidelines file"):
        guidelines.load(tmp_path / "missing.md")


@pytest.mark.parametrize("source, absent, present", [
    ("<script>alert(1)</script>", "<script", "&lt;script&gt;"),
    ('<img src=x onerror="alert(1)">', "<img", "&lt;img"),
    ("[click](javascript:alert(1))", 'href="javascript', "[click]"),
    ("**bold** and `code`", "**", "<strong>bold</strong>"),
])
def test_guidelines_render_as_markdown_with_raw_html_escaped(source, absent, present):
    html = guidelines.to_html(source)
    assert absent not in html and present in html


# --- the disagreements view ---------------------------------------------------------------------------


def test_disagreements_list_differing_current_labels_and_hold_back_open_items(data):
    from citecheck.labelling import adjudication

    items = [i for i in data.all_items if i.citation is not None][:4]
    made = [label_store.make_label(items[0], "supported", "ana", note="<i>clear</i>", at=at(1)),
            label_store.make_label(items[0], "partial", "ben", at=at(2)),
            label_store.make_label(items[1], "supported", "ana", at=at(3)), label_store.make_label(items[1], "supported", "ben", at=at(4)),
            label_store.make_label(items[2], "supported", "ana", at=at(5)),
            label_store.make_label(items[2]._replace(fingerprint="sha256:old"), "partial", "ben", at=at(6)),  # stale
            label_store.make_label(items[3], "supported", "ana", at=at(7)), label_store.make_label(items[3], "partial", "ben", at=at(8))]
    adj = {items[3].key: label_events.make_adjudication(items[3], "partial", "lead", made[-2:])}
    current = label_store.latest(made)
    found, held = adjudication.disagreements(data.all_items, current, adj, viewer="lead", overlap=2)
    assert [d.item.key for d in found] == [items[0].key, items[3].key] and held == 0
    assert [d.settled for d in found] == [False, True]
    html = adjudication.side_by_side_html(found[0])
    assert "&lt;i&gt;clear&lt;/i&gt;" in html and "Not adjudicated yet" in html
    assert "Adjudicated by lead" in adjudication.side_by_side_html(found[1])
    # with overlap 3, a third reviewer who has not labelled them yet must not see them
    found, held = adjudication.disagreements(data.all_items, current, adj, viewer="cy", overlap=3)
    assert found == [] and held == 2
    assert len(adjudication.disagreements(data.all_items, current, adj, viewer="ana", overlap=3)[0]) == 2

    team = agreement.team_agreement(agreement.table(current.values(), {i.key: i.fingerprint for i in data.all_items}))
    assert [(p.first, p.second, p.n) for p in team.pairs] == [("ana", "ben", 3)] and team.n == 3
    html = adjudication.agreement_html(team)
    assert "n = 3 items" in html and "Cohen&#x27;s kappa" not in html and "ana" in html


def test_estimate_says_why_a_disagreed_item_is_left_out(data):
    from citecheck.judging.estimate import estimate

    cited = [i for i in data.all_items if i.citation is not None]
    labels = [label_store.make_label(cited[0], "supported", "ana", at=at(1)), label_store.make_label(cited[0], "partial", "ben", at=at(2)),
              label_store.make_label(cited[1], "supported", "ana", at=at(3))]
    verdicts = [verdict_store.make(i.key, "supported", "", "j", "v1", "h", i.fingerprint) for i in cited]
    result = estimate(labels, verdicts, data.all_items, "j", "v1", adjudicated={}, overlap=1)
    assert result.left_out == {"reviewers disagree and no label has a majority (adjudicate it)": 1}


def test_every_surface_settles_labels_by_one_rule(tmp_path, data):
    """Two reviewers on the sample (overlap 2), two disagreements adjudicated, one left open:
    calibrate, estimate and labels export settle the same items the same
    way and each says how many items every rule settled."""
    labels_file, verdicts = tmp_path / "labels.jsonl", tmp_path / "v.jsonl"
    cited = [i for a in data.results for i in items_of(a) if i.citation is not None]
    agree, split = cited[:6], cited[6:9]
    for n, item in enumerate(agree):
        for who in ("ana", "ben"):
            label_store.append(labels_file, label_store.make_label(item, "supported", who, at=at(n)))
    for n, item in enumerate(split):
        ana = label_store.make_label(item, "supported", "ana", at=at(20 + n))
        ben = label_store.make_label(item, "not_supported", "ben", at=at(30 + n))
        label_store.append(labels_file, ana)
        label_store.append(labels_file, ben)
        if n < 2:  # the third disagreement waits for its adjudication
            label_store.append_event(labels_file, label_events.make_adjudication(item, "not_supported", "lead", [ana, ben],
                                                                                 at=at(40 + n)))
    log = str(DEFAULT_LOG)
    code, _, err = run("judge", "--log", log, "--all-items", "--judge", "baseline", "--out", verdicts)
    assert code == 0, err
    want = {"adjudicated": 2, "majority": 6, "single": 0, "no_majority": 1, "incomplete": 0}
    sentence = consensus.counts_text(want)

    code, out, err = run("estimate", "--log", log, "--labels", labels_file, "--verdicts", verdicts, "--overlap", 2,
                         "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["human_label_rules"] == want and doc["overlap"] == 2
    assert "reviewers disagree and no label has a majority (adjudicate it)" in doc["left_out"]
    assert doc["left_out"]["reviewers disagree and no label has a majority (adjudicate it)"] == 1  # one item (its two labels)
    assert doc["rates"]["citations"]["n"] == 8  # 6 by majority + 2 adjudicated
    code, out, _ = run("estimate", "--log", log, "--labels", labels_file, "--verdicts", verdicts, "--overlap", 2)
    assert sentence in out

    code, out, err = run("calibrate", "--log", log, "--labels", labels_file, "--verdicts", verdicts, "--overlap", 2,
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["human_label_rules"] == want
    code, out, _ = run("calibrate", "--log", log, "--labels", labels_file, "--verdicts", verdicts, "--overlap", 2)
    assert sentence in out

    code, out, err = run("labels", "export", labels_file, "--log", log, "--overlap", 2)
    assert code == 0 and sentence in err
    rows = [json.loads(x) for x in out.splitlines()]
    assert sorted(r["human_label_rule"] for r in rows) == sorted(
        ["adjudicated"] * 2 + ["majority"] * 6 + ["no_majority"])


def test_the_adjudication_picker_names_answer_sentence_and_first_words(data):
    from citecheck.labelling import adjudication

    result = data.get("a-001")
    item = [i for i in items_of(result) if i.citation is not None][0]
    d = adjudication.Disagreement(item, (), None)
    text = adjudication.picker_text(d, result)
    chunk = result.answer.chunks[result.citations[item.citation].chunk_index]
    assert text.startswith(f"a-001 \u00b7 sentence {item.sentence + 1} \u00b7 \u201c")
    assert f"\u2192 {chunk.chunk_id}: \u201c{' '.join(chunk.text.split()[:8])}" in text
    assert "#" not in text  # no raw item key
    assert adjudication.remaining_text([d, d], 3, 1) == "2 of 3 disagreement(s) remain to adjudicate."


@pytest.mark.parametrize("overlap", [1, 2, 3, 4])
def test_the_disagreements_a_majority_settles_are_said_apart_as_calibration_settles_them(data, overlap):
    """Three reviewers on one item (two say supported), two on another (one each): both await
    adjudication, and the page says that a majority settles the first meanwhile, exactly when
    ``consensus.resolve`` settles it by majority (the caption said all remained to adjudicate beside
    "with no majority (adjudicate them)", which left that one out)."""
    from citecheck.labelling import adjudication

    cited = [i for i in data.all_items if i.citation is not None][:2]
    made = [label_store.make_label(cited[0], "supported", "ana"), label_store.make_label(cited[0], "supported", "ben"),
            label_store.make_label(cited[0], "not_supported", "cy"),
            label_store.make_label(cited[1], "supported", "ana"), label_store.make_label(cited[1], "not_supported", "ben")]
    current = label_store.latest(made)
    found, _ = adjudication.disagreements(cited, current, {}, "ana", overlap)
    rules = {k: r.rule for k, r in consensus.resolve(made, {}, overlap).items()}
    by_majority = sum(rules[d.item.key] == "majority" for d in found)
    assert by_majority == (1 if overlap <= 3 else 0)
    text = adjudication.remaining_text(found, len(found), overlap)
    assert text.startswith(f"{len(found)} of {len(found)} disagreement(s) remain to adjudicate")
    assert (f"a majority of reviewers settles {by_majority} of them" in text) == bool(by_majority)


@given(st.text(max_size=400), st.integers(1, 12))
@example("\u2026", 1)
@example("a b\u2026", 1)
def test_first_words_is_one_line_of_at_most_n_words(text, n):
    from citecheck.labelling.adjudication import first_words

    out = first_words(text, n)
    assert out.isprintable() and "\n" not in out
    head = text[: n * 40]  # only the head is read: a huge sentence costs nothing
    words = "".join(c if c.isprintable() else " " for c in head).split()
    shown = " ".join(words[:n])
    # the first n words, then an ellipsis only when something was left out (a text that itself
    # ends in "\u2026" keeps it as part of its last word: CI once found text="\u2026")
    assert out.startswith(shown) and out[len(shown):] in ("", "\u2026")
    assert (out[len(shown):] == "\u2026") == (len(words) > n or len(text) > n * 40)


@given(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8), st.integers(-3, 10), st.integers(-2, 2))
def test_moving_through_disagreements_stays_in_the_list(keys, position, delta):
    from citecheck.labelling.adjudication import focused, step

    at = focused(keys, None, position)
    assert (at is None) == (not keys)
    if keys:
        assert at == keys[min(max(position, 0), len(keys) - 1)]
        moved = step(keys, at, delta)
        assert moved == keys[min(max(keys.index(at) + delta, 0), len(keys) - 1)]
        assert focused(keys, moved, 0) == moved


def test_a_decision_is_recorded_or_says_why_not(tmp_path, data):
    from citecheck.labelling import adjudication

    item = next(i for i in data.all_items if i.citation is not None)
    ana = label_store.make_label(item, "supported", "ana", at=at(1))
    ben = label_store.make_label(item, "not_supported", "ben", at=at(2))
    d = adjudication.Disagreement(item, (ana, ben), None)
    target = tmp_path / "labels.jsonl"
    assert adjudication.decide(target, d, "partial", "", "", "") == (
        "error", "Not recorded: a name is required before adjudicating: enter yours in the sidebar.")
    assert not target.exists()
    kind, text = adjudication.decide(target, d, "partial", "lee", "half right", "sha256:g")
    assert kind == "success" and text == f"Recorded \u201cPartially supported\u201d for {item.key}, resolving 2 label(s)."
    (adj,) = label_store.adjudications(label_store.read_events(target)[0]).values()
    assert (adj.label, adj.adjudicator, adj.note, adj.guidelines) == ("partial", "lee", "half right", "sha256:g")
    assert adjudication.after_decision(["a", "b", "c"], 1) == "c" and adjudication.after_decision(["a", "b"], 1) is None


def test_history_says_a_change_of_the_words_marked_as_such_not_as_another_label(data):
    """A newcomer read each word-marking save as one more "label Not supported" row."""
    from citecheck.review import span_marks

    item = next(i for i in data.all_items if "not_supported" in i.labels)
    first = label_store.make_label(item, "not_supported", "ana", at="2026-12-06T10:00:00.000Z")
    one = span_marks.remarked(first, ((item_start(data, item), item_start(data, item) + 2),), "2026-12-06T10:00:05.000Z")
    none = span_marks.remarked(one, (), "2026-12-06T10:00:09.000Z")
    again = label_store.make_label(item, "partial", "ana", at="2026-12-06T10:00:12.000Z")
    entries = history.by_item([first, one, none, again])[item.key]
    html = history.history_html(entries)
    assert [e.marked for e in entries] == [-1, 1, 0, -1]
    assert "marked words (1 span)" in html and "unmarked every word" in html and html.count("<td>label</td>") == 2


def item_start(data, item) -> int:
    return data.get(item.answer_id).sentences[item.sentence].start
