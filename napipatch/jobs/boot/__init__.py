"""Booting a built kernel: the result model and console protocol every backend shares (``result``,
``console``), QEMU with a busybox initramfs (``qemu``, ``initramfs``), virtme-ng (``vng``,
``selfrun``), a real host over SSH (``remote``), and the boot job (``job``)."""
