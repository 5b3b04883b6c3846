//! Partial products as Python dicts of NumPy arrays and back. A dict (not a Python class) so that
//! Dask, pickle and users see ordinary data; reading one back checks every key and dtype and names
//! the one that is wrong.

use numpy::{IntoPyArray, PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use scatterlab_stem::reduce::{FusedResult, Geometry, Partial};

/// A partial reduction with what it needs to be merged and finished.
pub struct Tagged {
    /// The master file, as given to `reduce_range`.
    pub master: String,
    /// The products.
    pub partial: Partial,
    /// The detector geometry (`None`: no detectors, e.g. the probe's pass).
    pub geometry: Option<Geometry>,
}

/// `part` as a dict (arrays handed over without copying: NumPy owns the vectors).
pub fn to_dict<'py>(py: Python<'py>, part: Tagged) -> PyResult<Bound<'py, PyDict>> {
    let Tagged { master, partial, geometry } = part;
    let r = partial.result;
    let d = PyDict::new(py);
    d.set_item("master", master)?;
    d.set_item("first", partial.first)?;
    d.set_item("count", r.n_frames)?;
    d.set_item("frames_done", r.frames_done)?;
    d.set_item("n_masked", partial.n_masked)?;
    d.set_item("det", (r.det[0], r.det[1]))?;
    d.set_item("sum_dp", r.sum_dp.into_pyarray(py))?;
    d.set_item("max_dp", r.max_dp.into_pyarray(py))?;
    d.set_item("total", r.total.into_pyarray(py))?;
    let [row, col] = r.com_raw;
    d.set_item("com_row_raw", row.into_pyarray(py))?;
    d.set_item("com_col_raw", col.into_pyarray(py))?;
    let dets = PyList::empty(py);
    for (name, pixels, values) in r.detectors {
        dets.append((name, pixels, values.into_pyarray(py)))?;
    }
    d.set_item("detectors", dets)?;
    let g = geometry.map(|g| (g.center[0], g.center[1], g.bf_radius, g.adf[0], g.adf[1], g.auto_probe));
    d.set_item("geometry", g)?;
    Ok(d)
}

fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?.ok_or_else(|| PyKeyError::new_err(format!("partial products: key '{key}' missing (not a dict from scatterlab.stem.reduce_range)")))
}

fn scalar<'py, T: for<'a> FromPyObject<'a, 'py>>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<T> {
    item(d, key)?.extract::<T>().map_err(|_| PyTypeError::new_err(format!("partial products: '{key}' must be {what}")))
}

/// A 1-D array of `T` under `key` (copied out: the merge owns its result).
fn array<'py, T: numpy::Element + Copy>(obj: &Bound<'py, PyAny>, key: &str, dtype: &str) -> PyResult<Vec<T>> {
    let wrong = || PyTypeError::new_err(format!("partial products: '{key}' must be a 1-D {dtype} array (got {})", describe(obj)));
    obj.cast::<PyArray1<T>>().map_err(|_| wrong())?;
    // Arrays unpickled from out-of-band buffers (Dask moves them so) may be unaligned or strided;
    // reading those through a slice would be undefined, so NumPy copies them first.
    let flags = obj.getattr("flags")?;
    let plain = flags.getattr("aligned")?.extract::<bool>()? && flags.getattr("c_contiguous")?.extract::<bool>()?;
    let owned = if plain { obj.clone() } else { obj.call_method0("copy")? };
    let arr = owned.cast::<PyArray1<T>>().map_err(|_| wrong())?;
    Ok(arr.readonly().as_slice().map_err(|_| wrong())?.to_vec())
}

/// A vector and a matrix handed to Python (residuals and Jacobian, per-frame losses and gradients).
pub(crate) type VectorAndMatrix<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, numpy::PyArray2<f64>>);

/// A float64 array of `ndim` dimensions copied out row-major, with its shape. Arrays that are
/// unaligned or strided (Dask's out-of-band pickle buffers, slices) are copied by NumPy first:
/// a view of them through a slice would be undefined.
pub(crate) fn floats(obj: &Bound<'_, PyAny>, ndim: usize, what: &str) -> PyResult<(Vec<f64>, Vec<usize>)> {
    let wrong = || PyTypeError::new_err(format!("{what} must be a {ndim}-D float64 array (got {})", describe(obj)));
    let arr = obj.cast::<PyArrayDyn<f64>>().map_err(|_| wrong())?;
    if arr.ndim() != ndim {
        return Err(wrong());
    }
    let flags = obj.getattr("flags")?;
    let plain = flags.getattr("aligned")?.extract::<bool>()? && flags.getattr("c_contiguous")?.extract::<bool>()?;
    let owned = if plain { obj.clone() } else { obj.call_method0("copy")? };
    let arr = owned.cast::<PyArrayDyn<f64>>().map_err(|_| wrong())?;
    let shape = arr.shape().to_vec();
    let values = arr.readonly().as_slice().map_err(|_| wrong())?.to_vec();
    Ok((values, shape))
}

/// How `obj` looks in an error message: "2-D float32" for an array, else its type name.
pub(crate) fn describe(obj: &Bound<'_, PyAny>) -> String {
    let dtype = obj.getattr("dtype").and_then(|d| d.str()).map(|s| s.to_string());
    let ndim = obj.getattr("ndim").and_then(|n| n.extract::<usize>());
    match (dtype, ndim) {
        (Ok(t), Ok(n)) => format!("{n}-D {t}"),
        _ => obj.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string()),
    }
}

/// Reads a dict made by [`to_dict`] back.
pub fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Tagged> {
    let d = d.cast::<PyDict>().map_err(|_| PyTypeError::new_err(format!("partial products must be dicts from scatterlab.stem.reduce_range (got {})", describe(d))))?;
    let det: (usize, usize) = scalar(d, "det", "a (rows, cols) pair")?;
    let count: usize = scalar(d, "count", "a frame count")?;
    let mut detectors = Vec::new();
    for entry in item(d, "detectors")?.try_iter()? {
        let (name, pixels, values): (String, usize, Bound<'_, PyAny>) =
            entry?.extract().map_err(|_| PyTypeError::new_err("partial products: 'detectors' must hold (name, pixels, array) triples"))?;
        let key = format!("detectors[{name}]");
        detectors.push((name, pixels, array::<u64>(&values, &key, "uint64")?));
    }
    let geometry: Option<(f64, f64, f64, f64, f64, bool)> = scalar(d, "geometry", "None or (row, col, bf, adf_inner, adf_outer, auto)")?;
    let result = FusedResult {
        det: [det.0, det.1],
        n_frames: count,
        frames_done: scalar(d, "frames_done", "a frame count")?,
        sum_dp: array(&item(d, "sum_dp")?, "sum_dp", "uint64")?,
        max_dp: array(&item(d, "max_dp")?, "max_dp", "uint64")?,
        total: array(&item(d, "total")?, "total", "uint64")?,
        detectors,
        com_raw: [array(&item(d, "com_row_raw")?, "com_row_raw", "float64")?, array(&item(d, "com_col_raw")?, "com_col_raw", "float64")?],
    };
    Ok(Tagged {
        master: scalar(d, "master", "the master file's path (str)")?,
        partial: Partial { first: scalar(d, "first", "a frame index")?, result, n_masked: scalar(d, "n_masked", "a pixel count")? },
        geometry: geometry.map(|(r, c, bf, a, b, auto)| Geometry { center: [r, c], bf_radius: bf, adf: [a, b], auto_probe: auto }),
    })
}
