"""Jobs on a distributed engine: Celery with a Redis broker and result backend.

A bot that builds every netdev series patch by patch outgrows one machine,
and idpf needs hosts with real hardware. ``CeleryExecutor`` sends each job
to the queue named after its target (``virtio-net``, ``idpf``), so idpf
jobs reach only workers started with ``--queues idpf``; the build-warning
jobs (``warnings``, ``cocci``, ``htmldocs``), the tools builds
(``ynl-tools``, ``build-tools``, ``dt-binding-check``) and KUnit (``kunit``) go to the
``build`` queue; ``napipatch worker`` runs them and hands back the same ``JobResult`` the local
executor returns.

Delivery: late acks and reject-on-worker-lost, one job at a time per
worker, so a worker killed mid-job leaves its message unacknowledged and
Redis delivers it again (after ``napipatch.broker-visibility-timeout``).
Infrastructure failures (``InfraError``: host unreachable, disk full) are
retried a bounded number of times and, if they persist, reported as an
infrastructure error, never as a failure of the series.

A job carries the base commit and the patches as text, not only commit
ids: a worker on another machine re-applies them with ``apply_in_index``,
which makes the same commits there (fixed dates), so the job's commit ids
hold on every worker.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from napipatch.errors import NapipatchError
from napipatch.jobs.executor import INFRA, JobResult, infra_result, is_infra, kind_of
from napipatch.jobs.executor import run_job as run_here
from napipatch.jobs.kinds import job_class
from napipatch.mails.mail import parse_message, split_mbox
from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status
from napipatch.tree import gitutil
from napipatch.tree.apply import apply_in_index

TASK = "napipatch.run_job"


# ---------------------------------------------------------------- payloads
def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def queue_of(job) -> str:
    """The queue a job goes to: its kind's (``build`` for the build tests,
    the tools builds and KUnit), else its target's (``idpf`` jobs reach only
    workers with that hardware)."""
    return job.kinds[0].queue or getattr(job, "target", "") or "default"


def to_payload(job, patches: list[str] | None = None, base: str | None = None,
               timeout: float = 0.0) -> dict:
    """What a worker is sent: the job's fields, the patches, the base, and
    its deadline (``napipatch.job-timeout`` as the submitter has it)."""
    fields = {f.name: _plain(getattr(job, f.name)) for f in dataclasses.fields(job)}
    return {"kind": job.kind, "job": fields, "patches": patches or [], "base": base,
            "timeout": timeout}


def from_payload(payload: dict):
    cls = job_class(payload["kind"])
    names = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {}
    for k, v in payload["job"].items():
        if k not in names:
            continue
        if k in ("repo", "cache"):
            v = Path(v)
        kwargs[k] = v
    return cls(**kwargs)


def result_to_dict(r: JobResult) -> dict:
    return {"kind": r.kind, "target": r.target, "status": r.status, "seconds": r.seconds,
            "findings": [f.to_json() for f in r.findings], "data": _plain(r.data)}


def result_from_dict(d: dict) -> JobResult:
    return JobResult(kind=d["kind"], target=d["target"], status=d["status"],
                     findings=[Finding.from_json(f) for f in d["findings"]],
                     seconds=d.get("seconds", 0.0), data=d.get("data", {}))


# ---------------------------------------------------------------- worker side
def ensure_commits(payload: dict, worker_tree: str | None) -> None:
    """Make sure the job's repository exists here and has its commits."""
    job = payload["job"]
    repo = Path(job.get("repo", ""))
    if not (repo / ".git").exists() and worker_tree:
        repo = Path(worker_tree)
        job["repo"] = str(repo)
    if not (repo / ".git").exists():
        raise NapipatchError(repo, "no kernel tree on this worker (set napipatch.tree)")
    wanted = list(job.get("commits") or []) + ([job["commit"]] if job.get("commit") else [])
    if all(gitutil.git(repo, "cat-file", "-e", f"{c}^{{commit}}", check=False).returncode == 0
           for c in wanted):
        return
    base = payload.get("base")
    if not base or not payload.get("patches"):
        raise NapipatchError(repo, "the job's commits are not here and it carries no patches")
    mails = [parse_message(raw, f"job patch {i + 1}", env)
             for i, text in enumerate(payload["patches"])
             for env, raw in split_mbox(text.encode(), f"job patch {i + 1}")]
    applied = apply_in_index(repo, Series("job", 1, None, mails), base)
    missing = [c for c in wanted if c not in applied.commits and c != base]
    if missing:
        raise NapipatchError(repo, f"re-applying the patches did not give {missing[0][:12]}")


def make_app(broker: str, backend: str | None = None, visibility_timeout: int = 3600,
             max_retries: int = 3, retry_delay: float = 5.0, worker_tree: str | None = None):
    try:  # an optional extra: napipatch[distributed]
        from celery import Celery
    except ImportError:
        raise NapipatchError("napipatch.executor", "celery is not installed "
                             "(pip install 'napipatch[distributed]')") from None

    app = Celery("napipatch", broker=broker, backend=backend or broker)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_serializer="json", result_serializer="json", accept_content=["json"],
        broker_transport_options={"visibility_timeout": visibility_timeout},
        result_backend_transport_options={"visibility_timeout": visibility_timeout},
        broker_connection_retry_on_startup=True,
        task_track_started=True,
        result_expires=7 * 24 * 3600,
        worker_hijack_root_logger=False,
    )

    @app.task(name=TASK, bind=True, max_retries=max_retries)
    def run_job(self, payload: dict) -> dict:
        log = logging.getLogger("napipatch.worker")
        try:
            ensure_commits(payload, worker_tree)
            job = from_payload(payload)
            result = run_here(job, lambda msg: log.info("%s", msg), payload.get("timeout"))
            return result_to_dict(result)
        except Exception as exc:  # noqa: BLE001 - classified below
            if not is_infra(exc):
                raise
            if self.request.retries >= self.max_retries:
                job = payload["job"]
                return result_to_dict(infra_result(payload["kind"], job.get("target", "?"),
                                                   str(exc), self.request.retries + 1))
            raise self.retry(exc=exc, countdown=retry_delay)

    return app


def app_from_config(cfg):
    return make_app(cfg.broker_url, cfg.result_backend or None,
                    visibility_timeout=cfg.broker_visibility_timeout,
                    max_retries=cfg.job_retries, retry_delay=cfg.job_retry_delay,
                    worker_tree=cfg.tree or None)


# ---------------------------------------------------------------- client side
class CeleryExecutor:
    """Submits jobs to per-target queues and waits for their results."""

    def __init__(self, app, patches: list[str] | None = None, base: str | None = None,
                 timeout: float = 6 * 3600, progress=None, timeouts=None):
        self.app, self.patches, self.base = app, patches, base
        self.timeout = timeout
        self.timeouts = timeouts or (lambda _kind: 0.0)
        self.progress = progress or (lambda _m: None)

    def submit(self, job) -> JobResult:
        payload = to_payload(job, self.patches, self.base, self.timeouts(kind_of(job).name))
        queue = queue_of(job)
        self.progress(f"{queue}: {job.kind} job queued")
        res = self.app.send_task(TASK, args=[payload], queue=queue)
        try:
            return result_from_dict(res.get(timeout=self.timeout, propagate=True))
        except Exception as exc:  # noqa: BLE001 - a worker's crash becomes a finding
            if type(exc).__name__ == "TimeoutError":
                raise NapipatchError(f"{queue} queue", f"no result within {self.timeout:.0f} s "
                                     "(is a worker running with --queues including it?)") from None
            return JobResult(kind=job.kind, target=queue, status=Status.ERROR, findings=[Finding(
                check=INFRA, severity=Severity.WARNING, patch=0,
                message=f"{queue}: the worker failed to run the job: {type(exc).__name__}: {exc}",
                hint="see the worker's log")])


def run_worker(cfg, queues: list[str], concurrency: int = 1, name: str | None = None) -> None:
    app = app_from_config(cfg)
    argv = ["worker", "-Q", ",".join(queues), "-P", "solo" if concurrency == 1 else "prefork",
            "-c", str(concurrency), "--loglevel=INFO", "--without-gossip", "--without-mingle"]
    if name:
        argv += ["-n", name]
    app.worker_main(argv)
