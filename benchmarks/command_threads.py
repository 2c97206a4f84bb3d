"""Where a command's CPU goes, thread by thread: ``python -m streamcodec ARGS`` in fresh processes.

    python benchmarks/command_threads.py --runs 3 --jobs 1,2 -- \\
        tokenize-corpus -q --restart docs.jsonl -o out

Each run is a fresh process (bytecode cached, after a first run not counted; the job counts
alternated, ``--jobs J`` appended to ARGS) that runs the command as ``python -m streamcodec``
does, with two hooks: each thread's user and system CPU read (``RUSAGE_THREAD``) as it ends, the
main thread's and the process's at the command's exit. A line a run: wall (from the child's first
line to the command's exit: not the interpreter's own start nor the kernel's tear-down) and when
its first thread started (the corpus tool's run: the start is over), the process's CPU, its minor
faults, huge pages faulted (the machine's ``thp_fault_alloc``: other processes' count too), its
anonymous and huge-page memory at exit, then user + system ms by thread (the corpus tool's: main,
reader, hasher, writer, the workers summed). Then the medians. Linux only (``RUSAGE_THREAD``,
``/proc``).

Why by thread: ``tokenize-corpus --jobs 1`` does all its work on the main thread, ``--jobs 2`` on
two workers beside a reader, a hasher and a writer; the CPU each adds, and the system time (on a
VM that gives free memory back to its host, each huge page faulted in may be a host fault too),
say where a second job's time goes.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import threading
import time
from typing import Any

ROLES = ("main", "reader", "hasher", "writer", "worker")


def _vmstat(key: str) -> int:
    """A counter of /proc/vmstat (0 where the kernel has none: no transparent huge pages)."""
    with open("/proc/vmstat") as f:
        return next((int(line.split()[1]) for line in f if line.startswith(key + " ")), 0)


def _usage(who: int) -> tuple[float, float, int]:
    r = resource.getrusage(who)
    return r.ru_utime * 1e3, r.ru_stime * 1e3, r.ru_minflt


def child(report: str, argv: list[str]) -> None:
    """Run the command here, hooked; its figures written to ``report`` (JSON) at its exit."""
    import runpy

    start, huge = time.perf_counter(), _vmstat("thp_fault_alloc")
    threads: list[tuple[str, tuple[float, float, int]]] = []
    first: list[float] = []
    bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def measured(thread: threading.Thread) -> None:
        first.append(time.perf_counter())  # the run's threads start once the command is ready
        try:
            bootstrap(thread)
        finally:
            threads.append((thread.name, _usage(resource.RUSAGE_THREAD)))

    def exit_reported(status: int) -> None:  # the command ends with os._exit (no atexit after)
        with open("/proc/self/smaps_rollup") as f:
            sizes = {line.split(":")[0]: int(line.split()[1]) for line in f if "kB" in line}
        user, system, faults = _usage(resource.RUSAGE_SELF)
        roles: dict[str, list[float]] = {}
        for name, (u, s, _) in [("main", _usage(resource.RUSAGE_THREAD)), *threads]:
            role = name.removeprefix("streamcodec-").split("-")[0]
            totals = roles.setdefault(role if role in ROLES else "other", [0.0, 0.0])
            totals[0] += u
            totals[1] += s
        figures = {
            "wall": (time.perf_counter() - start) * 1e3, "user": user, "system": system,
            "start": ((first[0] if first else math.nan) - start) * 1e3,
            "faults": faults, "huge_faulted": _vmstat("thp_fault_alloc") - huge,
            "anon_mb": sizes["Anonymous"] / 1024, "huge_mb": sizes["AnonHugePages"] / 1024,
            "status": status, "roles": roles,
        }  # fmt: skip
        with open(report, "w") as f:
            json.dump(figures, f)
        exit_now(status)

    threading.Thread._bootstrap_inner = measured  # type: ignore[attr-defined]
    exit_now = os._exit
    os._exit = exit_reported  # type: ignore[assignment]
    sys.argv = ["streamcodec", *argv]
    runpy.run_module("streamcodec", run_name="__main__", alter_sys=True)


def run(argv: list[str], folder: str) -> dict[str, Any]:
    import subprocess

    report = os.path.join(folder, "report.json")
    # bytecode cached, as an installed package's (PYTHONDONTWRITEBYTECODE=1 compiles every start)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
    command = [sys.executable, __file__, "--child", report, "--", *argv]
    done = subprocess.run(command, env=env, check=False)
    with open(report) as f:
        figures: dict[str, Any] = json.load(f)
    if done.returncode != 0 or figures["status"] != 0:
        raise SystemExit(f"{' '.join(argv)}: exit status {done.returncode}")
    return figures


def line(jobs: int, f: dict[str, Any]) -> str:
    roles = " ".join(f"{r} {u:.0f}+{s:.0f}" for r, (u, s) in sorted(f["roles"].items()))
    return (f"jobs {jobs}: wall {f['wall']:.0f} ms (its first thread at {f['start']:.0f}), "
            f"CPU {f['user']:.0f}+{f['system']:.0f} (user+system), faults {f['faults']}, "
            f"huge pages faulted {f['huge_faulted']}, "
            f"at exit {f['anon_mb']:.0f} MB anonymous ({f['huge_mb']:.0f} in huge pages) "
            f"| {roles}")  # fmt: skip


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[4:])
        return
    import argparse
    import statistics
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each job count")
    parser.add_argument("--jobs", default="1,2", help="job counts, comma-separated")
    parser.add_argument("argv", nargs="+", help="the command's arguments (after --)")
    args = parser.parse_args()
    counts = [int(j) for j in args.jobs.split(",")]
    results: dict[int, list[dict[str, Any]]] = {j: [] for j in counts}
    with tempfile.TemporaryDirectory() as folder:
        run([*args.argv, "--jobs", str(counts[0])], folder)  # not counted: writes the bytecode
        for _ in range(args.runs):
            for jobs in counts:
                results[jobs].append(run([*args.argv, "--jobs", str(jobs)], folder))
                print(line(jobs, results[jobs][-1]), flush=True)
    for jobs, runs in results.items():
        timed = ("wall", "start", "user", "system")
        median = {k: statistics.median(r[k] for r in runs) for k in timed}
        names = {role for r in runs for role in r["roles"]}
        roles = {role: [statistics.median(r["roles"].get(role, [0, 0])[i] for r in runs)
                        for i in (0, 1)] for role in names}  # fmt: skip
        each = " ".join(f"{r} {u:.0f}+{s:.0f}" for r, (u, s) in sorted(roles.items()))
        print(f"median, jobs {jobs}: wall {median['wall']:.0f} ms (its first thread at "
              f"{median['start']:.0f}), CPU {median['user']:.0f}"
              f"+{median['system']:.0f} | {each}")  # fmt: skip


if __name__ == "__main__":
    main()
