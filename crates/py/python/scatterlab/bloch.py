"""Bloch-wave structure refinement from Python: per-frame loss and gradient of a frozen plan.

:class:`Refinement` loads a diffBloch experiment directory (``experiment.yaml``, the PETS
``.cif_pets``, the start CIF) and freezes its geometry plan at the start structure, as
``scatterlab bloch refine`` does. Its loss is the least-squares cost Σ r² that the LM refiner
minimises (``objective="chi2"``: w = 1/σ; ``"wr2"``: diffBloch's Klar weights), each frame at
its own optimal scale, and its gradient 2 Jᵀr comes from the exact Jacobian. Parameters are
offsets from the start structure along :attr:`Refinement.names`.

Each frame's terms depend on that frame alone, so frames shard across workers:
:meth:`Refinement.frame_terms` gives them per frame and a driver adds them in ascending global
frame order (:func:`scatterlab.dask.bloch_loss_and_gradient`), which gives the bits of
:meth:`Refinement.loss_and_gradient` over all frames in one process.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from . import _native

__all__ = ["Refinement", "sum_terms"]


class Refinement:
    """The refinement problem of ``experiment`` (a directory or its ``experiment.yaml``)."""

    def __init__(self, experiment: str | os.PathLike, *, objective: str = "chi2"):
        path = os.path.abspath(os.fspath(experiment))
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such experiment directory or experiment.yaml")
        self._native = _native.BlochRefinement(path, str(objective))
        self.path, self.objective = path, str(objective)

    def __reduce__(self):
        return (_cached, (self.path, self.objective))

    @property
    def frame_count(self) -> int:
        """Frames of the plan: global indices 0..frame_count."""
        return self._native.frame_count

    @property
    def frame_ids(self) -> list[int]:
        """PETS frame ids, in plan order."""
        return self._native.frame_ids

    @property
    def names(self) -> list[str]:
        """Parameter names: the columns of ``params`` and of every gradient."""
        return self._native.names

    def frame_terms(self, params, frames=None) -> tuple[np.ndarray, np.ndarray]:
        """Per frame of ``frames`` (global indices, each once; ``None``: all): its loss and
        gradient, ``(k,)`` and ``(k, p)`` in the order given."""
        return self._native.frame_terms(_params(params), _frames(frames))

    def loss_and_gradient(self, params, frames=None) -> tuple[float, np.ndarray]:
        """Loss and gradient summed over ``frames`` (``None``: all), in ascending frame order."""
        return self._native.loss_and_gradient(_params(params), _frames(frames))


@functools.lru_cache(maxsize=8)
def _cached(path: str, objective: str) -> Refinement:
    """One :class:`Refinement` per (experiment, objective) per process: a worker loads the plan
    once and keeps the shards' sub-problems between calls."""
    return Refinement(path, objective=objective)


def shard_terms(path: str, objective: str, params, frames) -> tuple[list[int], np.ndarray, np.ndarray]:
    """On a worker: ``(frames, losses, gradients)`` of one shard (the cached refinement's)."""
    frames = _frames(frames)
    losses, gradients = _cached(path, objective).frame_terms(params, frames)
    return frames, losses, gradients


def sum_terms(parts, frame_count: int, n_params: int) -> tuple[float, np.ndarray]:
    """Adds shards' ``(frames, losses, gradients)`` in ascending global frame order (every frame
    exactly once), as :meth:`Refinement.loss_and_gradient` adds them."""
    losses = np.full(frame_count, np.nan)
    gradients = np.zeros((frame_count, n_params))
    seen = np.zeros(frame_count, bool)
    for frames, ls, gs in parts:
        for k, f in enumerate(frames):
            if seen[f]:
                raise ValueError(f"frame {f} is in two shards")
            seen[f] = True
            losses[f], gradients[f] = ls[k], gs[k]
    if not seen.all():
        raise ValueError(f"frames {np.flatnonzero(~seen).tolist()} are in no shard")
    loss, gradient = 0.0, np.zeros(n_params)
    for f in range(frame_count):
        loss += float(losses[f])
        gradient += gradients[f]
    return loss, gradient


def _params(params) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(params, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"params must be an array of numbers (got {type(params).__name__})") from None
    if arr.ndim != 1:
        raise ValueError(f"params must be 1-D (got shape {arr.shape})")
    return arr


def _frames(frames) -> list[int] | None:
    if frames is None:
        return None
    out = []
    for f in frames:
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)):
            raise TypeError(f"frames must be integers (got {f!r})")
        out.append(int(f))
    return out
