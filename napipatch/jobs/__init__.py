"""Build, boot and selftest jobs on the targets (virtio-net in QEMU, idpf on a real host), and
the netdev CI's build-warning tests per patch, here or on Celery workers."""
