"""refloxide's CPU serial kernel on the benchmark shape; prints JSON {n: median_seconds}."""
import json, sys, time
import numpy as np
import refloxide.tmm as tmm

def shape(n):
    rows, tensors = [[0.0, 0.0, 0.0, 0.0]], [np.zeros((3, 3), complex)]
    for j in range(n):
        f = 0.0 if n == 1 else j / (n - 1)
        no = 1.8e-3 * (1 + 0.15 * f) + 1j * 1.0e-4 * (1 + 0.2 * f)
        ne = 2.2e-3 * (1 - 0.1 * f) + 1j * 1.2e-4 * (1 + 0.1 * f)
        rows.append([200.0 / n, no.real, no.imag, 2.0 if j == 0 else 0.0])
        tensors.append(np.diag([no, no, ne]))
    sub = 5.97e-3 + 4.25e-3j
    rows.append([0.0, sub.real, sub.imag, 0.5])
    tensors.append(np.diag([sub, sub, sub]))
    return np.array(rows), np.array(tensors)

q = np.linspace(0.001, 0.25, 256)
out = {}
for n in [int(a) for a in sys.argv[1:]]:
    layers, tensor = shape(n)
    tmm.uniaxial_reflectivity(q, layers, tensor, 250.0, parallel=False, device="cpu")
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        refl = tmm.uniaxial_reflectivity(q, layers, tensor, 250.0, parallel=False, device="cpu")[0]
        times.append(time.perf_counter() - t0)
    out[n] = {"seconds": sorted(times)[len(times) // 2], "R_s0": float(np.real(refl[0, 1, 1])), "R_p0": float(np.real(refl[0, 0, 0]))}
print(json.dumps(out))
