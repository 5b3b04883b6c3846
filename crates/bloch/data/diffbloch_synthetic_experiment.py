#!/usr/bin/env python3
"""Generate a second synthetic diffBloch experiment (issue 18): perovskite CaTiO3 (Pnma).

Made the way `shared/fixtures/bloch/synthetic_quartz` was (see that folder's README and
truth.json), but with a different crystal, voltage, thickness, rotation range, UB and noise, so
that `scatterlab bloch refine` is judged on more than the quartz case. Everything physical comes
from diffBloch 0.2.0rc1's own forward model:

1. `true.cif`, `start.cif` and `experiment.yaml` are written; the PETS file is first written with
   one placeholder reflection per frame, only so diffBloch can settle each frame's coupled SOLVE
   beams (union over the rocking-curve tilts, |g| < g_max, |Sg| < sg_max).
2. The PETS file is rewritten with every frame's solve beams (except 000) as placeholder
   reflections; diffBloch's default preprocess recipe (both fits off, as the YAML asks) then
   intersects them with its Klar scoring window, which gives the reflections it would score.
3. For those reflections diffBloch's engine (complex64 `matrix_exp`, union coupling, rocking-curve
   sum) computes the intensities at `true.cif`; observed = scale * I_true + N(0,1) * sigma with
   sigma = rel * scale * I_true + floor (seeded). The final PETS file holds only the scored
   reflections, so reloading it reproduces the same plan (checked: same scored sets).
4. `diffbloch infer --no-checkpoint` scores true.cif and start.cif (mean wR2 and R_obs over all
   rotations) for truth.json.

    /tmp/dbvenv/bin/python crates/bloch/data/diffbloch_synthetic_experiment.py \
        crates/bloch/tests/data/synthetic_catio3

An optional second argument overrides the noise seed (`0` writes noise-free intensities, keeping
the sigmas); both only for studying how far noise alone moves the least-squares optimum.
"""

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from diffBloch.config.schema import load_config
from diffBloch.core.crystal import cell_matrix_from_parameters
from diffBloch.core.products import align
from diffBloch.io import read_experimental_data, read_structure
from diffBloch.preprocess import build_orientation_plans, pipeline, setup_datasets
from diffBloch.preprocess.experiment import RefinementSetup
from diffBloch.preprocess.scoring import build_engine

NAME = "synthetic-catio3"
# CaTiO3 perovskite (Sasaki et al. 1987, Pbnm) in the standard Pnma setting: a' = b, b' = c,
# c' = a, (x', y', z') = (y, z, x). Ti sits on the fully special 4b site, Ca and O1 on the mirror
# (x, 1/4, z) with two free coordinates, O2 on the general 8d position.
CELL = [5.4424, 7.6417, 5.3796, 90.0, 90.0, 90.0]
SPACE_GROUP = ("P n m a", 62)
SYMOPS = ["x,y,z", "-x+1/2,-y,z+1/2", "x+1/2,-y+1/2,-z+1/2", "-x,y+1/2,-z",
          "-x,-y,-z", "x+1/2,y,-z+1/2", "-x+1/2,y+1/2,z+1/2", "x,-y+1/2,z"]
TRUE_ATOMS = [
    # label, element, frac, U_iso (A^2)
    ("Ca1", "Ca", [0.03510, 0.25, 0.99330], 0.0080),
    ("Ti1", "Ti", [0.0, 0.0, 0.5], 0.0050),
    ("O1", "O", [0.48390, 0.25, 0.07110], 0.0085),
    ("O2", "O", [0.28910, 0.03740, 0.71090], 0.0090),
]
# Displacements of the free coordinates only (fractional) and the U_iso inflation of start.cif.
START_SHIFT = {"Ca1": [0.004, 0.0, -0.003], "Ti1": [0.0, 0.0, 0.0],
               "O1": [-0.005, 0.0, 0.004], "O2": [0.003, -0.004, 0.005]}
START_U_FACTOR = {"Ca1": 1.35, "Ti1": 1.40, "O1": 1.30, "O2": 1.35}

ENERGY_EV = 300000.0
WAVELENGTH_A = 0.01969  # relativistic lambda at 300 kV, as PETS writes it (diffBloch snaps to 300 kV)
THICKNESS_A = 400.0
ALPHAS_DEG = [float(a) for a in np.arange(-31.5, 31.5 + 1e-9, 1.5)]  # 43 frames
SEMIANGLE_DEG = 0.75
DSTAR_MAX = 1.25
BLOCH = {"g_max": 1.25, "sg_max": 0.011, "rocking_curve_sampling": 15, "rsg": 0.9, "dsg": 0.0015}
SCALE = 1.0e4
NOISE = {"rel": 0.02, "floor": 0.5, "seed": 20261205}  # quartz's noise model, another seed
U_SEED = 4242


def random_rotation(seed: int) -> np.ndarray:
    """A proper rotation from a seeded normalised quaternion."""
    q = np.random.default_rng(seed).normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def cif_text(block: str, atoms) -> str:
    lines = [f"data_{block}"]
    for key, value in zip(("a", "b", "c"), CELL[:3]):
        lines.append(f"_cell_length_{key} {value}")
    for key, value in zip(("alpha", "beta", "gamma"), CELL[3:]):
        lines.append(f"_cell_angle_{key} {value}")
    lines += [f"_symmetry_space_group_name_H-M '{SPACE_GROUP[0]}'",
              f"_symmetry_Int_Tables_number {SPACE_GROUP[1]}", "loop_", "_symmetry_equiv_pos_as_xyz"]
    lines += [f"'{op}'" for op in SYMOPS]
    lines += ["loop_", "_atom_site_label", "_atom_site_type_symbol", "_atom_site_fract_x",
              "_atom_site_fract_y", "_atom_site_fract_z", "_atom_site_occupancy",
              "_atom_site_U_iso_or_equiv", "_atom_site_adp_type"]
    for label, element, frac, u in atoms:
        lines.append(f"{label} {element} {frac[0]:.6f} {frac[1]:.6f} {frac[2]:.6f} 1.0 {u:.6f} Uiso")
    return "\n".join(lines) + "\n"


def yaml_text() -> str:
    return f"""name: {NAME}
inputs:
  structure: start.cif
  exp_data: exp_data.cif_pets
sample:
  thicknesses: [{THICKNESS_A}]
blochwave:
  solver: matrix_exp
  absorption: false
  coupling_mode: union
  g_max: {BLOCH['g_max']}
  sg_max: {BLOCH['sg_max']}
  rocking_curve_sampling: {BLOCH['rocking_curve_sampling']}
  rsg: {BLOCH['rsg']}
  dsg: {BLOCH['dsg']}
preprocess:
  optimize_orientation: false
  optimize_thickness: false
loss_metrics:
  residual: wr2
refinement:
  steps: 40
  thickness_nn:
    enabled: false
  optimizer:
    name: adam
    lr: 0.001
  trainable:
    positions: all
    adp: all
    occupancy: none
"""


def pets_text(ub: np.ndarray, rows) -> str:
    """PETS2-style file laid out exactly like the quartz fixture's; rows = (h, k, l, I, sigma, frame)."""
    out = [f"data_{NAME.replace('-', '_')}"]
    for key, value in zip(("a", "b", "c"), CELL[:3]):
        out.append(f"_cell_length_{key} {value}")
    for key, value in zip(("alpha", "beta", "gamma"), CELL[3:]):
        out.append(f"_cell_angle_{key} {value}")
    out.append(f"_diffrn_radiation_wavelength {WAVELENGTH_A}")
    for i in range(3):
        for j in range(3):
            out.append(f"_diffrn_orient_matrix_UB_{i + 1}{j + 1} {ub[i, j]:.8f}")
    out += ["_diffrn_measurement_details", ";", "data collection geometry: continuous rotation",
            "rotation axis position: 0.000", f"dstarmax:  {DSTAR_MAX:.3f}", "mosaicity:  0.000", ";",
            "loop_", "_diffrn_zone_axis_id", "_diffrn_zone_axis_u", "_diffrn_zone_axis_v",
            "_diffrn_zone_axis_w", "_diffrn_zone_axis_precession_angle", "_diffrn_zone_axis_alpha",
            "_diffrn_zone_axis_beta", "_diffrn_zone_axis_omega", "_diffrn_zone_axis_scale"]
    for n, alpha in enumerate(ALPHAS_DEG, start=1):
        out.append(f"{n} 0 0 1 {SEMIANGLE_DEG:.3f} {alpha:.4f} 0.0000 0.0000 1.0000")
    out += ["loop_", "_refln_index_h", "_refln_index_k", "_refln_index_l", "_refln_intensity_meas",
            "_refln_intensity_sigma", "_refln_zone_axis_id"]
    for h, k, l, inten, sigma, frame in rows:
        out.append(f"{h:4d} {k:4d} {l:4d} {inten:14.4f} {sigma:12.4f} {frame:4d}")
    return "\n".join(out) + "\n"


def settle(root: Path, structure: str):
    """diffBloch's default preprocess recipe (fits off) on the folder; returns (record, plan, engine)."""
    cfg = load_config(root / "experiment.yaml")
    record = read_experimental_data(root / cfg.inputs.exp_data)
    setup, (dataset,) = setup_datasets(read_structure(root / structure), (record,), cfg)
    step = build_orientation_plans(
        cfg.blochwave.to_rocking_curve(dataset.integration),
        dataset.mosaicity,
        coupling=cfg.blochwave.to_policy(),
        scoring_selection=cfg.blochwave.to_beam_selection(dataset.integration),
    )
    plan = pipeline([step])(dataset.plan)
    engine = build_engine(plan, setup, loss=cfg.loss_metrics.to_loss(), method=cfg.blochwave.solver)
    return record, plan, engine


def frame_ids(record, plan):
    return [int(record.zone_axis_ids[op.pattern.rotation_index]) for op in plan.orientations]


def infer(root: Path, structure: str) -> dict:
    """`diffbloch infer` on a copy of the folder with inputs.structure pointed at `structure`."""
    work = Path(tempfile.mkdtemp()) / "experiment"
    shutil.copytree(root, work)
    yaml = (work / "experiment.yaml").read_text().replace("structure: start.cif", f"structure: {structure}")
    (work / "experiment.yaml").write_text(yaml)
    exe = Path(sys.executable).with_name("diffbloch")
    text = subprocess.run([str(exe), "infer", str(work), "--device", "cpu", "--no-checkpoint"],
                          check=True, capture_output=True, text=True).stdout
    wr2 = float(re.search(r"Mean wR2\s+([0-9.eE+-]+)", text).group(1))
    r_obs = float(re.search(r"Mean R_obs\s+([0-9.eE+-]+)", text).group(1))
    return {"wR2": round(wr2, 5), "R_obs": round(r_obs, 5)}


def main(out_dir: str, seed: str | None = None) -> None:
    torch.set_num_threads(1)
    if seed is not None:
        NOISE["seed"] = int(seed)
    noise_free = NOISE["seed"] == 0
    out = Path(out_dir)
    work = Path(tempfile.mkdtemp()) / "experiment"
    work.mkdir(parents=True)
    start_atoms = [
        (label, element, [f + d for f, d in zip(frac, START_SHIFT[label])], round(u * START_U_FACTOR[label], 6))
        for label, element, frac, u in TRUE_ATOMS
    ]
    (work / "true.cif").write_text(cif_text("catio3_true", TRUE_ATOMS))
    (work / "start.cif").write_text(cif_text("catio3_start", start_atoms))
    (work / "experiment.yaml").write_text(yaml_text())
    u_matrix = random_rotation(U_SEED)
    reciprocal = np.linalg.pinv(cell_matrix_from_parameters(CELL)).T  # rows a*, b*, c*
    ub = u_matrix @ reciprocal.T

    # Pass 1: one placeholder reflection per frame -> each frame's coupled solve beams.
    placeholder = [(1, 1, 1, 1.0, 1.0, n) for n in range(1, len(ALPHAS_DEG) + 1)]
    (work / "exp_data.cif_pets").write_text(pets_text(ub, placeholder))
    record, plan, _ = settle(work, "true.cif")
    candidates = []
    for frame, op in zip(frame_ids(record, plan), plan.orientations):
        hkls = {tuple(int(v) for v in hkl) for seg in op.segments for hkl in np.asarray(seg.plan.beam_hkl)}
        candidates += [(*hkl, 1.0, 1.0, frame) for hkl in sorted(hkls) if hkl != (0, 0, 0)]
    # Pass 2: every solve beam as a candidate -> the reflections diffBloch scores.
    (work / "exp_data.cif_pets").write_text(pets_text(ub, candidates))
    record, plan, engine = settle(work, "true.cif")
    rs = RefinementSetup.from_structure(read_structure(work / "true.cif"), cell_parameters=record.cell_parameters)
    fgb = engine.fgb(rs.params)
    rng = np.random.default_rng(NOISE["seed"])
    rows, beams_per_frame, scored = [], [], {}
    for frame, op, eop in zip(frame_ids(record, plan), plan.orientations, engine.orientations):
        with torch.no_grad():
            aligned = align(engine._solve(eop, fgb, eop.thickness), eop.pattern, eop.alignment)
        calc = np.asarray(aligned.calculated[0], dtype=np.float64)
        hkls = np.asarray(op.alignment.hkl)
        beams_per_frame.append(len({tuple(int(v) for v in h) for s in op.segments for h in np.asarray(s.plan.beam_hkl)}))
        scored[frame] = sorted(tuple(int(v) for v in h) for h in hkls)
        for hkl, value in sorted(zip((tuple(int(v) for v in h) for h in hkls), calc)):
            true_i = SCALE * value
            sigma = NOISE["rel"] * true_i + NOISE["floor"]
            rows.append((*hkl, true_i + (0.0 if noise_free else rng.normal()) * sigma, sigma, frame))
    (work / "exp_data.cif_pets").write_text(pets_text(ub, rows))
    # The final file must reproduce the scored sets it was generated from.
    record, plan, _ = settle(work, "true.cif")
    again = {f: sorted(tuple(int(v) for v in h) for h in np.asarray(op.alignment.hkl))
             for f, op in zip(frame_ids(record, plan), plan.orientations)}
    if again != scored:
        raise SystemExit("reloading the final PETS file changed the scored reflections")

    truth = {
        "description": "synthetic CaTiO3 (Pnma) continuous-rotation experiment generated by diffBloch "
                       "0.2.0rc1 forward model (crates/bloch/data/diffbloch_synthetic_experiment.py)",
        "true_atoms": [{"label": a[0], "element": a[1], "frac": a[2], "u_iso": a[3]} for a in TRUE_ATOMS],
        "start_atoms": [{"label": a[0], "element": a[1], "frac": [round(v, 6) for v in a[2]], "u_iso": a[3]}
                        for a in start_atoms],
        "cell": CELL,
        "space_group": f"{SPACE_GROUP[0]} (No. {SPACE_GROUP[1]})",
        "wavelength_A": WAVELENGTH_A,
        "energy_eV": ENERGY_EV,
        "thickness_A": THICKNESS_A,
        "intensity_scale": SCALE,
        "noise": {"model": f"I_obs = I_true + N(0,1)*sigma, sigma = rel*I_true + {NOISE['floor']}",
                  "rel": NOISE["rel"], "floor": NOISE["floor"], "seed": NOISE["seed"]},
        "U_matrix": u_matrix.tolist(),
        "U_seed": U_SEED,
        "UB_matrix": ub.tolist(),
        "alphas_deg": ALPHAS_DEG,
        "semiangle_deg": SEMIANGLE_DEG,
        "bloch": BLOCH,
        "n_reflections": len(rows),
        "n_union_beams_per_frame": beams_per_frame,
        # Same key as the quartz fixture's; only diffBloch's scores of the two models (no refine run).
        "diffbloch_0.2.0rc1_reference_run": {
            "command": "diffbloch infer <copy> --device cpu --no-checkpoint (inputs.structure -> true.cif / start.cif)",
            "metrics_mean_over_%d_rotations" % len(ALPHAS_DEG): {
                "start_model": infer(work, "start.cif"),
                "true_model": infer(work, "true.cif"),
            },
        },
    }
    (work / "truth.json").write_text(json.dumps(truth, indent=2) + "\n")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("experiment.yaml", "exp_data.cif_pets", "true.cif", "start.cif", "truth.json"):
        shutil.copy(work / name, out / name)
    print(json.dumps({k: truth[k] for k in ("n_reflections", "n_union_beams_per_frame")}))
    print(json.dumps(truth["diffbloch_0.2.0rc1_reference_run"], indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:3])
