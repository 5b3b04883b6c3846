#!/usr/bin/env python3
"""Oracle for crates/refl/tests/materials.rs: delta, beta of compounds from periodictable's Henke
tables, per-element f1/f2, molar masses, and scipy PCHIP/numpy linear values on a test table.

Versions: Python 3.12, periodictable 2.1.0, numpy 2.x, scipy 1.x (the bench venv).
Run from the repository root:
    ~/.cache/scatterlab/bench-venv/bin/python crates/refl/tests/data/make_materials_oracle.py
Writes crates/refl/tests/data/materials_oracle.json.

periodictable interpolates f1 linearly in energy and f2 log-log (numpy.interp on log E, log f2),
and uses h c from CODATA 2022 (12398.419843... eV A), whereas scatterlab uses 12398.4193; the
file records periodictable's hc so the test can rescale delta, beta by (hc_ours / hc_pt)^2.
"""
import json
import math
import os

import numpy as np
import periodictable
import scipy
from periodictable import xsf
from periodictable.constants import avogadro_number, electron_radius
from scipy.interpolate import PchipInterpolator

HERE = os.path.dirname(os.path.abspath(__file__))

# (our formula text, periodictable's spelling, density g/cm^3)
MATERIALS = [
    ("SiO2", "SiO2", 2.2),
    ("Si", "Si", 2.33),
    ("Au", "Au", 19.32),
    ("C8H8", "C8H8", 1.05),
    ("H2O", "H2O", 1.0),
    ("C22H10N2O5", "C22H10N2O5", 1.42),  # Kapton polyimide
    ("Al2O3", "Al2O3", 3.95),
    ("Fe2O3", "Fe2O3", 5.24),
    ("Ca(OH)2", "Ca(OH)2", 2.211),
    ("C10H8O4", "C10H8O4", 1.38),  # PET
    ("Si0.5Ge0.5", "Si0.5Ge0.5", 3.9),
    ("CuSO4·5H2O", "CuSO4+5H2O", 2.286),
]

# Soft to hard X-rays, dense around the C K (284-290 eV), O K (~543 eV) and Si K (1839 eV) edges.
# Si K: si.nff lists 1838.80, 1839., 1838.90 (out of order); the shipped table drops the 1839.
# row, which is what numpy.interp returns on the unsorted table for every E >= 1838.9, so the
# oracle avoids (1838.8, 1838.9) only.
ENERGIES = [30.0, 50.0, 100.0, 150.0, 200.0, 250.0, 270.0, 280.0, 283.0, 284.0, 284.2, 284.5,
            285.1, 286.0, 287.5, 288.0, 290.0, 295.0, 300.0, 320.0, 400.0, 530.0, 540.0, 545.0,
            600.0, 700.0, 1000.0, 1500.0, 1830.0, 1838.5, 1839.0, 1839.5, 1840.0, 1845.0, 1850.0,
            1870.0, 2000.0, 3000.0, 5000.0, 8047.8, 10000.0, 12000.0, 17479.3, 20000.0, 29000.0,
            30000.0]
OUT_OF_RANGE = [("SiO2", 2.2, 20.0), ("C8H8", 1.05, 29.0), ("Au", 19.32, 30000.5), ("H2O", 1.0, 5.0)]


def hc_ev_angstrom():
    return float(xsf.xray_energy(1.0)) * 1000.0  # keV*A -> eV*A


def compound_case(ours, pt_name, density):
    f = periodictable.formula(pt_name, density=density)
    rows = []
    for e in ENERGIES:
        n = xsf.index_of_refraction(f, energy=e / 1000.0)
        rho, irho = xsf.xray_sld(f, energy=e / 1000.0)
        lam = float(xsf.xray_wavelength(e / 1000.0))
        delta = lam**2 / (2 * math.pi) * rho * 1e-6
        beta = lam**2 / (2 * math.pi) * irho * 1e-6
        assert math.isfinite(delta) and math.isfinite(beta), (ours, e)
        assert abs(delta - (1 - n.real)) < 1e-12 and abs(beta - (-n.imag)) < 1e-15
        rows.append({"energy_ev": e, "delta": delta, "beta": beta})
    return {"formula": ours, "periodictable_formula": pt_name, "density_g_cm3": density,
            "molar_mass": f.mass, "atoms": {str(k): v for k, v in f.atoms.items()}, "values": rows}


def element_factors():
    symbols = sorted({str(el) for _, pt_name, _ in MATERIALS for el in periodictable.formula(pt_name).atoms})
    out = {}
    for s in symbols:
        el = periodictable.elements.symbol(s)
        f1, f2 = el.xray.scattering_factors(energy=np.array(ENERGIES) / 1000.0)
        out[s] = {"f1": [float(v) for v in f1], "f2": [float(v) for v in f2]}
    return out


def table_case():
    # A NEXAFS-like uniaxial table: a sharp beta_e resonance at 285 eV on a smooth background.
    e = np.array([270.0, 275.0, 280.0, 282.0, 283.5, 284.5, 285.0, 285.5, 286.5, 288.0, 290.0, 293.0, 300.0, 310.0, 320.0])
    bg = 1e-3 * (e / 280.0) ** -3
    beta_e = bg + 4e-3 * np.exp(-0.5 * ((e - 285.0) / 0.45) ** 2)
    beta_o = bg + 1e-3 * np.exp(-0.5 * ((e - 285.0) / 0.45) ** 2)
    delta_o = 2e-3 - 1.5e-3 * np.tanh((e - 285.0) / 0.8)
    delta_e = 2.5e-3 - 3e-3 * np.tanh((e - 285.0) / 0.8)
    cols = [delta_o, beta_o, delta_e, beta_e]
    at = np.concatenate([e, np.linspace(270.0, 320.0, 101), [284.75, 285.25, 285.9, 319.99]])
    at = np.unique(at)
    return {
        "energy_ev": e.tolist(),
        "columns": [c.tolist() for c in cols],
        "at_ev": at.tolist(),
        "linear": [np.interp(at, e, c).tolist() for c in cols],
        "pchip": [PchipInterpolator(e, c)(at).tolist() for c in cols],
    }


def main():
    out = {
        "generator": "crates/refl/tests/data/make_materials_oracle.py",
        "versions": {"periodictable": periodictable.__version__, "numpy": np.__version__, "scipy": scipy.__version__},
        "periodictable_hc_ev_angstrom": hc_ev_angstrom(),
        "periodictable_electron_radius_m": electron_radius,
        "periodictable_avogadro": avogadro_number,
        "energies_ev": ENERGIES,
        "compounds": [compound_case(*m) for m in MATERIALS],
        "elements": element_factors(),
        "out_of_range": [{"formula": f, "density_g_cm3": d, "energy_ev": e} for f, d, e in OUT_OF_RANGE],
        "table": table_case(),
    }
    for f, d, e in OUT_OF_RANGE:  # periodictable gives NaN there: f1 or f2 not tabulated
        assert not math.isfinite(xsf.xray_sld(f, density=d, energy=e / 1000.0)[0]), (f, e)
    with open(os.path.join(HERE, "materials_oracle.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
