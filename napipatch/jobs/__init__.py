"""Build and boot jobs on the targets (virtio-net in QEMU, idpf on a real
host): target descriptions (``targets``), the incremental builder
(``build``), QEMU boots (``boot``, ``initramfs``), results and the local
executor (``executor``), how results become findings (``verdicts``), the
job types (``kinds``: build, boot; ``remote``: idpf over SSH), the netdev
CI's build tests per patch (``warnings`` in the ``warnconfigs`` on objects
``warnselect`` picks, in the kept ``warntree``; ``cocci`` and ``docs`` per
series, put on patches by ``attribute``, ``seriesresult``), Celery
(``distributed``) and running them for a series (``run``).

Beside the check flow: it takes applied commits and adds to a Report.
May import: ``tree``, ``mails``, ``kernel``, ``report``, ``errors``.
"""
