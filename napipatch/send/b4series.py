"""The series checks on b4's paths, which hand napipatch one patch at a time.

``b4 prep --check`` (and so ``b4 send``'s pre-flight) runs the per-patch
command on each patch and has no series command. When that patch is the
last of the current branch's prep series, the series checks (``apply``,
``series-format``, ``base-commit``, ``maintainers``, ...) run too, on the
series as b4 would mail it, and their findings join that patch's report.

``b4 review`` runs ``b4.review-series-check-cmd`` with the cover letter on
stdin and ``B4_TRACKING_FILE`` naming its tracking data; the series is the
review branch ``b4/review/<change-id>`` b4 made: the commits from
``first-patch-commit`` to the branch's tip less b4's tracking commit.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from napipatch.config import Config
from napipatch.engine.registry import among, scoped
from napipatch.errors import NapipatchError
from napipatch.mails.mail import PatchMail, parse_message
from napipatch.mails.mbox import read_regular
from napipatch.pipeline.run import run
from napipatch.report.model import Report, Result
from napipatch.store.history import attach
from napipatch.store.inputs import current_series, from_range, prep_tip
from napipatch.store.store import Store
from napipatch.tree import gitutil

TRACKING = "B4_TRACKING_FILE"
TRACKING_LIMIT = 64 << 20  # b4's tracking data with every follow-up


def series_ids() -> list[str]:
    """The static checks that judge a series as a whole."""
    return scoped("series", None, None)


def prep_series_results(here: Path, commit: str | None, cfg: Config,
                        only: list[str] | None, skip: list[str] | None) -> list[Result]:
    """When ``commit`` is the tip of the current branch's b4 prep series,
    the series checks' results on that series (for the report of the
    commit's own run, ``pipeline.run``'s ``extra``); else none."""
    if commit is None or prep_tip(here) != commit:
        return []
    ids = scoped("series", only, skip)
    if not ids:
        return []
    series, base = current_series(here)
    # vN-1 from the store (by name or b4's change-id): the posting rules
    # (24 h, threading, link, carried tags) judge b4 send's series too.
    attach(series, Store(cfg.store_root))
    whole = run(series, cfg, here, base=base, default=among(ids))
    return [(r, [f for f in whole.findings if f.check == r.id]) for r in whole.checks]


def tracked_range(here: Path, environ=os.environ) -> tuple[str, str]:
    """``(apply point, A..B)`` of the series b4 review is looking at, from
    the tracking data ``B4_TRACKING_FILE`` names."""
    path = environ.get(TRACKING)
    if not path:
        raise NapipatchError(TRACKING, "not set: b4 review sets it for a series on a review "
                             "branch (b4/review/<change-id>); nothing to check")
    try:
        # A regular file of bounded size: a FIFO here must not hang b4 review.
        data = json.loads(read_regular(Path(path), TRACKING_LIMIT).decode("utf-8"))
        info = data["series"]
        first, change_id = info["first-patch-commit"], info["change-id"]
    except ValueError as exc:
        raise NapipatchError(path, f"b4's tracking data could not be read ({exc})") from None
    except (KeyError, TypeError) as exc:
        raise NapipatchError(path, f"b4's tracking data has no series {exc}") from None
    branch = f"b4/review/{change_id}"
    repo = gitutil.require_repo(here)
    tip = gitutil.git(repo, "rev-parse", "--verify", "-q", f"{branch}~1^{{commit}}", check=False)
    start = gitutil.git(repo, "rev-parse", "--verify", "-q", f"{first}~1^{{commit}}", check=False)
    if tip.returncode or start.returncode:
        raise NapipatchError(branch, f"b4's review branch or its first patch {first[:12]} "
                             "is not in this repository")
    return start.stdout.strip(), f"{start.stdout.strip()}..{tip.stdout.strip()}"


def _cover(data: bytes) -> PatchMail | None:
    """The cover letter b4 hands over, if that is what ``data`` is."""
    try:
        mail = parse_message(data, "b4 review's cover letter")
    except NapipatchError:
        return None
    return mail if mail.subject.index == 0 and not mail.diff else None


def review_series(here: Path, cfg: Config, only: list[str] | None, skip: list[str] | None,
                  cover: bytes = b"") -> Report:
    """Every static check on the series b4 review tracks, at its first
    patch's parent (where b4 applied it). The mails are made from the review
    branch's commits with the posted cover letter's subject prefix
    (``PATCH net-next v2``), and that cover letter is the series', so the
    checks judge what was posted, not format-patch's placeholders."""
    base, revrange = tracked_range(here)
    posted = _cover(cover)
    prefix = None
    if posted is not None:
        tags = [t for t in posted.subject.prefixes if not re.fullmatch(r"\d+/\d+", t)]
        prefix = " ".join(tags) or None
    series = from_range(here, revrange, base=base, subject_prefix=prefix)
    if posted is not None and series.cover is not None:
        series.cover = posted
        series.inputs.synthetic_cover = False
    series.name = "..".join(sha[:12] for sha in revrange.split(".."))
    return run(series, cfg, here, base=base, only=only, skip=skip)
