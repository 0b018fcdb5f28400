"""Build and boot jobs on the targets (virtio-net in QEMU, idpf on a real
host): target descriptions (``targets``), the incremental builder
(``build``), QEMU boots (``boot``, ``initramfs``), results and the local
executor (``executor``), how results become findings (``verdicts``), the
job types (``kinds``: build, boot; ``remote``: idpf over SSH), Celery
(``distributed``) and running them for a series (``run``).

Beside the check flow: it takes applied commits and adds to a Report.
May import: ``tree``, ``mails``, ``kernel``, ``report``, ``errors``.
"""
