"""Shared fixtures of the scatterlab Python tests: the fixtures folder, the CLI binary and the
products of ``scatterlab stem reduce`` (its ``.npy`` files), a two-process Dask cluster."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]


def stem_dir() -> Path:
    """The 4D-STEM fixtures: $SCATTERLAB_FIXTURES/stem, else the repository's ../shared/fixtures/stem."""
    root = os.environ.get("SCATTERLAB_FIXTURES") or REPO.parent / "shared" / "fixtures"
    return Path(root) / "stem"


def fixtures_dir(kind: str) -> Path:
    """$SCATTERLAB_FIXTURES/<kind>, else the repository's ../shared/fixtures/<kind> (refl, bloch)."""
    root = os.environ.get("SCATTERLAB_FIXTURES") or REPO.parent / "shared" / "fixtures"
    return Path(root) / kind


def cli_binary() -> Path:
    """$SCATTERLAB_CLI, else the newest `scatterlab` in the cargo target dir (scripts/env.sh's)."""
    if os.environ.get("SCATTERLAB_CLI"):
        return Path(os.environ["SCATTERLAB_CLI"])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or Path.home() / ".cache" / "scatterlab" / "target")
    found = [p for p in (target / "debug" / "scatterlab", target / "release" / "scatterlab") if p.is_file()]
    if not found:
        pytest.fail(f"no scatterlab CLI under {target} (build it: cargo build -p scatterlab-cli) or set SCATTERLAB_CLI")
    return max(found, key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="session")
def cli_reduce(tmp_path_factory):
    """`cli_reduce(name, *flags)`: the CLI's products of `<name>_master.h5` as a dict of arrays."""
    cache = {}

    def run(name: str, *flags: str) -> dict:
        key = (name, flags)
        if key not in cache:
            out = tmp_path_factory.mktemp(f"cli_{name}")
            master = stem_dir() / f"{name}_master.h5"
            subprocess.run([str(cli_binary()), "--quiet", "stem", "reduce", str(master), *flags, "--out", str(out)], check=True, capture_output=True)
            cache[key] = {p.stem: np.load(p) for p in out.glob("*.npy")}
        return cache[key]

    return run


@pytest.fixture(scope="module")
def client():
    """Two worker processes with one thread each."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c
