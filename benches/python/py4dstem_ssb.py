"""The peer of benches/src/bin/ssb_bench.rs: py4DSTEM's single-sideband ptychography on the same data.

    python py4dstem_ssb.py CONFIG.json

CONFIG (written by the Rust side): the data files in frame order, scan and detector shape, the flat
indices of the bad pixels (zeroed, as MaskPolicy::ZeroMasked does), the geometry and optics the Rust
reconstruction uses (BF centre and radius, scan rotation θ, transpose, C10/C12/φ12, voltage,
semi-angle, dk, scan step), the reference file and the band-pass for the quality numbers.

py4DSTEM 0.14's `SSB` (`py4DSTEM.process.phase.SSB`, `preprocess` then `reconstruct`) is given the
same geometry, with these unavoidable differences from the fixtures' SSB convention:
- the frames are shifted to the BF centre by spline interpolation (`force_com_shifts` = the centre
  at every position; order 3 by default); ours index pixels in place. Its default
  `crop_around_bf_disk=True` sizes the crop from the corner-centred mean pattern and keeps only 6 × 6
  pixels of dev_medium (phase r 0.81 with ours), so the full detector is used (config key
  `crop_around_bf_disk` overrides);
- its soft aperture is a cosine roll-off inside the edge (`rolloff` mrad, here one detector pixel);
  ours is a linear one-pixel ramp centred on the edge;
- `|Γ| > 1e-3` selects the pixels (ours floors `|Γ|` at 1e-8), the ν = 0 term is `Σ|G|`, and the
  amplitude is remapped (`2 − |O|`): only the phase is comparable;
- its scan rotation is r = −θ (`force_com_rotation`, degrees) and its φ12 is given in the scan
  frame (it subtracts r internally), so φ12 + r is passed.
Timed (one thread: BLAS/OpenMP pinned to 1, `num_jobs=1`): the data decode with h5py (not counted
as SSB), `preprocess` (shift, crop, the per-pixel FFTs over the scan) and `reconstruct` (its Python
loop over the scan frequencies). Runs once (the reconstruction alone takes tens of seconds here).
Prints one JSON object: seconds, versions, and the phase's Pearson r against the reference's
`ssb_phase` (raw) and against `phase_truth_rad` band-passed as the fixtures' `quality_vs_truth`.
"""
import contextlib
import io
import json
import os
import sys
import time
import warnings

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")  # one thread, like our reconstruction row

import h5py  # noqa: E402
import hdf5plugin  # noqa: E402,F401  (registers the bitshuffle filter)
import numpy as np  # noqa: E402


def load(cfg):
    parts = []
    for name in cfg["files"]:
        with h5py.File(name, "r") as f:
            parts.append(f["/entry/data/data"][...])
    data = np.concatenate(parts)
    flat = data.reshape(data.shape[0], -1)
    flat[:, np.asarray(cfg["bad"], dtype=np.int64)] = 0
    rows, cols = cfg["scan"]
    return data[: rows * cols].reshape(rows, cols, *cfg["det"])


def pearson(a, b):
    a = a.ravel() - a.mean()
    b = b.ravel() - b.mean()
    return float((a @ b) / np.sqrt((a @ a) * (b @ b)))


def bandpass(x, step, lo, hi):
    fr = np.fft.fftfreq(x.shape[0]) / step
    fc = np.fft.fftfreq(x.shape[1]) / step
    nu = np.hypot(fr[:, None], fc[None, :])
    return np.fft.ifft2(np.fft.fft2(x) * ((nu > lo) & (nu < hi))).real


def main():
    cfg = json.load(open(sys.argv[1]))
    warnings.filterwarnings("ignore")
    import py4DSTEM  # noqa: E402  (after the thread pinning)
    from py4DSTEM.process.phase import SSB  # noqa: E402

    t0 = time.perf_counter()
    data = load(cfg)
    t_load = time.perf_counter() - t0

    rows, cols = cfg["scan"]
    step, dk = cfg["step_A"], cfg["dk_inv_A_per_px"]
    r_deg = -cfg["rotation_deg"]  # py4DSTEM's rotation is the opposite of θ
    cr, cc = cfg["center_row_col"]
    wavelength = cfg["wavelength_A"]
    angular = dk * wavelength * 1e3  # mrad per pixel
    phi12 = cfg["phi12_rad"] + np.deg2rad(r_deg)
    if cfg["transposed"]:
        raise SystemExit("transposed detectors are not mapped for py4DSTEM here")
    dc = py4DSTEM.DataCube(data=data)
    dc.calibration.set_R_pixel_size(step)
    dc.calibration.set_R_pixel_units("A")
    dc.calibration.set_Q_pixel_size(dk)
    dc.calibration.set_Q_pixel_units("A^-1")
    quiet = contextlib.redirect_stdout(io.StringIO())
    t0 = time.perf_counter()
    with quiet:
        ssb = SSB(
            energy=cfg["kv"] * 1e3,
            datacube=dc,
            semiangle_cutoff=cfg["alpha_mrad"],
            rolloff=angular,
            C10=cfg["C10_nm"] * 10.0,
            C12=cfg["C12_nm"] * 10.0,
            phi12=phi12,
            verbose=False,
            device="cpu",
        ).preprocess(
            force_com_rotation=r_deg,
            force_com_transpose=False,
            force_com_shifts=(np.full((rows, cols), cr), np.full((rows, cols), cc)),
            force_scan_sampling=step,
            force_reciprocal_sampling=dk,
            plot_center_of_mass=False,
            plot_rotation=False,
            plot_overlap_trotters=False,
            crop_around_bf_disk=cfg.get("crop_around_bf_disk", False),
        )
    t_pre = time.perf_counter() - t0
    t0 = time.perf_counter()
    with quiet:
        ssb.reconstruct(num_jobs=1, progress_bar=False)
    t_rec = time.perf_counter() - t0
    phase = np.angle(np.asarray(ssb.object))

    with h5py.File(cfg["reference"], "r") as f:
        ref_phase = f["/ssb_phase"][...].astype(np.float64)
        truth = f["/phase_truth_rad"][...].astype(np.float64)
    lo, hi = cfg["bandpass_inv_A"]
    out = {
        "py4dstem": py4DSTEM.__version__,
        "numpy": np.__version__,
        "bf_crop_px": list(np.asarray(ssb._intensities_shape).tolist()),
        "time": {"load": t_load, "preprocess": t_pre, "reconstruct": t_rec, "ssb": t_pre + t_rec},
        "corr_vs_reference_ssb_phase": pearson(phase, ref_phase),
        "corr_vs_truth_bandpass": pearson(bandpass(phase, step, lo, hi), bandpass(truth, step, lo, hi)),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
