"""Writes refnx_smearing.json: refnx 0.1.67's smeared Abeles reflectivity of an isotropic X-ray
stack, the oracle for crates/refl/tests/resolution.rs.

Run (Python >= 3.10, `pip install refnx==0.1.67 numpy`):  python make_refnx_smearing.py
X-ray optical constants map to refnx SLDs by 4*pi*rho*1e-6 = 2*delta*k0^2 (and beta likewise),
which makes refnx's kz^2 = Q^2 - 4*pi*SLD equal ours, Q^2 + (-2 delta + 2i beta) k0^2, up to the
sign of the imaginary part (R is unchanged by conjugation).
"""
import json
import numpy as np
import refnx
from refnx.reflect import reflectivity

HC = 12398.4193
energy = 700.0
k0 = 2 * np.pi * energy / HC
# fronting vacuum | 3 films | substrate:  thickness A, delta, beta, roughness A (interface above)
stack = [(0, 0, 0, 0), (180.0, 1.6e-3, 2.0e-4, 4.0), (35.0, 3.1e-3, 8.0e-4, 2.5),
         (90.0, 0.9e-3, 1.0e-5, 3.0), (0, 2.4e-3, 6.0e-4, 1.5)]
to_sld = 2 * k0 ** 2 / (4 * np.pi) * 1e6
w = np.array([[d, de * to_sld, be * to_sld, s] for d, de, be, s in stack])
q = np.linspace(0.01, 0.4, 120)
dq_pointwise = 0.002 + 0.03 * q          # FWHM, 1/A
out = {
    "generator": f"make_refnx_smearing.py, refnx {refnx.version.version}",
    "energy_ev": energy,
    "thickness_A": [s[0] for s in stack], "roughness_A": [s[3] for s in stack],
    "delta": [s[1] for s in stack], "beta": [s[2] for s in stack],
    "q_inv_A": q.tolist(),
    "unsmeared": reflectivity(q, w, dq=0.0).tolist(),
    "dq_fwhm_inv_A": dq_pointwise.tolist(),
    "pointwise": reflectivity(q, w, dq=dq_pointwise, quad_order=17).tolist(),
    "constant_percent": 5.0,
    # refnx's own constant-dQ/Q path (log-grid interpolation) differs from its quadrature by up to
    # 4 % at deep minima; we use the quadrature for both, so compare with it at dQ = 0.05 q.
    "constant_log_grid": reflectivity(q, w, dq=5.0).tolist(),
    "constant_by_quadrature": reflectivity(q, w, dq=0.05 * q, quad_order=17).tolist(),
}
with open("refnx_smearing.json", "w") as f:
    json.dump(out, f, indent=1)
