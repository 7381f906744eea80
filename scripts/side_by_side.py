#!/usr/bin/env python3
"""Times several whole-process commands side by side, interleaved: each round runs every
command once, in an order rotated from round to round, so that other work on the machine
lands on all of them alike. Prints one line per command: name, median wall ms, min ms,
max ms, peak resident memory in MiB (the largest of its runs), median CPU ms (user +
system, from wait4: what the process itself spent, which waiting for a core on a busy
machine does not inflate), as tab-separated text.

Usage: side_by_side.py RUNS WARMUP NAME COMMAND [NAME COMMAND ...]
COMMAND is split like a shell would (shlex) and run without a shell; its stdout and
stderr are discarded. A command that fails stops the benchmark (exit 1): a broken
benchmark is not a slow one. Must never: write anything itself.
"""
import os
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        sys.exit(f"error: `{shlex.join(argv)}` exited with {proc.returncode}")
    cpu = (usage.ru_utime + usage.ru_stime) * 1000.0
    return elapsed * 1000.0, usage.ru_maxrss / 1024.0, cpu


def main():
    args = sys.argv[1:]
    if len(args) < 4 or len(args) % 2:
        sys.exit(__doc__)
    runs, warmup = int(args[0]), int(args[1])
    commands = [(args[i], shlex.split(args[i + 1])) for i in range(2, len(args), 2)]
    times = {name: [] for name, _ in commands}
    peaks = {name: 0.0 for name, _ in commands}
    cpus = {name: [] for name, _ in commands}
    for round_ in range(warmup + runs):
        shift = round_ % len(commands)
        for name, argv in commands[shift:] + commands[:shift]:
            ms, mib, cpu = run_once(argv)
            if round_ >= warmup:
                times[name].append(ms)
                cpus[name].append(cpu)
                peaks[name] = max(peaks[name], mib)
        print(f"round {round_ + 1}/{warmup + runs} done", file=sys.stderr)
    for name, _ in commands:
        t = times[name]
        cpu = statistics.median(cpus[name])
        print(f"{name}\t{statistics.median(t):.1f}\t{min(t):.1f}\t{max(t):.1f}\t{peaks[name]:.1f}\t{cpu:.1f}")


if __name__ == "__main__":
    main()
