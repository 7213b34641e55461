#!/usr/bin/env python3
"""Writes hot-functions.txt, the order of functions for touchbridge's release link (Package.swift passes it
to lld as --symbol-ordering-file): the functions that run while touchbridge serves, placed together at the
start of .text, so that the code resident while serving is a few contiguous megabytes instead of 64 KiB
around every function touched (issue 31's peak RSS row in `make bench`).

How: the release build's touchbridge (`make bench` builds it, every module with a section per function)
runs the bench's cost scenario (Benchmarks/run.py's cost(): UDP, TUIO and a web page's WebSocket, then idle)
twice under valgrind's callgrind; every instruction address it executed in the binary, mapped to the function that
contains it (nm), gives the list (sorted by name; the order within it hardly matters: it is all resident). Paths the trace misses because valgrind runs them
slowly (the Bridge's timers fire differently) are added from hot-patterns.txt (regular expressions on
mangled names).

A stale list costs memory, never correctness: names no longer in the binary are ignored by lld
(--no-warn-symbol-ordering), and functions not listed are placed after the listed ones. `make bench`'s
peak-RSS row says how many of the list's names the binary still has. Run this again after changes that
rename or add what runs while serving:

    make bench          # or the Makefile's RELEASE_BUILD
    scripts/release-link/hot-functions.py .build/release
    rm .build/release/touchbridge && make bench     # SwiftPM relinks on changed objects, not on this list

Needs valgrind (Debian: valgrind), binutils (nm, objcopy), Xvfb and the bench's other products in the directory.
"""
import bisect, glob, importlib.util, os, re, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def text_symbols(binary):
    out = subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tTwW":
            addrs.append(int(p[0], 16)); names.append(p[2])
    return addrs, names


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="touchbridge-hot-")
    try:
        traced = os.path.join(work, "bin")
        os.mkdir(traced)
        for name in ("xobserve", "touchbridge-bench", "xtest-reference", "ideal-bridge"):
            os.symlink(os.path.join(bin_dir, name), os.path.join(traced, name))
        real = os.path.join(traced, "touchbridge.real")
        # valgrind 3.19 (Debian 12) cannot read the DWARF 5 that swiftc writes: trace a copy without it.
        subprocess.run(["objcopy", "--strip-debug", os.path.join(bin_dir, "touchbridge"), real], check=True)
        with open(os.path.join(traced, "touchbridge"), "w") as f:
            f.write(f"""#!/bin/sh
if [ "$1" = serve ]; then
  exec valgrind --tool=callgrind --callgrind-out-file={work}/cg.%p --dump-instr=yes --compress-strings=no \\
    --compress-pos=no "{real}" "$@"
fi
exec "{real}" "$@"
""")
        os.chmod(os.path.join(traced, "touchbridge"), 0o755)
        # The bench's own scenario, imported rather than copied; its daemon gets time to write the trace.
        sys.argv = ["run.py", traced]
        os.environ["BENCH_COST_SECONDS"] = "5"
        spec = importlib.util.spec_from_file_location("bench", os.path.join(ROOT, "Benchmarks", "run.py"))
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)

        def stop(daemon):
            daemon.proc.terminate()
            daemon.proc.wait(120)
        bench.Daemon.stop = stop
        # Twice: which paths run depends a little on timing; the list is both runs' functions.
        for _ in range(2):
            xvfb = bench.Xvfb()
            try:
                bench.cost(xvfb.display)
            finally:
                xvfb.stop()
        addrs, names = text_symbols(real)
        executed = set()
        for trace in glob.glob(os.path.join(work, "cg.*")):
            ours = False
            with open(trace, errors="replace") as f:
                for line in f:
                    if line.startswith("ob="):
                        ours = line.rstrip().endswith("/touchbridge.real")
                    elif ours and line.startswith("0x"):
                        executed.add(int(line.split()[0], 16))
        if not executed:
            raise SystemExit("hot-functions: the trace has no instruction of touchbridge")
        # Every name of the function that holds each address (aliases share it): which of them lld finds in
        # which object file differs (local copies, weak ones).
        starts = sorted(set(addrs))
        at = {}
        for a, n in zip(addrs, names):
            at.setdefault(a, []).append(n)
        hot = set()
        for a in executed:
            i = bisect.bisect_right(starts, a) - 1
            if i >= 0:
                hot.update(at[starts[i]])
        with open(os.path.join(HERE, "hot-patterns.txt")) as f:
            patterns = [re.compile(l.strip()) for l in f if l.strip() and not l.startswith("#")]
        hot.update(n for n in names if any(p.search(n) for p in patterns))
        order = sorted(hot)  # by name: a new trace changes the file only where the functions changed
        with open(os.path.join(HERE, "hot-functions.txt"), "w") as f:
            f.write("# Generated by scripts/release-link/hot-functions.py from a trace of `make bench`'s cost scenario;\n"
                    "# lld's --symbol-ordering-file for touchbridge's release link (Package.swift). Not edited by hand.\n")
            f.write("".join(n + "\n" for n in order))
        print(f"hot-functions: {len(order)} functions ({len(executed)} instructions traced); the build does not see the list "
              f"change: relink with rm {os.path.join(bin_dir, 'touchbridge')} and a release build")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
