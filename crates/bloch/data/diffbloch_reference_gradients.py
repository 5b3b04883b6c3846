#!/usr/bin/env python3
"""Peer gradients for tests/gradients.rs::gradients_match_torch_f64 (FD-free), plan §6.

For three fixture cases, torch float64/complex128 autograd through diffBloch 0.2.0rc1's own
reader, symmetry expansion (`expand_asu`), ADP transforms and `structure_factors` on leaf tensors
(expanded positions, uij_star, occupancies), then diffBloch's structure matrix written out
(A_ab = p·M_a·M_b·F(h_b − h_a), A_aa = 2K·Sg_a·M_a (+ i·p·Im F(000)·M_a), with the fixture's K_n,
prefactor, beams and orientation) and `torch.matrix_exp` in complex128 (not diffBloch's
`propagate`, which forces complex64). Loss L = Σ_t Σ_b w(t, hkl)·I_b(t) with
w = cos(t_index + 0.3 h + 0.7 k + 1.1 l). Writes dL/d(P1 quantities) and the P1 positions.

    /tmp/dbenv/bin/python crates/bloch/data/diffbloch_reference_gradients.py \
        ../shared/fixtures/bloch/reference.json crates/bloch/data/diffbloch_gradients.json
"""

import json
import math
import sys
import tempfile

import torch
from diffBloch.core.adp import cartesian_adp_to_star, cif_adp_to_star, isotropic_adp
from diffBloch.core.crystal import cell_matrix_from_parameters, cell_volume, orientation_basis, reciprocal_cell
from diffBloch.core.scattering import structure_factors
from diffBloch.core.symmetry import build_asu_expansion_plan, expand_asu
from diffBloch.io.cif import read_structure
from diffBloch.specs import NO_ABSORPTION, Absorption

CASES = ["quartz_aniso-200kV-05", "urea-300kV-11", "SrTiO3-200kV-09"]


def main(reference_path: str, out_path: str) -> None:
    torch.set_default_dtype(torch.float64)
    reference = json.load(open(reference_path))
    out = {"generator": "crates/bloch/data/diffbloch_reference_gradients.py", "diffBloch": "0.2.0rc1",
           "torch": torch.__version__, "cases": {}}
    for case in [c for c in reference["cases"] if c["id"] in CASES]:
        with tempfile.NamedTemporaryFile("w", suffix=".cif", delete=False) as handle:
            handle.write(reference["crystals"][case["crystal"]]["cif"])
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
        expanded = expand_asu(plan, torch.tensor(structure.frac_positions), numbers=torch.tensor(structure.numbers),
                              uij=torch.stack(stars), occupancies=torch.tensor(structure.occupancies))
        positions = expanded.positions.detach().clone().requires_grad_(True)
        uij = expanded.uij.detach().clone().requires_grad_(True)
        occupancies = expanded.occupancies.detach().clone().requires_grad_(True)

        hkl = torch.tensor(case["beams"]["hkl"], dtype=torch.int64)
        n = hkl.shape[0]
        differences = (hkl[None, :, :] - hkl[:, None, :]).reshape(-1, 3)
        unique, inverse = torch.unique(torch.cat([differences, torch.zeros(1, 3, dtype=torch.int64)]), dim=0, return_inverse=True)
        absorption = Absorption(enabled=True) if case["absorption"] else NO_ABSORPTION
        f = structure_factors(positions, expanded.numbers, occupancies, uij, unique, basis, cell_volume(cell),
                              g_max=case["structure_factor_grid_g_max_invA"], absorption=absorption, energy=case["energy_eV"])
        f_pairs = f[inverse[:-1]].reshape(n, n)
        f000 = f[inverse[-1]]

        lab = torch.tensor(orientation_basis(cell, torch.tensor(case["orientation"]).numpy()))
        g = hkl.to(torch.float64) @ lab
        k = case["K_n_invA"]
        p = case["prefactor"]
        sg = g[:, 2] - (g * g).sum(dim=1) / (2.0 * k)
        m = 1.0 / torch.sqrt(1.0 - g[:, 2] / k)
        a = (p * m[:, None] * m[None, :]) * f_pairs
        eye = torch.eye(n, dtype=torch.bool)
        diagonal = (2.0 * k * sg * m).to(torch.complex128)
        if case["absorption"]:
            diagonal = diagonal + 1j * p * f000.imag * m
        a = torch.where(eye, torch.diag(diagonal), a)
        z = [i for i, h in enumerate(case["beams"]["hkl"]) if h == [0, 0, 0]][0]
        loss = torch.zeros((), dtype=torch.float64)
        for t_index, t in enumerate(case["thicknesses_A"]):
            psi = torch.linalg.matrix_exp(1j * math.pi * t / k * a)[:, z]
            weights = torch.tensor([math.cos(t_index + 0.3 * h + 0.7 * kk + 1.1 * l) for h, kk, l in case["beams"]["hkl"]])
            loss = loss + (weights * psi.abs() ** 2).sum()
        loss.backward()
        out["cases"][case["id"]] = {
            "loss": loss.item(),
            "positions": positions.detach().tolist(),
            "d_positions": positions.grad.tolist(),
            "d_uij_star": uij.grad.tolist(),
            "d_occupancies": occupancies.grad.tolist(),
        }
        print(case["id"], n, "beams, loss", loss.item())
    with open(out_path, "w") as handle:
        json.dump(out, handle, separators=(",", ":"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
