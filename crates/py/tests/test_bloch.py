"""The Bloch refinement's loss and gradient with frames sharded over Dask workers equal one
process's full call.

On the synthetic quartz experiment (41 frames, 6 parameters), two worker processes compute the
per-frame terms of uneven, interleaved shards; the client adds them in global frame order. The
loss and every gradient component equal `Refinement.loss_and_gradient` over all frames to 1e-12
relative (in practice bit for bit: a frame's residuals depend on that frame alone), at the start
and at a seeded random offset; both workers did work. The gradient is the exact 2 Jᵀr of the LM
refiner's residuals (checked against central differences). Bad input raises a named exception,
also on a worker, which survives it.
"""

import numpy as np
import pytest
from distributed import get_task_stream

import scatterlab.bloch as bloch
import scatterlab.dask
from conftest import fixtures_dir

QUARTZ = fixtures_dir("bloch") / "synthetic_quartz"


@pytest.fixture(scope="module")
def refinement():
    return bloch.Refinement(QUARTZ)


def offsets(refinement, seed: int) -> np.ndarray:
    """A seeded random point near the start: ±0.002 in positions and U_iso."""
    print(f"offsets seed {seed}")
    return np.random.default_rng(seed).uniform(-0.002, 0.002, len(refinement.names))


def test_sharded_equals_one_process(client, refinement):
    n = refinement.frame_count
    assert n == 41 and refinement.names == ["Si1.y", "Si1.Uiso", "O1.x", "O1.y", "O1.z", "O1.Uiso"]
    # Uneven, interleaved shards (every frame once), and the default (one per worker thread).
    shards = [[0, 5, 6, 7, 40], list(range(8, 30)), [1, 2, 3, 4], list(range(30, 40))]
    for params in (np.zeros(len(refinement.names)), offsets(refinement, 2026)):
        want_loss, want_grad = refinement.loss_and_gradient(params)
        assert np.isfinite(want_loss) and want_loss > 0 and np.all(np.isfinite(want_grad))
        for s in (shards, None):
            with get_task_stream(client) as ts:
                loss, grad = scatterlab.dask.bloch_loss_and_gradient(QUARTZ, params, client, shards=s)
            workers = {t["worker"] for t in ts.data}
            print(f"loss {loss!r} vs {want_loss!r}; gradient max rel diff {np.max(np.abs(grad - want_grad) / np.abs(want_grad)):.2e}; {len(ts.data)} tasks on {len(workers)} workers")
            assert len(workers) == 2, f"only {workers} did work"
            assert abs(loss - want_loss) <= 1e-12 * abs(want_loss)
            np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=0)


def test_frame_terms_add_up_and_gradient_is_exact(refinement):
    params = offsets(refinement, 7)
    losses, grads = refinement.frame_terms(params, [40, 3, 17])
    for k, f in enumerate([40, 3, 17]):
        l1, g1 = refinement.loss_and_gradient(params, [f])
        assert losses[k] == l1 and np.array_equal(grads[k], g1)
    loss, grad = refinement.loss_and_gradient(params)
    # Central differences of the loss along O1.Uiso (Å²) and O1.x (a step along the free direction).
    for name, h in (("O1.Uiso", 1e-6), ("O1.x", 1e-6)):
        k = refinement.names.index(name)
        step = np.zeros_like(params)
        step[k] = h
        numeric = (refinement.loss_and_gradient(params + step)[0] - refinement.loss_and_gradient(params - step)[0]) / (2 * h)
        print(f"{name}: exact {grad[k]!r}, central difference {numeric!r}")
        assert abs(grad[k] - numeric) <= 1e-5 * abs(grad[k])


def test_bad_input_raises_named_errors(client, refinement):
    with pytest.raises(ValueError, match=r"params has 3 values for the refinement's 6 parameters"):
        refinement.loss_and_gradient(np.zeros(3))
    with pytest.raises(ValueError, match=r"parameter 2 \(O1.x\) is NaN"):
        refinement.loss_and_gradient(np.array([0, 0, np.nan, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"frame 41: out of range \(the plan has 41 frames"):
        refinement.frame_terms(np.zeros(6), [0, 41])
    with pytest.raises(ValueError, match=r"frame 3 is listed twice"):
        refinement.frame_terms(np.zeros(6), [3, 3])
    with pytest.raises(TypeError, match=r"frames must be integers"):
        refinement.frame_terms(np.zeros(6), [1.5])
    with pytest.raises(FileNotFoundError, match=r"no such experiment"):
        bloch.Refinement(QUARTZ / "missing")
    with pytest.raises(ValueError, match=r"objective 'r1'"):
        bloch.Refinement(QUARTZ, objective="r1")
    with pytest.raises(ValueError, match=r"frames \[40\] are in no shard"):
        scatterlab.dask.bloch_loss_and_gradient(QUARTZ, np.zeros(6), client, shards=[list(range(40))])
    # An unaligned array (as Dask unpickles out-of-band buffers) is read, not refused or trusted.
    buf = np.zeros(6 * 8 + 1, np.uint8)
    unaligned = buf[1:].view(np.float64)
    assert not unaligned.flags.aligned
    assert refinement._native.loss_and_gradient(unaligned, [0])[0] == refinement.loss_and_gradient(np.zeros(6), [0])[0]
    with pytest.raises(TypeError, match=r"params must be a 1-D float64 array \(got 1-D float32\)"):
        refinement._native.loss_and_gradient(np.zeros(6, np.float32), None)
    # On a worker: the error comes back named, and the worker goes on computing.
    bad = client.submit(bloch.shard_terms, refinement.path, "chi2", np.zeros(6), [99], pure=False)
    with pytest.raises(ValueError, match=r"frame 99: out of range"):
        bad.result()
    loss, _ = scatterlab.dask.bloch_loss_and_gradient(QUARTZ, np.zeros(6), client)
    assert loss == refinement.loss_and_gradient(np.zeros(6))[0]
