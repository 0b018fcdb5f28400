"""Build and boot jobs on the targets (virtio-net in QEMU, idpf on a real
host): target descriptions (``targets``), the incremental builder
(``build``), QEMU boots (``boot``, ``initramfs``), results and the local
executor (``executor``), how results become findings (``verdicts``), the
job types (``kinds``: build, boot; ``remote``: idpf over SSH), Celery
(``distributed``), running them for a series (``run``) and the one flow
of ``napipatch test`` and the bot: apply, check, then the jobs (``flow``).

Beside the check flow: it takes applied commits and adds to a Report.
May import: ``tree``, ``mails``, ``report``, ``config``, ``errors``; and
``flow`` only, ``engine`` (it runs the checks before the jobs).
"""
