# SPDX-License-Identifier: GPL-2.0
"""mount(2) a device and print the result as an errno name, or OK.

Usage: mount_errno.py DEVICE DIR [OPTIONS]. mount(8) folds every failure
into exit status 32; tests need the errno the kernel returned.
"""
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
dev, target = sys.argv[1].encode(), sys.argv[2].encode()
opts = sys.argv[3].encode() if len(sys.argv) > 3 else None
flags = 0
if opts:
    words = opts.split(b",")
    if b"ro" in words:
        flags |= 1  # MS_RDONLY
    opts = b",".join(w for w in words if w != b"ro") or None
if libc.mount(dev, target, b"vsmfs", flags, opts) == 0:
    print("OK")
    libc.umount2(target, 0)
else:
    print(errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())))
