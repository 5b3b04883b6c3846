"""refloxide's general 4x4 kernel (`general_reflectivity`, serial) on the tilted biaxial benchmark
shape; prints JSON {variant: {"seconds": median, "R_ss": [...], "R_pp": [...], "R_sp": [...],
"R_ps": [...]}} for the variants named on the command line ("smooth", "rough").

The shape (the same formulas as benches/src/bin/refl_general_bench.rs): 250 eV,
q = linspace(0.001, 0.25, 256), vacuum | N = 100 graded, tilted biaxial slabs (2 A each) | Si;
slab j (f = j/(N-1)): delta = (1.8e-3 (1 + 0.15 f), 2.0e-3 (1 - 0.1 f), 2.2e-3 (1 + 0.05 f)),
beta = (1.0e-4 (1 + 0.2 f), 1.5e-4, 1.2e-4 (1 + 0.1 f)), Euler z-x'-z'' angles (deg)
(37 + 2.5 j, 50 + 0.3 j, 10 + 1.7 j). "rough": 3 A on every interface; "smooth": none.
"""
import json
import sys
import time

import numpy as np
from refloxide.tmm import general_reflectivity

N = 100


def rot(phi, theta, psi):
    def rz(a):
        c, s = np.cos(a), np.sin(a)
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    def rx(a):
        c, s = np.cos(a), np.sin(a)
        return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])

    return rz(phi) @ rx(theta) @ rz(psi)


def shape(rough):
    sigma = 3.0 if rough else 0.0
    rows, tensors = [[0.0, 0.0, 0.0, 0.0]], [np.zeros((3, 3), complex)]
    for j in range(N):
        f = j / (N - 1)
        delta = np.array([1.8e-3 * (1 + 0.15 * f), 2.0e-3 * (1 - 0.1 * f), 2.2e-3 * (1 + 0.05 * f)])
        beta = np.array([1.0e-4 * (1 + 0.2 * f), 1.5e-4, 1.2e-4 * (1 + 0.1 * f)])
        o = rot(*np.deg2rad([37 + 2.5 * j, 50 + 0.3 * j, 10 + 1.7 * j]))
        tensors.append(o @ np.diag(delta + 1j * beta) @ o.T)
        rows.append([2.0, delta.mean(), beta.mean(), sigma])
    sub = 5.97e-3 + 4.25e-3j
    rows.append([0.0, sub.real, sub.imag, sigma])
    tensors.append(np.diag([sub, sub, sub]))
    return np.array(rows), np.array(tensors)


q = np.linspace(0.001, 0.25, 256)
out = {}
for variant in sys.argv[1:]:
    layers, tensor = shape(variant == "rough")
    general_reflectivity(q, layers, tensor, 250.0, parallel=False)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        refl = general_reflectivity(q, layers, tensor, 250.0, parallel=False)
        times.append(time.perf_counter() - t0)
    out[variant] = {
        "seconds": sorted(times)[len(times) // 2],
        "R_ss": refl[:, 1, 1].tolist(),
        "R_pp": refl[:, 0, 0].tolist(),
        "R_sp": refl[:, 0, 1].tolist(),
        "R_ps": refl[:, 1, 0].tolist(),
    }
print(json.dumps(out))
