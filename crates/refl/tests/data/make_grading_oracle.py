"""Writes grading_oracle.json, the independent references for crates/refl/tests/grading.rs:

* refnx 0.1.67 reflectivity of an isotropic X-ray stack whose three interfaces are graded, erf and
  tanh, from refnx's own microslicing (`Structure._micro_slabs`, here at 0.02 A slices so that its
  slicing error is negligible) evaluated with `refnx.reflect.abeles` (threads=1). The public
  default (0.5 A slices, `Structure.slabs()`) is stored too, for information.
* scipy's PchipInterpolator at fine depth fractions for three knot sets (end rules included).

Run (Python >= 3.10; `pip install refnx==0.1.67 numpy scipy`; made with the bench venv
~/.cache/scatterlab/bench-venv, refnx 0.1.67, numpy 2.x, scipy 1.x):
    python make_grading_oracle.py        # writes grading_oracle.json next to this script

X-ray optical constants map to refnx SLDs by 4*pi*rho*1e-6 = 2*delta*k0^2 (beta likewise), as in
make_refnx_smearing.py. refnx's Tanh uses tanh(sqrt(2/pi) z / s) (the erf's central slope);
ours is tanh(pi z / (2 sqrt(3) sigma)) (rms width sigma), so refnx gets s = sqrt(2/pi) * 2 sqrt(3)/pi * sigma.
"""
import json
import os

import numpy as np
import refnx
import scipy
from refnx.reflect import SLD, abeles
from refnx.reflect.interface import Erf, Tanh
from scipy.interpolate import PchipInterpolator

HC = 12398.4193
energy = 700.0
k0 = 2 * np.pi * energy / HC
to_sld = 2 * k0 ** 2 / (4 * np.pi) * 1e6
# fronting | 120 A film | 25 A film (thin: its two rough interfaces overlap) | substrate
# rows: thickness A, delta, beta, sigma A (rms width of the interface above)
stack = [(0, 0, 0, 0), (120.0, 1.6e-3, 2.0e-4, 4.0), (25.0, 3.1e-3, 8.0e-4, 5.0), (0, 2.4e-3, 6.0e-4, 3.0)]
q = np.linspace(0.01, 0.3, 80)
tanh_scale = np.sqrt(2 / np.pi) * 2 * np.sqrt(3) / np.pi


def reflectivity(interface, scale):
    layers = [SLD(complex(d * to_sld, b * to_sld))(t, s * scale) for t, d, b, s in stack]
    structure = layers[0]
    for layer in layers[1:]:
        structure = structure | layer
    for component in structure[1:]:
        component.interfaces = interface
    fine = structure._micro_slabs(slice_size=0.02)[:, :4]
    default = structure.slabs()[:, :4]
    return abeles(q, fine, threads=1).tolist(), abeles(q, default, threads=1).tolist()


erf_fine, erf_default = reflectivity(Erf(), 1.0)
tanh_fine, tanh_default = reflectivity(Tanh(), tanh_scale)

knot_sets = [
    [(0.0, 0.8), (0.15, 0.75), (0.4, 0.2), (0.55, 0.25), (0.8, -0.3), (1.0, -0.1)],
    [(0.0, 0.0), (0.1, 1.0), (1.0, 0.0)],
    [(0.1, 1.0), (0.3, 1.0), (0.6, 0.4), (0.9, 0.39)],
]
fractions = np.linspace(0.0, 1.0, 101)
pchip = []
for knots in knot_sets:
    x, y = np.array(knots).T
    inside = np.clip(fractions, x[0], x[-1])  # ours holds the end values outside the knots
    pchip.append({"knots": knots, "values": PchipInterpolator(x, y)(inside).tolist()})

out = {
    "generator": f"make_grading_oracle.py, refnx {refnx.version.version}, numpy {np.__version__}, scipy {scipy.__version__}",
    "energy_ev": energy,
    "thickness_A": [s[0] for s in stack],
    "delta": [s[1] for s in stack],
    "beta": [s[2] for s in stack],
    "sigma_A": [s[3] for s in stack],
    "q_inv_A": q.tolist(),
    "erf_fine": erf_fine,
    "erf_default_0p5A": erf_default,
    "tanh_refnx_scale_per_sigma": tanh_scale,
    "tanh_fine": tanh_fine,
    "tanh_default_0p5A": tanh_default,
    "pchip_fractions": fractions.tolist(),
    "pchip": pchip,
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "grading_oracle.json"), "w") as f:
    json.dump(out, f, indent=1)
