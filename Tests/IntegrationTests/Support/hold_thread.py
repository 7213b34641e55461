#!/usr/bin/env python3
"""Holds one thread of a process still for a while, the others running: the way to make one loop fall
behind while the rest of the process goes on (SIGSTOP would stop every thread).

    hold_thread.py PID NAME SECONDS

Finds the thread of PID whose name (/proc/PID/task/TID/comm) is NAME, stops it with ptrace
(PTRACE_SEIZE, then PTRACE_INTERRUPT, waited for), prints "held TID", keeps it stopped for SECONDS, lets
it go (PTRACE_DETACH) and prints "released". A thread in a system call goes on with it afterwards (an
interrupted wait is restarted or says EINTR). Exits 1 with a line on stderr when the thread is not
found or ptrace refuses (another tracer, no permission).
"""
import ctypes
import os
import sys
import time

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000  # __WALL: wait for a thread that is not a child

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(request, tid):
    if libc.ptrace(request, tid, None, None) != 0:
        error = ctypes.get_errno()
        sys.exit(f"hold_thread: ptrace {request:#x} of {tid}: {os.strerror(error)}")


def main():
    pid, name, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    tids = [t for t in os.listdir(f"/proc/{pid}/task")
            if open(f"/proc/{pid}/task/{t}/comm").read().strip() == name]
    if len(tids) != 1:
        sys.exit(f"hold_thread: {len(tids)} threads of {pid} named {name!r}")
    tid = int(tids[0])
    ptrace(PTRACE_SEIZE, tid)
    ptrace(PTRACE_INTERRUPT, tid)
    os.waitpid(tid, WALL)
    print(f"held {tid}", flush=True)
    time.sleep(seconds)
    ptrace(PTRACE_DETACH, tid)
    print("released", flush=True)


if __name__ == "__main__":
    main()
