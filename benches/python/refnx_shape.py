"""refnx's compiled Abeles kernel on the isotropic analogue of the benchmark shape; prints JSON
{n: {"seconds": median, "R": [...]}}.

Isotropic analogue: each slab keeps its ordinary (in-plane) constants delta_o, beta_o, mapped to a
neutron-style SLD = 2*pi*delta/lambda^2 (= delta*k0^2/(2*pi)), in refnx's 1e-6 A^-2 units; beta
likewise into the imaginary SLD. Then refnx's kz^2 = Q^2 - 4*pi*SLD equals our s-polarisation
kz^2 = Q^2 + chi_o*k0^2 with chi = -2 delta + 2i beta (up to the sign convention of Im, which |r|^2
ignores), so refnx's R equals our R_s of the uniaxial stack: same size (N + 2 layers, same
roughness, Nevot-Croce in both), same arithmetic per q and layer, one polarisation.
Kernel: refnx.reflect.abeles (refnx.reflect._creflect.abeles, compiled C) with threads=1.
"""
import json
import sys
import time

import numpy as np
from refnx.reflect import abeles

HC = 12398.4193
ENERGY = 250.0
wavelength = HC / ENERGY
to_sld = 2 * np.pi / wavelength ** 2 * 1e6  # SLD in 1e-6 A^-2 per unit delta (or beta)


def shape(n):
    rows = [[0.0, 0.0, 0.0, 0.0]]
    for j in range(n):
        f = 0.0 if n == 1 else j / (n - 1)
        delta_o, beta_o = 1.8e-3 * (1 + 0.15 * f), 1.0e-4 * (1 + 0.2 * f)
        rows.append([200.0 / n, delta_o * to_sld, beta_o * to_sld, 2.0 if j == 0 else 0.0])
    rows.append([0.0, 5.97e-3 * to_sld, 4.25e-3 * to_sld, 0.5])
    return np.array(rows)


q = np.linspace(0.001, 0.25, 256)
out = {}
for n in [int(a) for a in sys.argv[1:]]:
    w = shape(n)
    refl = abeles(q, w, threads=1)
    reps = 5 if n > 1000 else 200
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        abeles(q, w, threads=1)
        times.append(time.perf_counter() - t0)
    out[n] = {"seconds": sorted(times)[len(times) // 2], "R": refl.tolist()}
print(json.dumps(out))
