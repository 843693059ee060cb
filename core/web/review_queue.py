"""The review page's queue: the answers it walks through and the reviewer's next item, whether the
answers are a log in memory (``review.dataset.Dataset``) or a checked store read one at a time
(``store.answers.StoreAnswers``), and whether the reviewer works through a calibration sample.

Built once per run by the page; its methods are the callbacks of Resume and of the label buttons
(they move the session's place as :mod:`citecheck.review.navigation` does)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..review import labelling as LB
from ..review import labels as L
from ..review import navigation as N
from ..review import review_view as RV
from ..review import sample as S
from ..review.identity import Identity, how_to_name
from ..review.queue import labellers, next_in_sample, sample_answer_ids, sample_progress
from ..store.answers import filtered_ids, positions_of, progress, queue_next


def read_sample(path: str | Path | None) -> tuple[S.Sample | None, str | None]:
    """The calibration sample chosen in the sidebar (None for none), or None and why it cannot be used."""
    if path is None:
        return None, None
    try:
        return S.read(path), None
    except (OSError, S.SampleError) as exc:
        return None, f"Cannot use that sample: {exc}"


@dataclass(frozen=True)
class ReviewQueue:
    data: object  # a Dataset or a StoreAnswers
    ids: Sequence[str]  # the answers shown, in order: the sample's, or those passing the filter
    where: Mapping[str, int]  # answer id -> its place in ids, without a search through them
    sample: S.Sample | None
    overlap: int  # reviewers wanted per item

    @classmethod
    def of(cls, data, sample: S.Sample | None, filter_name: str, current: dict[tuple[str, str], L.Label],
           reviewer: str, overlap: int = 1) -> ReviewQueue:
        ids = sample_answer_ids(data, sample) if sample is not None else filtered_ids(data, filter_name, current,
                                                                                       reviewer)
        return cls(data, ids, positions_of(data, ids), sample, overlap)

    def position(self, answer_id: str) -> int | None:
        """The answer's place among ``ids`` from 1, None when the filter leaves it out."""
        return self.where[answer_id] + 1 if answer_id in self.where else None

    def next_item(self, labels: Sequence[L.Label], reviewer: str,
                  after: tuple[str, int] | None = None) -> tuple[str, int] | None:
        """The reviewer's next item (answer id, position) after ``after``, given ``labels`` as read now."""
        fresh = L.latest(labels)
        if self.sample is not None:
            return next_in_sample(self.data, self.sample, fresh, reviewer)
        return queue_next(self.data, self.ids, self.where, labellers(fresh), reviewer, self.overlap, after)

    def move_on(self, state: N.State, labels: Sequence[L.Label], reviewer: str,
                after: tuple[str, int] | None = None) -> bool:
        """Focus the reviewer's next item; False (and a notice) when the queue is finished."""
        return N.arrive(state, self.next_item(labels, reviewer, after),
                        N.finished_text(self.overlap, self.sample is not None))

    def save(self, state: N.State, at: tuple[str, int] | None, label: str, target: str | Path, who: Identity,
             guidelines: str, read_labels: Callable[[], Sequence[L.Label]]) -> None:
        """A label button: save the label (``labelling.save``), then move on to the next item, the
        labels read again once the new one is stored."""
        done = LB.save(state, self.data, at, label, target, who, guidelines, self.sample)
        if done is None:
            return
        after, saved = done
        if self.move_on(state, read_labels(), who.name, after):
            state["flash"] = ("success", saved)
        else:
            state["flash"] = ("success", saved + " " + state["flash"][1])

    def team_progress(self, current: dict[tuple[str, str], L.Label], reviewer: str):
        """The reviewer's and the team's progress over every item."""
        return progress(self.data, labellers(current), reviewer, self.overlap)

    def header(self, current: dict[tuple[str, str], L.Label], reviewer: str, items, who: Identity):
        """The notices (kind, text) above the answer, and the team's share of items done for the
        progress bar (None without a reviewer: the notice then says how to become one)."""
        notices, done = [], None
        if reviewer:
            overall = self.team_progress(current, reviewer)
            notices.append(("info", RV.progress_text(reviewer, overall, L.progress(items, current, reviewer),
                                                     self.overlap)))
            done = RV.share_done(overall)
        else:
            notices.append(("error", f"{how_to_name(who)} before labelling: labels need a reviewer."))
        if self.sample is not None:
            notices.append(("info", RV.sample_text(self.sample.sample_id, *self.sample_progress(current, reviewer))))
        return notices, done

    def sample_progress(self, current: dict[tuple[str, str], L.Label], reviewer: str) -> tuple[int, int] | None:
        """(sampled items the reviewer has labelled, sampled items loaded), None without a sample."""
        return None if self.sample is None else sample_progress(self.data, self.sample, current, reviewer)
