"""Reflectivity fits through Python equal `scatterlab refl fit`, and external drivers reach its χ².

- 8 whole fits spread with `client.map` over two worker processes equal 8 sequential CLI runs
  with the same seeds, bit for bit (every value, stderr, χ², evaluation and generation count);
  one in-process `fit_task` equals its CLI run too. To keep the stage short these fit the
  fixture task thinned to every 4th q point (180 points, about 0.7 s a fit).
- `fit_task(map=...)` with each DE generation's χ² computed by `client.map` tasks (two chunks of
  rows a generation) on the two workers equals the in-process `fit_task` exactly; a `map` returning the wrong count raises
  `MapError`.
- scipy's `differential_evolution(vectorized=True)` on `chi2_batch` (100 generations, its
  L-BFGS-B polish) and `least_squares` with the exact Jacobian reach the CLI's χ² within 1 %;
  emcee (`vectorize=True`) samples around that optimum and meets it within 1 %; bumps' `FitDriver`
  (DE, its `mapper` spreading each generation over the two Dask workers) reaches it too.
- Bad input (a NaN in a row, a wrong width, a malformed task) raises a named exception, also on a
  worker, which survives it.
"""

import json
import subprocess

import numpy as np
import pytest
from distributed import get_task_stream

import scatterlab.dask
import scatterlab.refl as refl
from conftest import cli_binary, fixtures_dir

TASK = fixtures_dir("refl") / "fit_task.json"
SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]


def cli_fit(task, seed: int, out) -> dict:
    """`scatterlab refl fit <task> --seed <seed>`'s result."""
    path = out / f"seed{seed}.json"
    subprocess.run([str(cli_binary()), "--quiet", "refl", "fit", str(task), "--seed", str(seed), "--out", str(path)], check=True, capture_output=True)
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def small_task(tmp_path_factory):
    """The fixture task with every 4th point of each curve (written as a task file)."""
    task = json.loads(TASK.read_text())
    for d in task["datasets"]:
        for key in ("q_inv_A", "R", "R_err", "R_true"):
            d[key] = d[key][::4]
    path = tmp_path_factory.mktemp("refl_task") / "small_task.json"
    path.write_text(json.dumps(task))
    return path


@pytest.fixture(scope="module")
def cli_fits(tmp_path_factory, small_task):
    """The CLI's fits of the thinned task for every seed, run one after another."""
    out = tmp_path_factory.mktemp("refl_cli")
    return {seed: cli_fit(small_task, seed, out) for seed in SEEDS}


@pytest.fixture(scope="module")
def cli_full(tmp_path_factory):
    """The CLI's fit of the whole fixture task (seed 3): the χ² the external drivers must reach."""
    return cli_fit(TASK, 3, tmp_path_factory.mktemp("refl_cli_full"))


@pytest.fixture(scope="module")
def objective():
    return refl.Objective(TASK)


def assert_same_fit(got: dict, want: dict, label: str):
    """Equal numbers: the CLI writes shortest round-trip decimals, so parsing gives its doubles."""
    for key in ("chi2", "n_points", "evaluations", "generations"):
        assert got[key] == want[key], f"{label}: {key} {got[key]!r} vs CLI {want[key]!r}"
    assert list(got["parameters"]) == list(want["parameters"]), f"{label}: parameter names differ"
    for name, p in want["parameters"].items():
        assert got["parameters"][name] == p, f"{label}: {name} {got['parameters'][name]} vs CLI {p}"


def test_fits_on_workers_equal_sequential_cli_fits(client, cli_fits, small_task):
    with get_task_stream(client) as ts:
        got = scatterlab.dask.fit_tasks(client, small_task, SEEDS)
    workers = {t["worker"] for t in ts.data}
    assert len(workers) == 2, f"only {workers} did work"
    for seed, fit in zip(SEEDS, got):
        print(f"seed {seed}: χ² = {fit['chi2']!r}, {fit['generations']} generations, {fit['evaluations']} evaluations")
        assert fit["method"] == "de" and fit["backend"] == "cpu f64"
        assert_same_fit(fit, cli_fits[seed], f"seed {seed}")
    # Most seeds find the optimum (χ² ≈ N = 180; a seed may stop in a local minimum).
    assert sum(f["chi2"] < 180 for f in got) >= 4


def test_fit_task_in_process_equals_cli(cli_fits, small_task):
    assert_same_fit(refl.fit_task(small_task.read_text(), seed=3), cli_fits[3], "in-process seed 3")


def test_de_map_hook_on_workers_equals_in_process_fit(client, small_task):
    """`fit_task(map=...)`: every DE generation's χ² (and the start population's) computed by Dask
    tasks on the two workers, selection in Rust, LM polish in-process: the in-process fit exactly."""
    seed = 5
    print(f"DE map= hook, seed {seed}")
    want = refl.fit_task(small_task, seed=seed)
    calls = []

    def dask_map(f, rows):
        # One Dask task per row costs ~6 ms of overhead against ~0.03 ms of χ² here (24 840 rows:
        # minutes); two contiguous chunks a generation, one per worker, take seconds.
        rows = list(rows)
        calls.append(len(rows))
        chunks = [rows[: len(rows) // 2], rows[len(rows) // 2 :]]

        def chi2_rows(chunk):
            return [f(x) for x in chunk]

        return [e for part in client.gather(client.map(chi2_rows, chunks, pure=False)) for e in part]

    with get_task_stream(client) as ts:
        got = refl.fit_task(small_task, seed=seed, map=dask_map)
    workers = {t["worker"] for t in ts.data}
    print(f"χ² = {got['chi2']!r}, {got['generations']} generations, {got['evaluations']} evaluations, {len(calls)} map calls on {sorted(workers)}")
    assert len(workers) == 2, f"only {workers} did work"
    # The start population, then one call per generation, each of the whole population (15 × 12).
    assert calls == [180] * (want["generations"] + 1)
    assert_same_fit(got, want, f"map= seed {seed}")
    assert got["stops"] == want["stops"]
    # A map that drops a row breaks the contract: a named error, not a silently shorter population.
    with pytest.raises(refl.MapError, match=r"map returned 179 χ² values for 180 rows"):
        refl.fit_task(small_task, seed=seed, map=lambda f, rows: [f(x) for x in rows][:-1])
    with pytest.raises(ValueError, match=r"map= applies to method 'de' only"):
        refl.fit_task(small_task, method="lm", map=map)


def test_objective_matches_the_fit(objective, cli_full):
    want = cli_full
    assert objective.names == list(want["parameters"]) and objective.n_points == want["n_points"] == 720
    x = np.array([p["value"] for p in want["parameters"].values()])
    r, jac = objective.residuals_and_jacobian(x)
    chi2 = objective.chi2_batch(np.stack([x, objective.start]))
    print(f"χ²(CLI optimum) = {chi2[0]!r}, Σr² = {np.sum(r * r)!r}, CLI {want['chi2']!r}")
    np.testing.assert_allclose(chi2[0], want["chi2"], rtol=1e-12)
    np.testing.assert_allclose(np.sum(r * r), chi2[0], rtol=1e-12)
    assert chi2[1] > 100 * chi2[0], "the start (bound middles) should be far worse than the optimum"
    assert jac.shape == (720, 12)
    # The exact Jacobian against central differences of the residuals (film thickness, Å).
    k, h = objective.names.index("film_thick"), 1e-4
    step = np.zeros_like(x)
    step[k] = h
    numeric = (objective.residuals(x + step) - objective.residuals(x - step)) / (2 * h)
    np.testing.assert_allclose(jac[:, k], numeric, rtol=1e-5, atol=1e-6 * np.abs(numeric).max())


def test_scipy_differential_evolution_reaches_cli_chi2(objective, cli_full):
    from scipy.optimize import differential_evolution, least_squares

    target = cli_full["chi2"]

    def chi2(x):
        # scipy hands a vectorised function (p, S) columns; its L-BFGS-B polish one 1-D vector.
        return objective.chi2_batch(x.T) if x.ndim == 2 else objective.chi2(x)

    seed = 7
    print(f"scipy DE seed {seed}")
    de = differential_evolution(chi2, objective.bounds, vectorized=True, updating="deferred", maxiter=100, tol=0.01, polish=True, rng=seed)
    print(f"scipy DE: χ² = {de.fun!r} after {de.nit} generations ({de.nfev} evaluations); CLI {target!r}")
    assert de.fun <= 1.01 * target
    # Polishing with the exact Jacobian instead lands on the CLI's optimum.
    lo, hi = objective.bounds.T
    ls = least_squares(objective.residuals, np.clip(de.x, lo, hi), jac=objective.jacobian, bounds=(lo, hi), x_scale="jac")
    print(f"least_squares: χ² = {2 * ls.cost!r}")
    assert 2 * ls.cost <= 1.01 * target


def test_emcee_on_chi2_batch(objective, cli_full):
    """emcee samples the posterior from a ball around the CLI's optimum (as its `--method mcmc`
    starts from DE + LM): it meets the optimum's χ² and its medians stay near the fitted values."""
    emcee = pytest.importorskip("emcee")

    target = cli_full["chi2"]
    lo, hi = objective.bounds.T
    x = np.array([p["value"] for p in cli_full["parameters"].values()])
    spread = np.array([p["stderr"] for p in cli_full["parameters"].values()])
    seed, walkers, steps = 11, 32, 300
    print(f"emcee seed {seed}: {walkers} walkers × {steps} steps from the CLI optimum (χ² {target!r})")
    rng = np.random.default_rng(seed)
    p0 = np.clip(x + 0.1 * spread * rng.standard_normal((walkers, len(spread))), lo, hi)
    sampler = emcee.EnsembleSampler(walkers, len(spread), objective.log_probability, vectorize=True)
    sampler.random_state = np.random.RandomState(seed).get_state()
    sampler.run_mcmc(p0, steps)
    best = -2 * sampler.get_log_prob().max()
    acceptance = float(np.mean(sampler.acceptance_fraction))
    median = np.median(sampler.get_chain(discard=steps // 2, flat=True), axis=0)
    pulls = np.abs(median - x) / spread
    print(f"emcee: best χ² {best!r}, acceptance {acceptance:.2f}, largest |median − value|/stderr {pulls.max():.2f}; CLI {target!r}")
    assert best <= 1.01 * target and 0.05 < acceptance < 0.95
    assert pulls.max() < 3


def test_bumps_fitdriver_with_mapper(client, objective, cli_full):
    """bumps' DE through `FitDriver(mapper=...)` on the batched objective, polished by bumps' LM,
    reaches the CLI's χ² within 1 %; the same DE with each generation spread over the two Dask
    workers by the mapper gives the in-process numbers exactly."""
    pytest.importorskip("bumps")
    from bumps.fitters import DEFit, FitDriver, LevenbergMarquardtFit

    import scatterlab.bumps

    target = cli_full["chi2"]
    prob = scatterlab.bumps.problem(objective)
    assert prob.labels() == objective.names
    prob.setp(np.array([p["value"] for p in cli_full["parameters"].values()]))
    np.testing.assert_allclose(2 * prob.nllf(), target, rtol=1e-12)

    def de(seed, steps, mapper):
        prob.setp(objective.start)  # bumps' DE seeds its population with the current point
        np.random.seed(seed)  # bumps' DE draws from numpy's global generator
        return FitDriver(DEFit, prob, monitors=[], mapper=mapper, steps=steps, pop=10).fit()

    seed = 13
    print(f"bumps DE seed {seed}")
    best, nllf = de(seed, 1000, scatterlab.bumps.mapper(objective))
    # bumps' Levenberg–Marquardt (on the fitness' residuals) finishes, as `refl fit` polishes DE.
    prob.setp(best)
    _, polished = FitDriver(LevenbergMarquardtFit, prob, monitors=[], steps=200).fit()
    print(f"bumps DE: χ² = {2 * nllf!r}; LM {2 * polished!r}; CLI {target!r}")
    assert 2 * polished <= 1.01 * target

    calls = []

    def dask_map(f, rows):
        calls.append(len(rows))
        half = len(rows) // 2
        parts = client.gather(client.map(lambda chunk: [f(r) for r in chunk], [rows[:half], rows[half:]], pure=False))
        return [v for part in parts for v in part]

    want = de(seed, 20, scatterlab.bumps.mapper(objective))
    with get_task_stream(client) as ts:
        got = de(seed, 20, scatterlab.bumps.mapper(objective, map=dask_map))
    workers = {t["worker"] for t in ts.data}
    print(f"20 generations: χ² {2 * got[1]!r} over {len(calls)} mapper calls on {sorted(workers)}")
    assert len(workers) == 2, f"only {workers} did work"
    assert got[1] == want[1] and np.array_equal(got[0], want[0])


def test_bad_input_raises_named_errors(client, objective):
    pop = np.tile(objective.start, (4, 1))
    pop[2, objective.names.index("film_thick")] = np.nan
    with pytest.raises(ValueError, match=r"population row 2: parameter 9 \(film_thick\) is NaN"):
        objective.chi2_batch(pop)
    with pytest.raises(ValueError, match=r"population has 5 columns for the objective's 12 free parameters"):
        objective.chi2_batch(np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"x has 3 values"):
        objective.jacobian(np.zeros(3))
    with pytest.raises(TypeError, match=r"population must be an array of numbers"):
        objective.chi2_batch(object())
    with pytest.raises(ValueError, match=r"fit task"):
        refl.fit_task('{"format": "refl-oracle-v1-fit", "stack_order": []}')
    with pytest.raises(ValueError, match=r"method 'nope'"):
        refl.fit_task(TASK, method="nope")
    with pytest.raises(FileNotFoundError, match=r"no such fit task"):
        refl.Objective("/nonexistent/task.json")
    # An unaligned population (as Dask unpickles out-of-band buffers) is read, not refused or trusted.
    buf = np.zeros(2 * 12 * 8 + 1, np.uint8)
    unaligned = buf[1:].view(np.float64).reshape(2, 12)
    unaligned[:] = objective.start
    assert not unaligned.flags.aligned
    np.testing.assert_array_equal(objective._native.chi2_batch(unaligned), objective.chi2_batch(np.tile(objective.start, (2, 1))))
    with pytest.raises(TypeError, match=r"population must be a 2-D float64 array \(got 1-D float64\)"):
        objective._native.chi2_batch(objective.start)
    # On a worker (the objective pickled over): the error comes back named; the worker lives on.
    bad = client.submit(objective.chi2_batch, pop, pure=False)
    with pytest.raises(ValueError, match=r"film_thick"):
        bad.result()
    good = client.submit(objective.chi2_batch, np.tile(objective.start, (2, 1)), pure=False).result()
    np.testing.assert_array_equal(good, objective.chi2_batch(np.tile(objective.start, (2, 1))))
