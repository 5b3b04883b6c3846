#!/usr/bin/env python3
"""Full-precision diffBloch 0.2.0rc1 structure factors for the shared Bloch fixture's cases.

reference.json stores the beams' F_re/F_im rounded to 9 significant digits; this recomputes
them (plus 60 seeded hkl drawn from each case's full F grid, out to its g_max) with diffBloch's
own reader, symmetry expansion, ADP transforms and `structure_factors`, at float64, and writes
diffbloch_F_full_precision.json for tests/structure_factors.rs (with the size, first and
last 40 entries of diffBloch's hkl grid, to pin the grid's extent and order).

    /tmp/dbenv/bin/python crates/bloch/data/diffbloch_reference_F.py \
        ../shared/fixtures/bloch/reference.json crates/bloch/data/diffbloch_F_full_precision.json
"""

import json
import sys
import tempfile

import numpy as np
import torch
from diffBloch.core.adp import cartesian_adp_to_star, cif_adp_to_star, isotropic_adp
from diffBloch.core.crystal import cell_matrix_from_parameters, cell_volume, reciprocal_cell
from diffBloch.core.reciprocal import make_hkl_grid
from diffBloch.core.scattering import structure_factors
from diffBloch.core.symmetry import build_asu_expansion_plan, expand_asu
from diffBloch.io.cif import read_structure
from diffBloch.specs import NO_ABSORPTION, Absorption

EXTRA_PER_CASE = 60


def main(reference_path: str, out_path: str) -> None:
    reference = json.load(open(reference_path))
    out = {"generator": "crates/bloch/data/diffbloch_reference_F.py", "diffBloch": "0.2.0rc1", "cases": {}}
    for case in reference["cases"]:
        cif = reference["crystals"][case["crystal"]]["cif"]
        with tempfile.NamedTemporaryFile("w", suffix=".cif", delete=False) as handle:
            handle.write(cif)
        structure = read_structure(handle.name, load_hydrogens=True)
        cell = cell_matrix_from_parameters(structure.cell_parameters)
        basis = torch.tensor(reciprocal_cell(cell))
        lengths = torch.linalg.norm(basis, dim=1)
        stars = [
            cif_adp_to_star(torch.tensor(structure.adp.uij_cif[i]), lengths)
            if kind == "Uani"
            else cartesian_adp_to_star(isotropic_adp(torch.tensor(structure.adp.u_iso[i])), basis)
            for i, kind in enumerate(structure.adp.kind)
        ]
        plan = build_asu_expansion_plan(structure.frac_positions, structure.symops_R, structure.symops_t)
        expanded = expand_asu(
            plan,
            torch.tensor(structure.frac_positions),
            numbers=torch.tensor(structure.numbers),
            uij=torch.stack(stars),
            occupancies=torch.tensor(structure.occupancies),
        )
        g_max = case["structure_factor_grid_g_max_invA"]
        grid = make_hkl_grid(cell, g_max)
        rng = np.random.default_rng(len(out["cases"]))
        extra = grid[rng.choice(len(grid), EXTRA_PER_CASE, replace=False)].tolist()
        hkl = case["beams"]["hkl"] + extra
        absorption = Absorption(enabled=True) if case["absorption"] else NO_ABSORPTION
        f = structure_factors(
            expanded.positions, expanded.numbers, expanded.occupancies, expanded.uij,
            torch.tensor(hkl, dtype=torch.int64), basis, cell_volume(cell),
            g_max=g_max, absorption=absorption, energy=case["energy_eV"],
        )
        out["cases"][case["id"]] = {
            "n_grid": len(grid),
            "grid_head": grid[:40].tolist(),
            "grid_tail": grid[-40:].tolist(),
            "hkl": hkl,
            "F_re": f.real.tolist(),
            "F_im": f.imag.tolist(),
        }
    with open(out_path, "w") as handle:
        json.dump(out, handle, separators=(",", ":"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
