"""Build, boot and selftest jobs on the targets (virtio-net in QEMU, idpf on a real host), here
or on Celery workers."""
