"""The job registry: every job a check can read, from the job classes'
own declarations (``kinds``, ``napipatch.jobs.executor.JobKind``), in the
order a pipeline run starts them. The pipeline, the Celery workers and
``napipatch test warnings`` read it; nothing else lists the jobs."""

from __future__ import annotations

from napipatch.jobs.boot.job import BootJob
from napipatch.jobs.boot.remote import RemoteJob
from napipatch.jobs.build.job import BuildJob
from napipatch.jobs.executor import JobKind
from napipatch.jobs.kunit.job import KunitJob
from napipatch.jobs.tools.dtbinding import DtBindingJob
from napipatch.jobs.tools.selftests import ToolsJob
from napipatch.jobs.tools.ynl import YnlJob
from napipatch.jobs.warnings.cocci import CocciJob
from napipatch.jobs.warnings.docs import DocsJob
from napipatch.jobs.warnings.job import WarningsJob

CLASSES: tuple[type, ...] = (BuildJob, WarningsJob, CocciJob, DocsJob, YnlJob, ToolsJob,
                             DtBindingJob, KunitJob, BootJob, RemoteJob)
# name -> (its declaration, the class running it), in run order
KINDS: dict[str, tuple[JobKind, type]] = dict(sorted(
    ((k.name, (k, cls)) for cls in CLASSES for k in cls.kinds), key=lambda kv: kv[1][0].order))


def kind(name: str) -> JobKind:
    return KINDS[name][0]


def job_class(kind_of_job: str) -> type:
    """The class whose jobs say ``kind`` (a Celery payload's), e.g. ``warnings``."""
    return next(cls for cls in CLASSES
                if cls.__dataclass_fields__["kind"].default == kind_of_job)
