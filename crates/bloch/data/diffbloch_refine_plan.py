#!/usr/bin/env python3
"""diffBloch 0.2.0rc1's settled plan and per-frame numbers for the synthetic_quartz experiment,
for crates/bloch/tests/refine_metric.rs (issue 18: the geometry recipe and the metrics).

Runs diffBloch's default preprocess recipe with both fits off (exactly what the fixture's YAML
asks): `setup_datasets` + `build_orientation_plans(rocking, mosaicity, coupling=union policy,
scoring_selection=Klar window)`, then, for true.cif and start.cif, its engine's calculated
intensities on each frame's scored reflections (complex64 `matrix_exp`, as shipped) and its
`per_rotation_metrics` (wR2, R_obs at their grid-optimal scales). Works on a copy of the folder
(diffBloch writes locks into an experiment directory).

    /tmp/dbenv/bin/python crates/bloch/data/diffbloch_refine_plan.py \
        ../shared/fixtures/bloch/synthetic_quartz crates/bloch/data/diffbloch_synthetic_quartz_plan.json
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from diffBloch.config.schema import load_config
from diffBloch.core.products import align
from diffBloch.engine import build_refinement_model
from diffBloch.io import read_experimental_data, read_structure
from diffBloch.preprocess import build_orientation_plans, pipeline, setup_datasets
from diffBloch.preprocess.experiment import RefinementSetup
from diffBloch.preprocess.scoring import build_engine


def main(fixture: str, out_path: str) -> None:
    torch.set_num_threads(1)
    root = Path(tempfile.mkdtemp()) / "experiment"
    shutil.copytree(fixture, root)
    cfg = load_config(root / "experiment.yaml")
    record = read_experimental_data(root / cfg.inputs.exp_data)
    setup, (dataset,) = setup_datasets(read_structure(root / cfg.inputs.structure), (record,), cfg)
    step = build_orientation_plans(
        cfg.blochwave.to_rocking_curve(dataset.integration),
        dataset.mosaicity,
        coupling=cfg.blochwave.to_policy(),
        scoring_selection=cfg.blochwave.to_beam_selection(dataset.integration),
    )
    plan = pipeline([step])(dataset.plan)
    engine = build_engine(plan, setup, loss=cfg.loss_metrics.to_loss(), method=cfg.blochwave.solver)
    frames = [
        {
            "id": int(record.zone_axis_ids[op.pattern.rotation_index]),
            "segments": [
                {"hkl": np.asarray(s.plan.beam_hkl).tolist(), "tilts": np.asarray(s.cover).tolist()}
                for s in op.segments
            ],
            "scored_hkl": np.asarray(op.alignment.hkl).tolist(),
        }
        for op in plan.orientations
    ]
    out = {
        "generator": "crates/bloch/data/diffbloch_refine_plan.py",
        "diffBloch": "0.2.0rc1",
        "torch": torch.__version__,
        "energy_eV": plan.orientations[0].energy,
        "u0_A2": plan.orientations[0].u0,
        "frames": frames,
        "models": {},
    }
    for name in ("true.cif", "start.cif"):
        rs = RefinementSetup.from_structure(read_structure(root / name), cell_parameters=record.cell_parameters)
        rows = engine.per_rotation_metrics(build_refinement_model(initial=rs.params))
        fgb = engine.fgb(rs.params)
        calculated = []
        for op in engine.orientations:
            with torch.no_grad():
                aligned = align(engine._solve(op, fgb, op.thickness), op.pattern, op.alignment)
            calculated.append([float(v) for v in aligned.calculated[0]])
        out["models"][name] = {
            "calculated": calculated,
            "wr2": [r.wr2 for r in rows],
            "r_obs": [r.r_obs for r in rows],
            "mean_wr2": float(np.mean([r.wr2 for r in rows])),
            "mean_r_obs": float(np.mean([r.r_obs for r in rows])),
        }
    Path(out_path).write_text(json.dumps(out, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
