"""``napipatch worker``: a Celery worker for build, boot and remote jobs."""

from __future__ import annotations

import typer

from napipatch.cli.common import load_config
from napipatch.jobs.distributed import run_worker


def worker(queues: str = typer.Option("virtio-net", "--queues", "-Q",
                                      help="Target queues to serve, comma separated (virtio-net,idpf)."),
           concurrency: int = typer.Option(1, "--concurrency",
                                           help="Jobs at once (builds want the whole machine: 1)."),
           name: str = typer.Option("", "--name", "-n", help="Worker name (default: celery's).")):
    """Serve jobs from the broker in napipatch.broker-url (Redis)."""
    cfg = load_config()
    run_worker(cfg, [q.strip() for q in queues.split(",") if q.strip()], concurrency,
               name or None)
