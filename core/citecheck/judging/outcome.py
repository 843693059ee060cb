"""What a judge run says when it ends: judged, failed and unsaved items counted apart, so a run
whose every call failed never reads as "2 item(s) judged"."""

from __future__ import annotations

from dataclasses import dataclass

from citecheck.judging.judges import Progress


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str  # "success", "warning" or "error": how a page shows it
    text: str


def run_outcome(progress: Progress, saved: int, already: int, write_error: OSError | None = None) -> Outcome:
    """The end of a run: ``progress`` of the judge, ``saved`` verdicts on disk, ``already`` items
    skipped as judged with this prompt before, ``write_error`` when saving stopped the run."""
    judged = progress.done - progress.failed
    cost = f" for ${progress.spent:.4f}"
    stopped = f"; {progress.stopped}" if progress.stopped else ""
    before = f" ({already} were already judged with this prompt)."
    if write_error is not None:
        unsaved = progress.done - saved
        return Outcome("error", f"Stopped: {write_error} {saved} verdict(s) were saved before that; {unsaved} "
                                "judged but NOT saved. Run again once there is room: saved verdicts are not "
                                "judged (or paid for) again.")
    if progress.failed:
        text = (f"{progress.failed} call(s) FAILED and {judged} item(s) judged{cost}{stopped}{before} "
                "Failed items are recorded as unscored with the reason; check the network and the API key, "
                "then run again to retry them.")
        return Outcome("error" if judged == 0 else "warning", text)
    return Outcome("success", f"{progress.done} item(s) judged{cost}{stopped}{before}")
