#!/usr/bin/env python3
"""Writes hot-functions.txt, the order of functions for touchbridge's release link (Package.swift passes it
to lld as --symbol-ordering-file): the functions that run while touchbridge serves, placed together at the
start of .text, so that the code resident while serving is a few contiguous megabytes instead of 64 KiB
around every function touched (issue 31's peak RSS row in `make bench`).

How: the release build's touchbridge (`make bench` builds it, every module with a section per function)
runs the bench's cost scenario (Benchmarks/run.py's cost(): UDP, TUIO and a web page's WebSocket, then idle)
twice under valgrind's callgrind; every instruction address it executed in the binary, mapped to the function that
contains it (nm), gives the list. Paths the trace misses because valgrind runs them slowly (the Bridge's timers
fire differently) are added from hot-patterns.txt (regular expressions on mangled names).

The order: the most run while serving first (the second trace's counts, from when the web page connects), so
that the path from a datagram to its X request lies in a few pages (issue 31's closed-loop and CPU rows: that
path starts with cold caches after every sleep); the functions of the Swift runtime's archives that share a
section with others last, since lld moves such a section as one block. Membership is what keeps memory down
(all of it is resident); the order is for speed.

A stale list costs memory, never correctness: names no longer in the binary are ignored by lld
(--no-warn-symbol-ordering), and functions not listed are placed after the listed ones. `make bench`'s
peak-RSS row says how many of the list's names the binary still has. Run this again after changes that
rename or add what runs while serving:

    make bench          # or the Makefile's RELEASE_BUILD
    scripts/release-link/hot-functions.py .build/release
    rm .build/release/touchbridge && make bench     # SwiftPM relinks on changed objects, not on this list

Needs valgrind (Debian: valgrind; callgrind_control), binutils (nm, objcopy, objdump), swiftc on PATH (its
static archives), Xvfb and the bench's other products in the directory.
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


def shared_section_functions():
    """The functions of the Swift toolchain's static archives (swift_static/linux, linked into the release
    binary) that lie in a section with others (a plain .text), by name."""
    swiftc = shutil.which("swiftc")
    if not swiftc:
        raise SystemExit("hot-functions: swiftc is not on PATH")
    archives = glob.glob(os.path.join(os.path.dirname(os.path.realpath(swiftc)), "..", "lib", "swift_static", "linux", "*.a"))
    names = set()
    for archive in archives:
        out = subprocess.run(["objdump", "-t", archive], capture_output=True, text=True).stdout
        for line in out.splitlines():
            # address, flags, section, size, name: "0000000000009250 l     F .text	0000000000000019 $ss..."
            if " F .text\t" in line:
                names.add(line.split()[-1])
    if not names:
        raise SystemExit("hot-functions: no function found in the Swift toolchain's static archives")
    return names


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
        def wrap(trace):
            with open(os.path.join(traced, "touchbridge"), "w") as f:
                f.write(f"""#!/bin/sh
if [ "$1" = serve ]; then
  exec valgrind --tool=callgrind --callgrind-out-file={work}/{trace}.%p --dump-instr=yes --compress-strings=no \\
    --compress-pos=no "{real}" "$@"
fi
exec "{real}" "$@"
""")
            os.chmod(os.path.join(traced, "touchbridge"), 0o755)
        # The bench's own scenario, imported rather than copied; its daemon gets time to write the trace.
        sys.argv = ["run.py", traced]
        os.environ["BENCH_COST_SECONDS"] = "5"
        sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))  # run.py's own imports (barrier, view_page)
        spec = importlib.util.spec_from_file_location("bench", os.path.join(ROOT, "Benchmarks", "run.py"))
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)

        def stop(daemon):
            daemon.proc.terminate()
            daemon.proc.wait(120)
        bench.Daemon.stop = stop
        # Twice: which paths run depends a little on timing; the list is both runs' functions. In the second,
        # the counts start again (callgrind_control --zero) when the scenario's web page connects: from then
        # on the daemon serves (the page, then the stream), and those counts order the list.
        connect = bench.WebSocketClient.__init__

        def zero_then_connect(client, *args):
            if zeroing:
                subprocess.run(["callgrind_control", "--zero"], check=True, stdout=subprocess.DEVNULL)
            connect(client, *args)
        bench.WebSocketClient.__init__ = zero_then_connect
        for trace, zeroing in (("all", False), ("serving", True)):
            wrap(trace)
            xvfb = bench.Xvfb()
            try:
                bench.cost(xvfb.display)
            finally:
                xvfb.stop()
        addrs, names = text_symbols(real)
        # How many times each instruction ran (a cost line's Ir, the positions being "instr line"); the
        # line after a "calls=" line is the call's inclusive cost, not the instruction's own count.
        executed, counted = {}, {}
        for trace in glob.glob(os.path.join(work, "all.*")) + glob.glob(os.path.join(work, "serving.*")):
            into = counted if os.path.basename(trace).startswith("serving.") else executed
            ours = call_cost = False
            with open(trace, errors="replace") as f:
                for line in f:
                    if line.startswith("ob="):
                        ours = line.rstrip().endswith("/touchbridge.real")
                    elif line.startswith("calls="):
                        call_cost = True
                    elif line.startswith("0x"):
                        if ours and not call_cost:
                            p = line.split()
                            a = int(p[0], 16)
                            into[a] = into.get(a, 0) + (int(p[2]) if len(p) > 2 else 1)
                        call_cost = False
        if not executed or not counted:
            raise SystemExit("hot-functions: a trace has no instruction of touchbridge")
        # Every name of the function that holds each address (aliases share it): which of them lld finds in
        # which object file differs (local copies, weak ones).
        starts = sorted(set(addrs))
        at = {}
        for a, n in zip(addrs, names):
            at.setdefault(a, []).append(n)
        # How often each function runs while serving: the count of its most run instruction (0 when it ran
        # only at start-up). A loop that turns once per datagram counts as one run a datagram.
        runs = {}
        for a in set(executed) | set(counted):
            i = bisect.bisect_right(starts, a) - 1
            if i >= 0:
                runs[starts[i]] = max(runs.get(starts[i], 0), counted.get(a, 0))
        hot = {}
        for start, count in runs.items():
            for n in at[start]:
                hot[n] = count
        with open(os.path.join(HERE, "hot-patterns.txt")) as f:
            patterns = [re.compile(l.strip()) for l in f if l.strip() and not l.startswith("#")]
        for n in names:
            if n not in hot and any(p.search(n) for p in patterns):
                hot[n] = 0
        # The most often run first: what runs for every packet lies together in a few pages (fewer
        # instruction TLB and cache misses on the way from a datagram to its X request, which start cold
        # after every sleep), then what runs less. By powers of two of the runs, and by name within one:
        # a new trace moves a function only when its count changes twofold. Last, the functions that share
        # one section with many others (the Swift runtime's archives are not built a section per
        # function): lld moves such a section as one block, placed where its first listed function is,
        # and a megabyte of the standard library would otherwise come between two hot functions.
        shared = shared_section_functions()
        order = sorted(hot, key=lambda n: (n in shared, -hot[n].bit_length(), n))
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
