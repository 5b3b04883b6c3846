"""The peer of benches/src/bin/bloch_bench.rs: diffBloch 0.2.0rc1 on the two benchmark frames.

    python diffbloch_bench.py [--reps 5] [--cases quartz,borane] [--fixtures DIR] [--borane CIF]
                              [--methods-quartz bloch_eigen,matrix_exp] [--methods-borane bloch_eigen]

Frames (docs/plans/bloch-gradients.md § 8, shared/BENCHMARKS.md § Bloch waves):
- quartz: `quartz_aniso` of fixtures/bloch/reference.json, O = synthetic_quartz/truth.json
  `U_matrix`, 200 kV, 42 tilts over ±1°, 850 Å, UnionCoupling(g_max 2.0, sg_max 0.01) (adaptive);
- borane: benches/data/borane_IAM_4.cif (hydrogens loaded), O = R_z(17°)·R_x(23°)·R_y(11°),
  200 kV, 125 tilts over ±1°, 1900 Å, PerTiltCoupling(g_max 1.9, sg_max 0.01).
Each frame is built with diffBloch's own public pipeline (grid, u0, coupling segments, a
CoupledOrientationPlan scoring every non-000 union beam with I = 1, σ = 0.05; wR2 loss) and timed,
one thread (BLAS/OpenMP and torch pinned to 1 before torch loads), median of REPS after a warm-up:
- forward: `engine.objective_value` under `torch.no_grad()` (structure factors, solve, loss);
- forward+backward: `objective_value(...).total.backward()` with fresh leaves each repetition
  (positions, U_aniso raw, U_iso raw), with `checkpoint_activations` on (diffBloch's default: the
  solve runs twice) and off.
Prints one JSON object: versions, and per frame the shapes the Rust side rebuilds (u0, energy,
orientation, tilt matrices and angles, thickness, segments with hkl and covered tilts, beams per
tilt), the forward intensities per union beam (complex64 solve), and the seconds (wall and CPU).
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")  # one thread, like ours

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

import diffBloch  # noqa: E402
from diffBloch.core.crystal import cell_matrix_from_parameters  # noqa: E402
from diffBloch.core.products import PatternBatch  # noqa: E402
from diffBloch.engine.plan import CoupledOrientationPlan, StructureFactorGrid  # noqa: E402
from diffBloch.io.cif import read_structure  # noqa: E402
from diffBloch.params import RefinableParams  # noqa: E402
from diffBloch.preprocess.coupling import build_coupling_segments  # noqa: E402
from diffBloch.preprocess.experiment import RefinementSetup, _mean_inner_potential  # noqa: E402
from diffBloch.preprocess.orientation import rocking_curve_tilts  # noqa: E402
from diffBloch.preprocess.plan import Plan  # noqa: E402
from diffBloch.preprocess.scoring import build_engine  # noqa: E402
from diffBloch.specs import PerTiltCoupling, UnionCoupling  # noqa: E402

HERE = Path(__file__).resolve().parent


def rot(axis, deg):
    """Right-handed rotation by `deg` degrees about lab axis 0/1/2."""
    c, s = np.cos(np.deg2rad(deg)), np.sin(np.deg2rad(deg))
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def timed(reps, f):
    """Median wall and CPU seconds of `reps` runs of `f` after one warm-up run."""
    f()
    wall, cpu = [], []
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return {"wall": float(np.median(wall)), "cpu": float(np.median(cpu)), "all_wall": wall}


def frame(name, cif, orientation, energy, g_max, sg_max, semi, n_tilts, thickness, policy, methods, reps):
    structure = read_structure(cif, load_hydrogens=True)
    setup = RefinementSetup.from_structure(structure)
    cell = cell_matrix_from_parameters(structure.cell_parameters)
    grid = StructureFactorGrid.from_cell_for_beam_cutoff(cell, g_max)
    u0 = float(_mean_inner_potential(grid, setup, energy=energy))
    tilts = rocking_curve_tilts(semi, n_tilts)
    segments = build_coupling_segments(
        policy, np.asarray(grid.structure_factor_hkl), cell=cell, orientation=orientation, tilts=tilts, energy=energy, u0=u0
    )
    union = np.unique(np.concatenate([s.union_hkl for s in segments]), axis=0)
    observed = union[(union != 0).any(1)]
    pattern = PatternBatch(
        torch.tensor(observed),
        torch.ones(len(observed), dtype=torch.float64),
        torch.full((len(observed),), 0.05, dtype=torch.float64),
    )
    plan = CoupledOrientationPlan.build(
        grid,
        [(s.union_hkl, s.covered_tilt_indices) for s in segments],
        pattern,
        energy=energy,
        thickness=[thickness],
        u0=u0,
        orientation=orientation,
        tilts=tilts,
    )
    full_plan = Plan(structure_factor_grid=grid, orientations=(plan,))
    p = setup.params

    def leaf(x):
        return None if x is None else x.detach().clone().requires_grad_(True)

    def fresh():  # fresh leaves each repetition, as run_refinement_model's closure
        return RefinableParams(leaf(p.asu_positions), leaf(p.uij_raw), leaf(p.u_iso_raw), p.occupancy_raw)

    n_params = sum(int(x.numel()) for x in (p.asu_positions, p.uij_raw, p.u_iso_raw) if x is not None)
    beams_per_tilt = [0] * n_tilts
    for s in segments:
        for t in s.covered_tilt_indices:
            beams_per_tilt[t] = int(len(s.union_hkl))
    out = {
        "name": name,
        "energy": energy,
        "u0": u0,
        "g_max": g_max,
        "sg_max": sg_max,
        "grid_g_max": float(grid.g_max) if hasattr(grid, "g_max") else None,
        "orientation": np.asarray(orientation).tolist(),
        "tilts": np.asarray(tilts).tolist(),
        "tilts_deg": np.linspace(-semi, semi, n_tilts).tolist() if n_tilts > 1 else [0.0],
        "thickness": thickness,
        "coupling": type(policy).__name__,
        "segments": [{"hkl": np.asarray(s.union_hkl).tolist(), "cover": list(map(int, s.covered_tilt_indices))} for s in segments],
        "beams_per_tilt": beams_per_tilt,
        "n_params": n_params,
        "intensities": {},
        "seconds": {},
    }
    for method in methods:
        for checkpoint in (True, False):
            engine = build_engine(full_plan, setup, method=method, checkpoint_activations=checkpoint)
            if checkpoint:
                with torch.no_grad():
                    solution = engine.simulate(p)[0]
                out["intensities"]["hkl"] = solution.beam_hkl.tolist()
                out["intensities"][method] = solution.intensities[0].double().tolist()

                def forward(engine=engine):
                    with torch.no_grad():
                        engine.objective_value(p).total

                out["seconds"][f"{method}/forward"] = timed(reps, forward)
                print(f"{name} {method} forward: {out['seconds'][f'{method}/forward']}", file=sys.stderr)

            def step(engine=engine):
                engine.objective_value(fresh()).total.backward()

            key = f"{method}/forward_backward/checkpoint_{'on' if checkpoint else 'off'}"
            out["seconds"][key] = timed(reps, step)
            print(f"{name} {key}: {out['seconds'][key]}", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cases", default="quartz,borane")
    ap.add_argument("--fixtures", default=str(HERE.parents[2] / "shared" / "fixtures" / "bloch"))
    ap.add_argument("--borane", default=str(HERE.parent / "data" / "borane_IAM_4.cif"))
    ap.add_argument("--methods-quartz", default="bloch_eigen,matrix_exp")
    ap.add_argument("--methods-borane", default="bloch_eigen")
    args = ap.parse_args()
    fixtures = Path(args.fixtures)
    cases = []
    tmp = None
    for case in args.cases.split(","):
        if case == "quartz":
            reference = json.loads((fixtures / "reference.json").read_text())
            truth = json.loads((fixtures / "synthetic_quartz" / "truth.json").read_text())
            tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"diffbloch_bench_quartz_{os.getpid()}.cif"
            tmp.write_text(reference["crystals"]["quartz_aniso"]["cif"])
            o = np.asarray(truth["U_matrix"], dtype=np.float64)
            policy = UnionCoupling(g_max=2.0, sg_max=0.01)
            cases.append(frame("quartz", str(tmp), o, 200e3, 2.0, 0.01, 1.0, 42, 850.0, policy, args.methods_quartz.split(","), args.reps))
            tmp.unlink()
        elif case == "borane":
            o = rot(2, 17.0) @ rot(0, 23.0) @ rot(1, 11.0)
            policy = PerTiltCoupling(g_max=1.9, sg_max=0.01)
            cases.append(frame("borane", args.borane, o, 200e3, 1.9, 0.01, 1.0, 125, 1900.0, policy, args.methods_borane.split(","), args.reps))
        else:
            sys.exit(f"unknown case {case!r} (quartz, borane)")
    print(json.dumps({"diffbloch": diffBloch.__version__ if hasattr(diffBloch, "__version__") else "0.2.0rc1",
                      "torch": torch.__version__, "threads": torch.get_num_threads(), "cases": cases}))


if __name__ == "__main__":
    main()
