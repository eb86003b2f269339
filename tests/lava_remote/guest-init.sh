#!/bin/busybox sh
# /init of the lab test's busybox initramfs: a shell on the console, which
# LAVA's boot action waits for (prompt `/ # `) and its test shell drives.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec setsid cttyhack sh
