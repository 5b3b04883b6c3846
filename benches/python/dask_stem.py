"""4D-STEM on Dask.distributed (issue 23): dev_medium reduced 16 times on 1 and 2 worker processes,
beside the single-process CLI doing the same 16 reductions.

    python dask_stem.py CLI [--reps 16] [--rounds 3] [--fixtures DIR]

CLI is the release `scatterlab` binary. Every reduction is dev_medium's full 16,384 frames with the
geometry of dev_medium_params.json passed explicitly (centre, BF radius, ADF radii) so it reads the
data once, to the CLI with the same flags.

"×16" = 16 acquisitions' worth of work: 16 calls of `scatterlab.dask.reduce` (each splits the
frames into its default 2 ranges per worker thread, gathers the partial products and merges them
on the client), in two schedules:
- sequential: one call after another (the workers idle while each merge runs on the client);
- concurrent: 16 calls at once from 16 client threads (a batch of acquisitions: the workers keep
  busy while earlier merges run).
Rows also: the CLI run 16 times (one process per reduction, .npy files written to a temporary
folder) and `scatterlab.stem.reduce` 16 times in this process (the same Rust code without Dask).

Each row: a warm-up reduction, then ROUNDS rounds of REPS reductions; the round with the median wall
time is printed (the ratios' range over the rounds beside it). Columns: wall s, frames/s, decoded
GB/s (16,384 × 96 × 96 × 2 B = 302 MB per reduction), and CPU s (user + system):
- tasks: the worker threads that run the tasks (the default executor's threads, which run nothing
  else and persist between tasks; psutil per thread, read with `client.run` before and after each
  round): the sum of the task CPU times. The tasks' compute intervals from `get_task_stream`
  (`startstops`) are printed beside it; they are wall time, so under load they also count the time
  the OS gave the core to someone else;
- workers: the whole worker processes (tasks + the workers' communication, (de)serialisation,
  heartbeats);
- engine: workers + nannies + this process (scheduler, client, the merges and DPC/iDPC on the
  client): everything the Dask run cost.
The CLI's CPU is its user + system time (wait4), reading, reducing, DPC/iDPC and writing the .npy
files. Ratios: CPU / the CLI's CPU over the same 16 reductions (round by round); the goal (issue
23) is tasks / CLI ≤ 1.15. A Dask result is checked against the
CLI's `.npy` files (integer products exact) before timing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402
import psutil  # noqa: E402  (a dependency of distributed)
from distributed import Client, LocalCluster, get_task_stream  # noqa: E402

import scatterlab.dask  # noqa: E402
import scatterlab.stem as stem  # noqa: E402

INTEGER = ("sum_dp", "max_dp", "total", "bf", "abf", "adf", "df")


def cpu_of(pids):
    """User + system seconds of the live processes ``pids`` (their own, not their children's)."""
    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def executor_cpu(dask_worker):
    """User + system seconds of this worker's task threads (its default executor's, which run
    nothing but tasks and persist between them): run on each worker with ``client.run``."""
    tids = {t.native_id for t in dask_worker.executors["default"]._threads}
    return sum(t.user_time + t.system_time for t in psutil.Process().threads() if t.id in tids)


def native_path():
    """The file of the loaded extension (bench.sh puts a release wheel first on PYTHONPATH)."""
    import scatterlab._native

    return scatterlab._native.__file__


def engine_pids():
    """This process and every process below it (nannies, workers)."""
    me = psutil.Process()
    return [me.pid] + [p.pid for p in me.children(recursive=True)]


def cli_once(cli, master, flags, out):
    """One CLI reduction: (wall s, user + system CPU s) from wait4."""
    t0 = time.perf_counter()
    p = subprocess.Popen([cli, "--quiet", "stem", "reduce", master, *flags, "--out", out], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"dask_stem: {cli} stem reduce failed (exit {p.returncode})")
    return wall, usage.ru_utime + usage.ru_stime


def bench_cli(cli, master, flags, reps, rounds, out):
    cli_once(cli, master, flags, out)  # warm-up (page cache)
    results = []
    for _ in range(rounds):
        wall = cpu = 0.0
        for _ in range(reps):
            w, c = cli_once(cli, master, flags, out)
            wall, cpu = wall + w, cpu + c
        results.append({"wall": wall, "cpu": cpu})
    return results


def bench_inprocess(master, geometry, reps, rounds):
    stem.reduce(master, **geometry)
    results = []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(reps):
            stem.reduce(master, **geometry)
        results.append({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0})
    return results


def bench_dask(client, master, geometry, reps, rounds, concurrent):
    worker_pids = list(client.run(os.getpid).values())
    scatterlab.dask.reduce(master, client, **geometry)  # warm-up: imports and page cache on every worker
    results = []
    for _ in range(rounds):
        pids = engine_pids()
        x0, w0, e0 = sum(client.run(executor_cpu).values()), cpu_of(worker_pids), cpu_of(pids)
        with get_task_stream(client) as ts:
            t0 = time.perf_counter()
            if concurrent:
                with ThreadPoolExecutor(reps) as pool:
                    list(pool.map(lambda _: scatterlab.dask.reduce(master, client, **geometry), range(reps)))
            else:
                for _ in range(reps):
                    scatterlab.dask.reduce(master, client, **geometry)
            wall = time.perf_counter() - t0
        x1, w1, e1 = sum(client.run(executor_cpu).values()), cpu_of(worker_pids), cpu_of(pids)
        task_wall = sum(s["stop"] - s["start"] for t in ts.data for s in t["startstops"] if s["action"] == "compute")
        busy = {t["worker"] for t in ts.data}
        results.append({"wall": wall, "tasks": x1 - x0, "task_wall": task_wall, "workers": w1 - w0, "engine": e1 - e0, "n_tasks": len(ts.data), "busy": len(busy)})
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cli")
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    default_fixtures = os.environ.get("SCATTERLAB_FIXTURES") or Path(__file__).resolve().parents[3] / "shared" / "fixtures"
    ap.add_argument("--fixtures", default=str(default_fixtures))
    a = ap.parse_args()
    if not os.access(a.cli, os.X_OK):
        sys.exit(f"dask_stem: no CLI binary at {a.cli} (cargo build --release -p scatterlab-cli)")

    folder = Path(a.fixtures) / "stem"
    master = str(folder / "dev_medium_master.h5")
    params = json.loads((folder / "dev_medium_params.json").read_text())
    det = params["references"]["virtual_detectors"]
    center, bf, adf = tuple(det["bf"]["center_row_col"]), det["bf"]["outer_px"], (det["adf"]["inner_px"], det["adf"]["outer_px"])
    geometry = {"center": center, "bf": bf, "adf": adf}
    flags = ["--center", f"{center[0]},{center[1]}", "--bf", str(bf), "--adf", f"{adf[0]},{adf[1]}"]
    meta = stem.info(master)
    frames = meta["n_frames"]
    size = {"u8": 1, "u16": 2, "u32": 4}[meta["dtype"]]
    gbytes = frames * meta["det"][0] * meta["det"][1] * size / 1e9
    print(f"4D-STEM on Dask.distributed: dev_medium ({frames} frames, {gbytes * 1e3:.0f} MB decoded per reduction) × {a.reps}, "
          f"median of {a.rounds} rounds; {os.cpu_count()} CPUs, load average {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"geometry: center {center}, bf {bf}, adf {adf}; CLI {a.cli}; extension {native_path()}")

    rows = []
    with tempfile.TemporaryDirectory() as out:
        cli = bench_cli(a.cli, master, flags, a.reps, a.rounds, out)
        want = {name: np.load(Path(out) / f"{name}.npy") for name in INTEGER}
        rows.append(("CLI, one process per reduction", cli))
        rows.append(("scatterlab.stem.reduce in process", bench_inprocess(master, geometry, a.reps, a.rounds)))
        for n in (1, 2):
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
                if set(client.run(native_path).values()) != {native_path()}:
                    sys.exit(f"dask_stem: the workers load another extension: {client.run(native_path)}")
                got = scatterlab.dask.reduce(master, client, **geometry)
                bad = [name for name in INTEGER if not np.array_equal(got[name], want[name])]
                if bad:
                    sys.exit(f"dask_stem: {n} workers: {', '.join(bad)} differ from the CLI's")
                for concurrent in (False, True):
                    label = f"Dask {n} worker{'s' if n > 1 else ''}, {'concurrent' if concurrent else 'sequential'}"
                    rows.append((label, bench_dask(client, master, geometry, a.reps, a.rounds, concurrent)))
    cli_cpu = statistics.median(r["cpu"] for r in cli)

    def ratio(rs, key):
        """Median (min–max) over the rounds of CPU / the CLI's CPU in the same-numbered round."""
        vals = sorted(r[key] / c["cpu"] for r, c in zip(rs, cli))
        return f"{statistics.median(vals):.2f} ({vals[0]:.2f}–{vals[-1]:.2f})"

    print(f"{'run':<36} {'wall s':>7} {'frames/s':>9} {'GB/s':>5} {'CPU s: tasks':>12} {'workers':>7} {'engine':>6}   "
          f"{'tasks/CLI':<16} {'workers/CLI':<16} {'engine/CLI':<16}")
    summary = {"load": os.getloadavg(), "cli_cpu_s": cli_cpu, "reps": a.reps, "rounds": a.rounds}
    for label, rs in rows:
        mid = sorted(rs, key=lambda r: r["wall"])[len(rs) // 2]
        fps, gbs = a.reps * frames / mid["wall"], a.reps * gbytes / mid["wall"]
        head = f"{label:<36} {mid['wall']:>7.2f} {fps:>9.0f} {gbs:>5.2f} "
        if "tasks" in mid:
            print(head + f"{mid['tasks']:>12.2f} {mid['workers']:>7.2f} {mid['engine']:>6.2f}   "
                  f"{ratio(rs, 'tasks'):<16} {ratio(rs, 'workers'):<16} {ratio(rs, 'engine'):<16}")
            print(f"{'':<36} {mid['n_tasks']} tasks on {mid['busy']} worker(s); their compute intervals {mid['task_wall']:.2f} s wall")
        else:
            print(head + f"{mid['cpu']:>12.2f} {'':>7} {'':>6}   {ratio(rs, 'cpu'):<16}")
        summary[label] = {"wall_s": mid["wall"], "frames_per_s": fps, "gb_per_s": gbs, **{k: v for k, v in mid.items() if k != "wall"}}
    print(json.dumps({"dask_stem": summary}))


if __name__ == "__main__":
    main()
