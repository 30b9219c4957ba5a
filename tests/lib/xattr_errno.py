# SPDX-License-Identifier: GPL-2.0
"""Extended attribute system calls, with the result as an errno name.

Usage:
  xattr_errno.py get PATH NAME [SIZE]         value size, or errno name
  xattr_errno.py set PATH NAME LEN [create|replace]
                                              OK or errno name; the value is
                                              LEN bytes of 'x'
  xattr_errno.py remove PATH NAME             OK or errno name
  xattr_errno.py list PATH [SIZE]             list size, or errno name

setfattr and getfattr print messages; tests need the errno the kernel
returned, and calls with a given buffer size (ERANGE). Symbolic links are
not followed.
"""
import ctypes
import errno
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.lgetxattr.restype = ctypes.c_ssize_t
libc.llistxattr.restype = ctypes.c_ssize_t
XATTR_CREATE, XATTR_REPLACE = 1, 2


def result(ret):
    if ret < 0:
        e = ctypes.get_errno()
        return errno.errorcode.get(e, str(e))
    return str(ret)


op, path = sys.argv[1], sys.argv[2].encode()
if op == "get":
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 65536
    buf = ctypes.create_string_buffer(max(size, 1))
    print(result(libc.lgetxattr(path, sys.argv[3].encode(), buf, ctypes.c_size_t(size))))
elif op == "set":
    n = int(sys.argv[4])
    flags = {"create": XATTR_CREATE, "replace": XATTR_REPLACE}.get(
        sys.argv[5] if len(sys.argv) > 5 else "", 0)
    ret = libc.lsetxattr(path, sys.argv[3].encode(), b"x" * n, ctypes.c_size_t(n), flags)
    print("OK" if ret == 0 else result(ret))
elif op == "remove":
    ret = libc.lremovexattr(path, sys.argv[3].encode())
    print("OK" if ret == 0 else result(ret))
elif op == "list":
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 65536
    buf = ctypes.create_string_buffer(max(size, 1))
    print(result(libc.llistxattr(path, buf, ctypes.c_size_t(size))))
else:
    sys.exit("unknown operation " + op)
