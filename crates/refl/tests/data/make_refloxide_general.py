"""Oracle for the general 4x4 method: refloxide's `general_reflectivity` on tilted/biaxial stacks.

Writes refloxide_general.json next to this file: 12 stacks (soft X-ray 250-320 eV, one hard
X-ray case at 8 keV), each with its inputs (thickness, roughness, principal delta/beta per
material axis a, b, c, Euler angles in degrees) and refloxide's R_ss, R_pp, R_sp, R_ps.

Made with Python 3.12, refloxide 0.3.0 (`refloxide.tmm.general_reflectivity`, f64 CPU, serial),
numpy 2.x. Run from the repository root:

    ~/.cache/scatterlab/bench-venv/bin/python crates/refl/tests/data/make_refloxide_general.py

Conventions handed to refloxide: the lab tensor T = Omega diag(delta + i beta) Omega^T with
Omega = Rz(phi) Rx(theta) Rz(psi) (refloxide's `EulerAnglesZxz`, active rotations); refloxide
builds eps = conj(I - 2 T) = I - 2 delta + 2i beta. Its output packing: refl[:, 0, 0] = R_pp,
[:, 1, 1] = R_ss, [:, 0, 1] = R_sp (s reflected from p incident), [:, 1, 0] = R_ps.
Roughness sits on the interface above each layer; case names say where it is.
"""

import json
import pathlib

import numpy as np
import refloxide
from refloxide.tmm import general_reflectivity

HC = 12398.4193
rng = np.random.default_rng(31415)


def rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def lab_tensor(layer):
    phi, theta, psi = np.deg2rad(layer["euler_deg"])
    omega = rz(phi) @ rx(theta) @ rz(psi)
    principal = np.diag(np.array(layer["delta"]) + 1j * np.array(layer["beta"]))
    return omega @ principal @ omega.T


def layer(thickness, roughness, delta, beta, euler):
    return {"thickness": thickness, "roughness": roughness, "delta": list(map(float, delta)), "beta": list(map(float, beta)), "euler_deg": list(map(float, euler))}


def iso(thickness, roughness, delta, beta):
    return layer(thickness, roughness, [delta] * 3, [beta] * 3, [0.0, 0.0, 0.0])


def random_film(thickness, roughness, euler=None, scale=1.0):
    delta = rng.uniform(-1e-3, 5e-3, 3) * scale
    beta = rng.uniform(1e-5, 3e-3, 3) * scale
    if euler is None:
        euler = [rng.uniform(0, 360), rng.uniform(0, 180), rng.uniform(0, 360)]
    return layer(thickness, roughness, delta, beta, euler)


def q_grid(energy, n, top=0.9, near_critical=None):
    k0 = 2 * np.pi * energy / HC
    q = np.linspace(0.004, top * 2 * k0, n)
    if near_critical is not None:
        qc = near_critical
        q = np.sort(np.concatenate([q, np.linspace(0.8 * qc, 1.2 * qc, 25)]))
    return q


VACUUM = iso(0.0, 0.0, 0.0, 0.0)
SI_SOFT = (1.7e-3, 2.4e-4)  # Si-like substrate at 250-320 eV
cases = []


def add(name, energy, layers, q):
    cases.append({"id": name, "energy_ev": energy, "q_inv_A": list(map(float, q)), "layers": layers})


for k in range(5):
    energy = float(rng.uniform(250, 320))
    films = [random_film(float(rng.uniform(20, 250)), 0.0) for _ in range(int(rng.integers(1, 4)))]
    add(f"soft_tilted_smooth_{k}", energy, [VACUUM, *films, iso(0.0, 0.0, *SI_SOFT)], q_grid(energy, 90))
# 90-degree tilts: optic axis along -y (theta = 90, phi = 0) and in the plane of incidence (phi = 90).
add("soft_tilt90_perpendicular", 285.0, [VACUUM, random_film(120.0, 0.0, [0.0, 90.0, 0.0]), iso(0.0, 0.0, *SI_SOFT)], q_grid(285.0, 90))
add("soft_tilt90_in_plane", 285.0, [VACUUM, random_film(120.0, 0.0, [90.0, 90.0, 0.0]), random_film(60.0, 0.0, [90.0, 90.0, 30.0]), iso(0.0, 0.0, *SI_SOFT)], q_grid(285.0, 90))
# A tilted biaxial substrate, no film.
add("soft_tilted_substrate", 270.0, [VACUUM, random_film(0.0, 0.0)], q_grid(270.0, 90))
# Near the critical angle of a weakly absorbing film on a substrate with delta > film's.
k0 = 2 * np.pi * 300.0 / HC
film = layer(150.0, 0.0, [3.0e-3, 3.4e-3, 2.6e-3], [2e-5, 5e-5, 1e-5], [40.0, 55.0, 10.0])
qc = 2 * k0 * np.sqrt(2 * 3.4e-3)
add("soft_near_critical", 300.0, [VACUUM, film, iso(0.0, 0.0, 4.5e-3, 1e-4)], q_grid(300.0, 70, 0.5, qc))
# Roughness only between uncoupled layers (substrate below an isotropic buffer): both NC rules agree.
add("soft_rough_uncoupled", 260.0, [VACUUM, random_film(80.0, 0.0), iso(30.0, 0.0, 2.0e-3, 5e-4), iso(0.0, 4.0, *SI_SOFT)], q_grid(260.0, 90))
# Roughness at interfaces of coupled layers: the NC rules differ (see CONVENTIONS.md).
add("soft_rough_coupled", 310.0, [VACUUM, random_film(100.0, 3.0), random_film(50.0, 2.0), iso(0.0, 3.0, *SI_SOFT)], q_grid(310.0, 90))
# Hard X-ray: weak birefringence, 8 keV.
hard_film = layer(400.0, 0.0, [9.0e-6, 9.6e-6, 8.7e-6], [3.0e-7, 2.6e-7, 3.5e-7], [25.0, 70.0, 130.0])
add("hard_tilted_8kev", 8000.0, [VACUUM, hard_film, iso(0.0, 0.0, 7.6e-6, 1.7e-7)], q_grid(8000.0, 90, 0.1))

for case in cases:
    rows = np.array([[l["thickness"], np.mean(l["delta"]), np.mean(l["beta"]), l["roughness"]] for l in case["layers"]])
    tensor = np.array([lab_tensor(l) for l in case["layers"]])
    refl = general_reflectivity(np.array(case["q_inv_A"]), rows, tensor, case["energy_ev"], parallel=False)
    case["expected"] = {"R_ss": refl[:, 1, 1].tolist(), "R_pp": refl[:, 0, 0].tolist(), "R_sp": refl[:, 0, 1].tolist(), "R_ps": refl[:, 1, 0].tolist()}

out = {
    "generator": {"script": "make_refloxide_general.py", "refloxide": refloxide.__version__, "numpy": np.__version__, "seed": 31415},
    "cases": cases,
}
path = pathlib.Path(__file__).with_name("refloxide_general.json")
path.write_text(json.dumps(out, indent=1))
print(f"wrote {path} ({len(cases)} cases)")
