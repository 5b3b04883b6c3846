"""refnx's differential evolution with refloxide's model on the fixture fit task; prints one JSON line
{"seconds", "de_seconds", "nfev", "model_calls", "chi2", "chi2_at_truth", "x"}.

Usage: python refnx_fit.py path/to/fit_task.json [seed]   (Python >= 3.12, refloxide 0.3.0, refnx 0.1.67)

The task (shared/fixtures/refl/README.md): vacuum | uniaxial film | SiO2 | Si at 250 and 285.1 eV, s and p,
scale and background fixed. It is built with refloxide's own refnx integration: `refloxide.model`
(`FreeTensorSLD` per layer: independent delta/beta per energy, `Slab`, `Structure`, `ReflectModel`) and
`refloxide.objective.Objective`, a `refnx.analysis.Objective` subclass, handed to refnx's `CurveFitter`.
The fit is `CurveFitter(objective).fit("differential_evolution", seed=seed)`, i.e. scipy's defaults
(best1bin, popsize 15, tol 0.01, Latin hypercube start, polish with L-BFGS-B on) minimising the negative
log-likelihood, whose data term is chi2 / 2.

chi2 here is refnx's `Objective.chisqr` = sum(((R - M) / dR)^2) over the 720 points, the same definition
as scatterlab's `Objective` (no transform). refloxide's Nevot-Croce hard constraint (`nc_constraint`) is
switched off because scatterlab's objective has none by default (the truth satisfies it anyway).

"seconds" is the whole `fit()` call (DE + polish + refnx's numerical covariance, as a user pays it);
"de_seconds" stops the clock at the first covariance evaluation. "nfev" is scipy's count (DE + polish);
"model_calls" counts every call of `nll` (including refnx's covariance).
"""
import json
import sys
import time

import numpy as np
from refnx._lib import flatten
from refnx.analysis import CurveFitter

from refloxide.data import ReflectDataset
from refloxide.model import FreeTensorSLD, ReflectModel, Slab, Structure
from refloxide.objective import Objective

task = json.load(open(sys.argv[1]))
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
bounds, fixed = task["bounds"], task["fixed"]
energies = sorted({d["energy_ev"] for d in task["datasets"]})


def tag(e):
    """The task's energy tag: 285.1 -> '285p1', 250.0 -> '250'."""
    return f"{e:g}".replace(".", "p")


def material(name, constants):
    """A FreeTensorSLD with fixed (delta, beta) per energy from `constants(e) -> (d_o, b_o, d_e, b_e)`."""
    sld = FreeTensorSLD(energies, name=name)
    for e in energies:
        ch = sld.channel_at(e)
        for p, v in zip((ch.delta_o, ch.beta_o, ch.delta_e, ch.beta_e), constants(e)):
            p.value = v
            p.vary = False
    return sld


def fixed_optics(e, mat):
    oc = fixed[f"optical_constants_{e:g}eV"]
    d, b = oc[f"{mat}_delta"], oc[f"{mat}_beta"]
    return d, b, d, b


vacuum = material("vacuum", lambda e: (0.0, 0.0, 0.0, 0.0))
film = material("film", lambda e: (0.0, 0.0, 0.0, 0.0))
oxide = material("oxide", lambda e: fixed_optics(e, "SiO2"))
si = material("Si", lambda e: fixed_optics(e, "Si"))
free = {}  # task parameter name -> refnx Parameter
for e in energies:
    ch = film.channel_at(e)
    for what in ("delta_o", "beta_o", "delta_e", "beta_e"):
        free[f"film_{what}_{tag(e)}"] = getattr(ch, what)
layers = [Slab(0.0, vacuum, 0.0), Slab(100.0, film, 0.0), Slab(10.0, oxide, 0.0), Slab(0.0, si, fixed["substrate_rough"])]
for slab, key in ((layers[1], "film"), (layers[2], "oxide")):
    free[f"{key}_thick"], free[f"{key}_rough"] = slab.thick, slab.rough
structure = Structure(*layers)
model = ReflectModel(structure, energies=energies, scale_s=fixed["scale"], scale_p=fixed["scale"], bkg=fixed["background"])

ds = task["datasets"]
data = ReflectDataset(
    q=np.concatenate([d["q_inv_A"] for d in ds]),
    energy=np.concatenate([np.full(len(d["q_inv_A"]), d["energy_ev"]) for d in ds]),
    pol=np.concatenate([np.full(len(d["q_inv_A"]), d["pol"], dtype=object) for d in ds]),
    r=np.concatenate([d["R"] for d in ds]),
    r_err=np.concatenate([d["R_err"] for d in ds]),
)
objective = Objective(model, data, nc_constraint=False)
# Only the task's free parameters vary (refloxide's per-energy instrument channels default to varying).
for p in flatten(objective.parameters):
    p.vary = False
for name, p in free.items():
    lo, hi = bounds[name]
    p.setp(value=0.5 * (lo + hi), vary=True, bounds=(lo, hi))
objective.refresh_parameters()
names = [p.name for p in objective.varying_parameters()]
order = [next(k for k, v in free.items() if v.name == n) for n in names]
assert sorted(order) == sorted(bounds), (order, sorted(bounds))

# The χ² definition agrees with the fixture's: refnx's chisqr at the truth equals chi2_at_truth.
truth = np.array([task["truth"][k] for k in order])
chi2_truth = float(objective.chisqr(truth))
assert abs(chi2_truth / task["chi2_at_truth"] - 1) < 1e-6, (chi2_truth, task["chi2_at_truth"])

calls = {"n": 0, "de_end": None}
nll = objective.nll


def counted(pvals=None):
    calls["n"] += 1
    return nll(pvals)


objective.nll = counted  # CurveFitter reads objective.nll when fit() starts
covar = objective.covar


def timed_covar(*a, **k):
    calls["de_end"] = time.perf_counter()
    return covar(*a, **k)


objective.covar = timed_covar
t0 = time.perf_counter()
res = CurveFitter(objective).fit("differential_evolution", seed=seed, verbose=False)
t1 = time.perf_counter()
chi2 = float(objective.chisqr(res.x))
print(json.dumps({
    "seconds": t1 - t0,
    "de_seconds": (calls["de_end"] or t1) - t0,
    "nfev": int(res.nfev),
    "nit": int(res.nit),
    "model_calls": calls["n"],
    "chi2": chi2,
    "chi2_at_truth": chi2_truth,
    "x": dict(zip(order, map(float, res.x))),
}))
