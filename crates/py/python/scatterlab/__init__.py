"""scatterlab for Python: the Rust kernels of scatterlab (``scatterlab._native``, PyO3) and
front ends that spread them over Dask.distributed.

Modules:

- :mod:`scatterlab.stem` -- 4D-STEM reductions by frame range, their exact merge and the
  products of ``scatterlab stem reduce``.
- :mod:`scatterlab.dask` -- the same reduction with Dask futures.
"""

from . import _native, stem

__version__ = _native.__version__

__all__ = ["stem", "__version__"]
