"""Reflectivity fits from Python: the objective of a fit task or model file, and whole fits.

:class:`Objective` exposes χ² of a whole population in one batched Rust call
(:meth:`Objective.chi2_batch`, GIL released, all cores), the weighted residuals and their exact
Jacobian, so that external drivers run on scatterlab's model:

- scipy: ``differential_evolution(lambda x: obj.chi2_batch(x.T), obj.bounds, vectorized=True)``
  (scipy hands a vectorised function an ``(p, S)`` array), ``least_squares(obj.residuals,
  x0, jac=obj.jacobian, bounds=obj.bounds.T)``;
- emcee: ``EnsembleSampler(n, p, obj.log_probability, vectorize=True)``;
- bumps: :func:`scatterlab.bumps.problem` and :func:`scatterlab.bumps.mapper` for
  ``FitDriver(DEFit, problem, mapper=...)``; any other ``mapper``: :meth:`Objective.chi2_batch`
  takes the whole population.

:func:`fit_task` runs a whole fit as ``scatterlab refl fit`` does (same seed, same numbers), so a
batch of fits spreads over Dask workers with ``client.map`` (see :func:`scatterlab.dask.fit_tasks`);
its ``map=`` hook spreads the χ² of each DE generation of one fit instead, with the same result.

A task is given as JSON text, a dict, or the path of a ``.json`` file. Bad input (a width that is
not the number of free parameters, a NaN in a row, a malformed task) raises ``ValueError`` or
``TypeError`` naming it.
"""

from __future__ import annotations

import json
import os

import numpy as np

from . import _native

__all__ = ["MapError", "Objective", "fit_task", "task_text"]


def task_text(task) -> str:
    """JSON text of ``task``: a dict (serialised), a path of a file (read), or JSON text."""
    if isinstance(task, dict):
        return json.dumps(task)
    if isinstance(task, os.PathLike) or (isinstance(task, str) and not task.lstrip().startswith("{")):
        path = os.fspath(task)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such fit task or model file")
        with open(path, encoding="utf-8") as f:
            return f.read()
    if isinstance(task, str):
        return task
    raise TypeError(f"a fit task must be JSON text, a dict or a path (got {type(task).__name__})")


class Objective:
    """χ² of a fit task or model file over its free parameters (columns in :attr:`names` order).

    ``log``: fit ln R; ``roughness_limit``: the plausibility penalty's fraction (as the library's
    ``ObjectiveOptions``). Picklable: workers rebuild it from its text.
    """

    def __init__(self, task, *, log: bool = False, roughness_limit: float | None = None):
        self._native = _native.ReflObjective(task_text(task), bool(log), None if roughness_limit is None else float(roughness_limit))

    def __reduce__(self):
        return (_rebuild, (self._native,))

    @property
    def names(self) -> list[str]:
        """Free parameters, in column order."""
        return self._native.names

    @property
    def bounds(self) -> np.ndarray:
        """``(p, 2)`` lower and upper bounds."""
        return self._native.bounds

    @property
    def start(self) -> np.ndarray:
        """The model's start values (a task: the middle of each bound)."""
        return self._native.start

    @property
    def n_points(self) -> int:
        """Number of data points."""
        return self._native.n_points

    @property
    def dimension(self) -> int:
        """Number of free parameters."""
        return len(self._native.names)

    def chi2_batch(self, population) -> np.ndarray:
        """χ² of each row of ``population`` (``(n, p)``; a 1-D vector counts as one row)."""
        pop = _floats(population, "population")
        if pop.ndim == 1:
            pop = pop[None, :]
        return self._native.chi2_batch(pop)

    def chi2(self, x) -> float:
        """χ² of one free vector."""
        return float(self._native.chi2_batch(_floats(x, "x").reshape(1, -1))[0])

    def residuals(self, x) -> np.ndarray:
        """Weighted residuals at ``x`` (Σ r² = χ²)."""
        return self._native.residuals(_floats(x, "x"))

    def jacobian(self, x) -> np.ndarray:
        """Exact ``(m, p)`` Jacobian ∂r_i/∂x_k at ``x``."""
        return self._native.jacobian(_floats(x, "x"))

    def residuals_and_jacobian(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Both from one model evaluation."""
        return self._native.residuals_and_jacobian(_floats(x, "x"))

    def log_probability(self, population) -> np.ndarray:
        """−χ²/2 of each row, −inf outside the bounds (a flat prior): emcee's ``vectorize=True``."""
        pop = _floats(population, "population")
        pop = pop[None, :] if pop.ndim == 1 else pop
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        inside = np.all((pop >= lo) & (pop <= hi), axis=1) if pop.shape[-1] == len(lo) else np.ones(len(pop), bool)
        out = np.full(len(pop), -np.inf)
        if inside.any():
            out[inside] = -0.5 * self._native.chi2_batch(np.ascontiguousarray(pop[inside]))
        return out


def _rebuild(native) -> Objective:
    obj = Objective.__new__(Objective)
    obj._native = native
    return obj


def fit_task(task, *, method: str = "de", seed: int = 1, log: bool = False, steps: int = 2000, map=None) -> dict:
    """A whole fit of ``task`` as ``scatterlab refl fit --device cpu`` runs it: ``method`` ``"de"``
    (differential evolution seeded with ``seed``, polished by LM), ``"lm"`` or ``"mcmc"`` (DE, LM,
    then ``steps`` sampler steps). Returns the CLI's result fields: ``parameters`` ({name:
    {``value``, ``stderr``}}), ``chi2``, ``n_points``, ``evaluations``, ``generations``, ``method``,
    ``backend``, ``stops`` (and ``mcmc``). The same seed gives the CLI's numbers.

    ``map`` (method ``"de"`` only): a callable ``map(f, rows)`` that evaluates the start population
    and then each generation's trial vectors, e.g. over Dask::

        fit_task(task, seed=3, map=lambda f, xs: client.gather(client.map(f, xs)))

    ``f`` is a picklable callable taking one 1-D float64 array (a free vector, columns in
    :attr:`Objective.names` order) and returning its χ² as a float; ``rows`` is a list of such
    arrays. ``map`` must return an iterable of exactly one float per row, in the order of ``rows``
    (a different count raises :class:`MapError`). Selection, the random stream and the stop rule
    stay in Rust and the LM polish runs in this process, so the result equals ``fit_task``
    without ``map`` (every value, χ², evaluation and generation count). A Dask task costs
    milliseconds, far more than one χ² of a small task: for those, let ``map`` send chunks of
    rows (e.g. one task per worker, each applying ``f`` to its rows) and flatten the results."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"seed must be a non-negative integer (got {seed!r})")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise TypeError(f"steps must be a non-negative integer (got {steps!r})")
    if map is None:
        return _native.refl_fit_task(task_text(task), str(method), int(seed), bool(log), int(steps))
    if not callable(map):
        raise TypeError(f"map must be a callable map(f, rows) (got {type(map).__name__})")
    if method != "de":
        raise ValueError(f"map= applies to method 'de' only (got method {method!r})")
    text = task_text(task)
    chi2 = Objective(text, log=log).chi2
    run = _native.ReflDeRun(text, int(seed), bool(log))
    while (rows := run.pending()) is not None:
        got = [float(e) for e in map(chi2, list(rows))]
        if len(got) != len(rows):
            raise MapError(f"map returned {len(got)} χ² values for {len(rows)} rows (one per row, in order)")
        run.accept(np.array(got, dtype=np.float64))
    return run.finish()


class MapError(ValueError):
    """The ``map`` given to :func:`fit_task` broke its contract (not one χ² per row)."""


def _floats(a, what: str) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an array of numbers (got {type(a).__name__})") from None
    if arr.ndim not in (1, 2) or (what == "x" and arr.ndim != 1):
        raise ValueError(f"{what} must be {'1-D' if what == 'x' else '1-D or 2-D'} (got {arr.ndim}-D, shape {arr.shape})")
    return arr
