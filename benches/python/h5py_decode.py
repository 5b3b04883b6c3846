"""The peer of benches/src/bin/stem_decode_bench.rs: h5py + hdf5plugin decoding 4D-STEM data files.

    python h5py_decode.py REPS FILE...

Times, best and median of REPS runs after a warm-up, one thread:
- "ds": `f["/entry/data/data"][...]` for every file (HDF5's chunk reader, hdf5plugin's bitshuffle filter);
- "direct_chunk": per chunk `read_direct_chunk` + `bitshuffle.decompress_lz4` (only when the
  `bitshuffle` package is importable; null otherwise).
Prints one JSON object: seconds, decoded bytes, the sum of all pixels (checked against ours), versions.
"""
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # bitshuffle and hdf5plugin may use OpenMP: one thread, like ours

import h5py  # noqa: E402
import hdf5plugin  # noqa: E402,F401  (registers filters 32008 and 32004)
import numpy as np  # noqa: E402

DATA = "/entry/data/data"


def best_median(reps, f):
    """Best and median seconds of reps runs of f(False) after one warm-up f(True), whose result
    (the pixel sum; the timed runs skip summing, as the Rust side does) is returned."""
    result = f(True)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(False)
        times.append(time.perf_counter() - t0)
    times.sort()
    return {"best": times[0], "median": times[len(times) // 2]}, result


def read_all(files, check):
    total = 0
    for name in files:
        with h5py.File(name, "r") as f:
            a = f[DATA][...]
            if check:
                total += int(a.sum(dtype=np.uint64))
    return total


def direct_chunks(files, bitshuffle, check):
    total = 0
    for name in files:
        with h5py.File(name, "r") as f:
            ds = f[DATA]
            frame_shape, dtype = ds.shape[1:], ds.dtype
            for i in range(ds.shape[0]):
                _, raw = ds.id.read_direct_chunk((i, 0, 0))
                buf = np.frombuffer(raw, dtype=np.uint8)
                # The 12-byte header (u64 BE total, u32 BE block bytes) belongs to the HDF5 filter.
                block = int.from_bytes(raw[8:12], "big") // dtype.itemsize
                out = bitshuffle.decompress_lz4(buf[12:], frame_shape, dtype, block)
                if check:
                    total += int(out.sum(dtype=np.uint64))
    return total


def main():
    reps, files = int(sys.argv[1]), sys.argv[2:]
    decoded = 0
    for name in files:
        with h5py.File(name, "r") as f:
            decoded += f[DATA].size * f[DATA].dtype.itemsize
    ds_times, total = best_median(reps, lambda check: read_all(files, check))
    out = {"h5py": h5py.__version__, "hdf5plugin": hdf5plugin.version, "decoded_bytes": decoded, "sum": total,
           "ds": ds_times, "direct_chunk": None}
    try:
        import bitshuffle
    except ImportError:
        bitshuffle = None
    if bitshuffle is not None:
        direct_times, direct_total = best_median(reps, lambda check: direct_chunks(files, bitshuffle, check))
        if direct_total == total:
            out["direct_chunk"] = direct_times
        else:
            print(f"direct_chunk sum {direct_total} != ds sum {total}", file=sys.stderr)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
