"""The review page's walk: the answers it goes through and the reviewer's next item, whether the
answers are a log in memory (``labelling.dataset.Dataset``) or a checked store read one at a time
(``storage.checked.answers.StoreAnswers``), and whether the reviewer works through a calibration sample.

Built once per run by the page; its methods are the callbacks of Resume and of the label buttons
(they move the session's place as :mod:`citecheck.review.navigation` does)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from citecheck.labelling import labels as label_store
from citecheck.labelling import sample as samples
from citecheck.labelling.dataset import AnswerSource
from citecheck.review import holds, label_actions, navigation, review_view
from citecheck.review.identity import Identity, how_to_name
from citecheck.review.queue import labellers, next_in_sample, sample_answer_ids, sample_progress
from citecheck.review.session_state import ReviewState, State, acting
from citecheck.web.answer_walk import filtered_ids, positions_of, progress, queue_next


def read_sample(path: str | Path | None) -> tuple[samples.Sample | None, str | None]:
    """The calibration sample chosen in the sidebar (None for none), or None and why it cannot be used."""
    if path is None:
        return None, None
    try:
        return samples.read(path), None
    except (OSError, samples.SampleError) as exc:
        return None, f"Cannot use that sample: {exc}"


@dataclass(frozen=True)
class ReviewWalk:
    """The answers the review page walks through and the reviewer's next item, over either kind of
    answers (:class:`~citecheck.labelling.dataset.AnswerSource`)."""

    data: AnswerSource  # a Dataset (a log in memory) or a StoreAnswers (a checked store)
    ids: Sequence[str]  # the answers shown, in order: the sample's, or those passing the filter
    where: Mapping[str, int]  # answer id -> its place in ids, without a search through them
    sample: samples.Sample | None
    overlap: int  # reviewers wanted per item
    work: holds.Work | None = None  # assignments and holds (review.holds); None: the queue ignores them
    lock_minutes: int = holds.LOCK_MINUTES
    figures: Any = None  # a web.label_cache.LabelCache keeping the team's labels and progress; None: made each time

    @classmethod
    def of(cls, data: AnswerSource, sample: samples.Sample | None, filter_name: str, current: dict[tuple[str, str], label_store.Label],
           reviewer: str, overlap: int = 1, work: holds.Work | None = None,
           lock_minutes: int = holds.LOCK_MINUTES, found: Sequence[str] | None = None) -> ReviewWalk:
        """``found``: the answers a search and its filters left (``review.search.Found.answers``), which
        are then the queue in place of the sidebar's filter; a calibration sample still comes first."""
        ids: Sequence[str]
        if sample is not None:
            ids = sample_answer_ids(data, sample)
        elif found is not None:
            ids = found
        else:
            ids = filtered_ids(data, filter_name, current, reviewer)
        return cls(data, ids, positions_of(data, ids), sample, overlap, work, lock_minutes)

    def position(self, answer_id: str) -> int | None:
        """The answer's place among ``ids`` from 1, None when the filter leaves it out."""
        return self.where[answer_id] + 1 if answer_id in self.where else None

    def next_item(self, labels: Sequence[label_store.Label] | dict[tuple[str, str], label_store.Label],
                  reviewer: str, after: tuple[str, int] | None = None) -> tuple[str, int] | None:
        """The reviewer's next item (answer id, position) after ``after``, given ``labels`` as read now
        (the labels that count, or already the current one per (item, reviewer): ``labels.latest``)."""
        fresh = labels if isinstance(labels, dict) else label_store.latest(labels)
        if self.sample is not None:
            return next_in_sample(self.data, self.sample, fresh, reviewer)
        team = labellers(fresh) if self.figures is None else self.figures.team(fresh)

        def pool(claimed: Mapping[str, int] | None = None):
            return queue_next(self.data, self.ids, self.where, team, reviewer, self.overlap, after, claimed)

        if self.work is None or not reviewer:
            return pool()
        # assigned items first, then the pool less what others hold or have been assigned
        return holds.next_place(self.work, reviewer, team, self.data.items, datetime.now(timezone.utc), pool,
                                self.overlap, self.lock_minutes)

    def move_on(self, state: State, labels: Sequence[label_store.Label] | dict[tuple[str, str], label_store.Label],
                reviewer: str,
                after: tuple[str, int] | None = None) -> bool:
        """Focus the reviewer's next item; False (and a notice) when the queue is finished."""
        return navigation.arrive(state, self.next_item(labels, reviewer, after),
                        navigation.finished_text(self.overlap, self.sample is not None))

    def resume(self, state: State, labels: Sequence[label_store.Label] | dict[tuple[str, str], label_store.Label],
               reviewer: str) -> None:
        """Resume (U): focus the reviewer's queue's next item and say which it is, so that a jump back
        to an item passed over, or to another answer, is not a surprise."""
        with acting(state):
            if self.move_on(state, labels, reviewer):
                session = ReviewState(state)
                session.flash = ("info", navigation.resumed_text(session.answer_id or "", session.focus))

    def save(self, state: State, at: tuple[str, int], label: str, target: str | Path, who: Identity,
             guidelines: str,
             read_labels: Callable[[], Sequence[label_store.Label] | dict[tuple[str, str], label_store.Label]],
             drawn: str | None = None) -> None:
        """A label button: save the label (``labelling.save``), then move on to the next item, the
        labels read again once the new one is stored.  ``drawn``: the drawing the button was pressed on."""
        def current() -> Mapping[tuple[str, str], label_store.Label]:
            got = read_labels()
            return got if isinstance(got, Mapping) else label_store.latest(got)

        with acting(state):  # (a second call for the same press waits, then sees this label)
            done = label_actions.save(state, self.data, at, label, target, who, guidelines, self.sample, current,
                                      drawn)
            if done is None:
                return
            after, (kind, saved) = done
            session = ReviewState(state)
            if self.move_on(state, read_labels(), who.name, after):
                session.flash = (kind, saved)
            else:  # (the queue is finished: its notice follows the saved one)
                session.flash = (kind, saved + " " + (session.flash or ("", ""))[1])

    def team_progress(self, current: dict[tuple[str, str], label_store.Label], reviewer: str):
        """The reviewer's and the team's progress over every item."""
        if self.figures is not None:
            return self.figures.progress(self.data, current, reviewer, self.overlap)
        return progress(self.data, labellers(current), reviewer, self.overlap)

    def header(self, current: dict[tuple[str, str], label_store.Label], reviewer: str, items, who: Identity):
        """The notices (kind, text) above the answer, and the team's share of items done for the
        progress bar (None without a reviewer: the notice then says how to become one)."""
        notices, done = [], None
        if reviewer:
            overall = self.team_progress(current, reviewer)
            notices.append(("info", review_view.progress_text(reviewer, overall, label_store.progress(items, current, reviewer),
                                                     self.overlap)))
            done = review_view.share_done(overall)
            if self.work is not None and self.work.assigned.get(reviewer):  # (the team's labels: only then)
                team = labellers(current) if self.figures is None else self.figures.team(current)
                notices.append(("info", holds.progress_text(self.work, reviewer, team, self.data.items,
                                                            datetime.now(timezone.utc), self.overlap,
                                                            self.lock_minutes)))
        else:
            notices.append(("error", f"{how_to_name(who)} before labelling: labels need a reviewer."))
        if self.sample is not None:
            labelled, loaded = sample_progress(self.data, self.sample, current, reviewer)
            notices.append(("info", review_view.sample_text(self.sample.sample_id, labelled, loaded)))
        return notices, done

    def sample_progress(self, current: dict[tuple[str, str], label_store.Label], reviewer: str) -> tuple[int, int] | None:
        """(sampled items the reviewer has labelled, sampled items loaded), None without a sample."""
        return None if self.sample is None else sample_progress(self.data, self.sample, current, reviewer)
