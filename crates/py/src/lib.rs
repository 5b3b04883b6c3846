//! `scatterlab._native`: scatterlab's kernels for Python (PyO3, abi3). Every kernel releases the
//! GIL while it runs, so the threads of a Dask worker reduce in parallel; partial products travel
//! as plain dicts of NumPy arrays, which Dask pickles between processes without help.
//!
//! The pure-Python package `scatterlab` (python/scatterlab) wraps this module; see its `stem`,
//! `refl`, `bloch` and `dask` modules for the documented API.

use pyo3::prelude::*;

mod bloch;
mod convert;
mod refl;
mod stem;
mod stem_frames;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    stem::register(m)?;
    refl::register(m)?;
    bloch::register(m)
}
