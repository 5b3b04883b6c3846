"""scatterlab for Python: the Rust kernels of scatterlab (``scatterlab._native``, PyO3) and
front ends that spread them over Dask.distributed.

Modules:

- :mod:`scatterlab.stem` -- 4D-STEM reductions by frame range, their exact merge and the
  products of ``scatterlab stem reduce``.
- :mod:`scatterlab.refl` -- the reflectivity fit objective (χ² of a population, residuals,
  Jacobian) for scipy/emcee/bumps, and whole fits as ``scatterlab refl fit`` runs them.
- :mod:`scatterlab.bumps` -- the objective as a bumps ``FitProblem`` and a population mapper
  for ``FitDriver(mapper=...)`` (needs the optional bumps, imported on use).
- :mod:`scatterlab.bloch` -- per-frame loss and gradient of a Bloch-wave refinement.
- :mod:`scatterlab.dask` -- the same reduction, batches of fits and sharded Bloch frames with
  Dask futures.
- :mod:`scatterlab.libertem` -- the same fused pass as a LiberTEM UDF (``FusedUDF``; needs the
  optional LiberTEM, imported on use: ``import scatterlab.libertem``).

Running on a cluster (dask-jobqueue, dask-mpi, LiberTEM) and its cost model: docs/cluster.md.
"""

from . import _native, bloch, refl, stem

__version__ = _native.__version__

__all__ = ["stem", "refl", "bloch", "__version__"]
