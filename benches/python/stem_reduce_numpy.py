"""The peers of benches/src/bin/stem_reduce_bench.rs: the fused pass's products with numpy, or py4DSTEM.

    python stem_reduce_numpy.py CONFIG.json REPS numpy|py4dstem

CONFIG (written by the Rust side): the data files in frame order, scan and detector shape, the
flat indices of the bad pixels (zeroed, as MaskPolicy::ZeroMasked does) and of each virtual
detector's pixels (the Rust pass's exact masks, so every integer product must agree).
The data are decoded once with h5py + hdf5plugin (not timed); then best and median of REPS runs
after a warm-up, one thread (BLAS/OpenMP pinned to 1), of
- numpy: per chunk of frames, one float64 tensordot against [masks…, ones, row index, col index]
  (detectors, total and both CoM moments; exact: every value < 2^53), sum/max patterns with
  `sum(dtype=uint64)` / `max`, then CoM = moment / total (0 for an empty frame);
- py4dstem: its public calls — `get_virtual_image(mode="mask")` per detector, `get_dp_mean`,
  `get_dp_max` — and its DPC CoM (`_calculate_intensities_center_of_mass`, vectorised float32 as
  `DPC.preprocess` calls it, the intensities converted to float32 as preprocess does).
Prints one JSON object: seconds, checksums (compared exactly by the Rust side), versions.
"""
import json
import os
import sys
import time
import types

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")  # one thread, like ours

import h5py  # noqa: E402
import hdf5plugin  # noqa: E402,F401  (registers the bitshuffle filter)
import numpy as np  # noqa: E402

CHUNK = 1024  # frames per float64 block (75 MB), so the conversion stays in cache-sized pieces


def best_median(reps, f):
    result = f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    times.sort()
    return {"best": times[0], "median": times[len(times) // 2]}, result


def load(cfg):
    parts = []
    for name in cfg["files"]:
        with h5py.File(name, "r") as f:
            parts.append(f["/entry/data/data"][...])
    data = np.concatenate(parts)
    flat = data.reshape(data.shape[0], -1)
    flat[:, np.asarray(cfg["bad"], dtype=np.int64)] = 0
    return data


def weights(cfg, px):
    names = list(cfg["masks"])
    rows, cols = cfg["det"]
    w = np.zeros((px, len(names) + 3))
    for k, name in enumerate(names):
        w[np.asarray(cfg["masks"][name], dtype=np.int64), k] = 1.0
    w[:, len(names)] = 1.0
    w[:, len(names) + 1] = np.repeat(np.arange(rows, dtype=np.float64), cols)
    w[:, len(names) + 2] = np.tile(np.arange(cols, dtype=np.float64), rows)
    return names, w


def reduce_numpy(data, names, w):
    n = data.shape[0]
    flat = data.reshape(n, -1)
    out = np.empty((n, w.shape[1]))
    sum_dp = np.zeros(flat.shape[1], dtype=np.uint64)
    max_dp = np.zeros(flat.shape[1], dtype=flat.dtype)
    for i in range(0, n, CHUNK):
        block = flat[i:i + CHUNK]
        out[i:i + CHUNK] = np.tensordot(block.astype(np.float64), w, axes=1)
        sum_dp += block.sum(axis=0, dtype=np.uint64)
        np.maximum(max_dp, block.max(axis=0), out=max_dp)
    nd = len(names)
    total = out[:, nd]
    safe = np.where(total > 0, total, 1.0)
    com = [np.where(total > 0, out[:, nd + 1 + a] / safe, 0.0) for a in (0, 1)]
    return {"detectors": {k: out[:, i] for i, k in enumerate(names)}, "total": total, "sum_dp": sum_dp, "max_dp": max_dp, "com": com}


def reduce_py4dstem(data, cfg, names):
    import py4DSTEM
    from py4DSTEM.process.phase.phase_base_class import PhaseReconstruction

    rows, cols = cfg["det"]
    masks = {}
    for name in names:
        m = np.zeros(rows * cols, dtype=bool)
        m[np.asarray(cfg["masks"][name], dtype=np.int64)] = True
        masks[name] = m.reshape(rows, cols)
    dc = py4DSTEM.DataCube(data=data.reshape(cfg["scan"][0], cfg["scan"][1], rows, cols))
    # What DPC.preprocess hands its CoM routine, on the CPU (numpy as xp).
    shim = types.SimpleNamespace(_xp=np, _device="cpu", _asnumpy=np.asarray, _reciprocal_sampling=(1.0, 1.0))

    def run():
        det = {k: dc.get_virtual_image(mode="mask", geometry=masks[k], verbose=False, returncalc=True).data.ravel() for k in names}
        mean = dc.get_dp_mean(returncalc=True).data
        dp_max = dc.get_dp_max(returncalc=True).data
        intensities = np.asarray(dc.data, dtype=np.float32)
        com = PhaseReconstruction._calculate_intensities_center_of_mass(shim, intensities)
        return det, mean, dp_max, com[:2]

    return run


def main():
    cfg_path, reps, which = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(cfg_path) as f:
        cfg = json.load(f)
    data = load(cfg)
    names, w = weights(cfg, data.shape[1] * data.shape[2])
    out = {"numpy": np.__version__, "h5py": h5py.__version__, "frames": int(data.shape[0])}
    if which == "numpy":
        t, r = best_median(reps, lambda: reduce_numpy(data, names, w))
        out["time"] = t
        out["check"] = {
            "detectors": {k: int(v.sum()) for k, v in r["detectors"].items()},
            "total": int(r["total"].sum()),
            "sum_dp": [int(v) for v in r["sum_dp"]],
            "max_dp": [int(v) for v in r["max_dp"]],
            "com_sum": [float(c.sum()) for c in r["com"]],
        }
    else:
        import py4DSTEM

        out["py4dstem"] = py4DSTEM.__version__
        t, (det, mean, dp_max, com) = best_median(reps, reduce_py4dstem(data, cfg, names))
        out["time"] = t
        out["check"] = {
            "detectors": {k: int(v.sum()) for k, v in det.items()},
            "sum_dp": [int(round(v * data.shape[0])) for v in mean.ravel()],
            "max_dp": [int(v) for v in dp_max.ravel()],
            "com_sum": [float(np.asarray(c, dtype=np.float64).sum()) for c in com],
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
