# SPDX-License-Identifier: GPL-2.0
"""Helpers for test scripts that check errno values from Python:
expect(errno_name, func, *args) runs func(*args) and fails the test unless
it raises OSError with that errno; ok(func, *args) fails unless it works;
gap(text) records a limit the module does not enforce in the file named by
$VSMFS_GAPS (the test reports those at its end and fails)."""

import errno
import os
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def _call(func, args):
    name = getattr(func, "__name__", str(func))
    return f"{name}({', '.join(repr(a) if len(repr(a)) < 40 else repr(a)[:37] + '...' for a in args)})"


def expect(name, func, *args):
    want = getattr(errno, name)
    try:
        func(*args)
    except OSError as e:
        if e.errno != want:
            fail(f"{_call(func, args)}: {errno.errorcode.get(e.errno, e.errno)} "
                 f"({os.strerror(e.errno)}), expected {name}")
        print(f"  (expected) {_call(func, args)}: {name}")
        return
    fail(f"{_call(func, args)} succeeded, expected {name}")


def ok(func, *args):
    try:
        return func(*args)
    except OSError as e:
        fail(f"{_call(func, args)}: {errno.errorcode.get(e.errno, e.errno)} ({os.strerror(e.errno)})")


def gap(text):
    print(f"  GAP: {text}")
    with open(os.environ["VSMFS_GAPS"], "a") as f:
        f.write(text + "\n")
