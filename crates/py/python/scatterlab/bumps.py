"""bumps on scatterlab's reflectivity objective: a ``FitProblem`` and a population mapper.

bumps (``pip install bumps``; optional, imported only here) fits a ``FitProblem`` made of
"fitness" objects; its ``FitDriver(fitclass, problem, mapper=...)`` hands the mapper a whole
population at once. :func:`problem` wraps an :class:`scatterlab.refl.Objective` as that problem
(one bumps ``Parameter`` per free parameter, named and bounded as in the task), and
:func:`mapper` evaluates a population in one batched Rust call (or any ``map`` of rows, e.g.
Dask tasks), so::

    from bumps.fitters import FitDriver, DEFit
    obj = scatterlab.refl.Objective("fit_task.json")
    prob = scatterlab.bumps.problem(obj)
    driver = FitDriver(DEFit, prob, mapper=scatterlab.bumps.mapper(obj), steps=300)
    x, nllf = driver.fit()          # χ² = 2 · nllf

bumps' negative log-likelihood is χ²/2 (its ``chisq`` divides 2·nllf by the degrees of
freedom); the bounds are bumps' uniform priors, which add nothing inside them.
"""

from __future__ import annotations

import numpy as np

from .refl import Objective

__all__ = ["problem", "mapper", "ObjectiveFitness"]


class ObjectiveFitness:
    """A bumps fitness (its ``Fitness`` protocol) over an :class:`~scatterlab.refl.Objective`."""

    def __init__(self, objective: Objective, name: str = "scatterlab"):
        from bumps.parameter import Parameter

        self.objective = objective
        self.name = name
        self._parameters = [Parameter(value=float(v), bounds=(float(lo), float(hi)), name=n) for n, v, (lo, hi) in zip(objective.names, objective.start, objective.bounds)]

    def parameters(self):
        """bumps Parameters, in the objective's column order."""
        return self._parameters

    def values(self) -> np.ndarray:
        """The parameters' current values as the objective's free vector."""
        return np.array([p.value for p in self._parameters], dtype=np.float64)

    def update(self):
        """Nothing is cached between evaluations."""

    def numpoints(self) -> int:
        """Number of data points."""
        return self.objective.n_points

    def nllf(self) -> float:
        """χ²/2 at the current values."""
        return 0.5 * self.objective.chi2(self.values())

    def residuals(self) -> np.ndarray:
        """Weighted residuals at the current values."""
        return self.objective.residuals(self.values())

    def resynth_data(self):
        """Not supported: the data belong to the task file."""
        raise NotImplementedError("scatterlab.bumps: resynth_data is not supported (the data belong to the task)")

    def restore_data(self):
        """Nothing to restore (see :meth:`resynth_data`)."""

    def save(self, basename):
        """Nothing to save beyond bumps' own output."""

    def plot(self, view="linear"):
        """Plots are the app's and the CLI's job."""


def problem(objective: Objective, name: str = "scatterlab"):
    """A bumps ``FitProblem`` over ``objective``."""
    from bumps.fitproblem import FitProblem

    return FitProblem(ObjectiveFitness(objective, name))


def mapper(objective: Objective, map=None):
    """A bumps population mapper: nllf (χ²/2) of every point in one batched call, or through
    ``map(f, rows)`` (e.g. Dask tasks), each row one free vector. A point outside the bounds
    gets ``inf``, as bumps' own ``FitProblem.nllf`` gives it (its uniform priors): bumps' DE
    proposes such points and expects that answer, not a model evaluation."""
    lo, hi = objective.bounds[:, 0], objective.bounds[:, 1]

    def batched(points):
        pop = np.asarray(points, dtype=np.float64).reshape(len(points), -1)
        out = np.full(len(pop), np.inf)
        inside = np.all((pop >= lo) & (pop <= hi), axis=1) if pop.shape[1] == len(lo) else np.ones(len(pop), bool)
        rows = np.ascontiguousarray(pop[inside])
        if len(rows):
            if map is None:
                values = objective.chi2_batch(rows)
            else:
                values = list(map(objective.chi2, list(rows)))
                if len(values) != len(rows):
                    raise ValueError(f"scatterlab.bumps: map returned {len(values)} values for {len(rows)} points")
            out[inside] = 0.5 * np.asarray(values, dtype=np.float64)
        return list(out)

    return batched
