//! The 4D-STEM functions of `scatterlab._native`: acquisition info, the fused reduction of a frame
//! range, the exact merge of ranges, the probe of the merged patterns and the products after the
//! merge — each the `scatterlab-stem` code that `scatterlab stem reduce` runs, with the GIL
//! released while it reads and computes.

use std::path::PathBuf;

use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use scatterlab_core::CancelToken;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, LoadError, LoadRecord};
use scatterlab_stem::reduce::{auto_probe, finish, merge as merge_parts, reduce_range as reduce_frames, resolve_geometry, Geometry, ReduceOptions, VirtualDetector};

use crate::convert::{from_dict, to_dict, Tagged};

/// Registers the functions on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_range, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(products, m)?)?;
    crate::stem_frames::register(m)?;
    Ok(())
}

fn load_err(e: LoadError) -> PyErr {
    match e {
        LoadError::MissingFile { .. } | LoadError::MissingData { .. } => PyFileNotFoundError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

pub(crate) fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

pub(crate) fn open(master: &str) -> PyResult<(DirFileSet, Acquisition)> {
    let path = PathBuf::from(master);
    if !path.is_file() {
        return Err(PyFileNotFoundError::new_err(format!("{master}: no such master file")));
    }
    let (files, name) = DirFileSet::for_file(&path).map_err(load_err)?;
    let acq = Acquisition::open(&files, &name, &Hints::default()).map_err(load_err)?;
    Ok((files, acq))
}

/// `info(master) -> dict`: frames, detector and scan shape, pixel type, the data files with
/// their frame ranges (`parts`: `(file, first, count, present)`) and the missing files.
#[pyfunction]
fn info<'py>(py: Python<'py>, master: &str) -> PyResult<Bound<'py, PyDict>> {
    let (_, acq) = py.detach(|| open(master))?;
    let d = PyDict::new(py);
    d.set_item("n_frames", acq.n_frames())?;
    d.set_item("det", (acq.det_shape()[0], acq.det_shape()[1]))?;
    d.set_item("scan", acq.scan_shape().ok().map(|s| (s.rows, s.cols)))?;
    d.set_item("dtype", acq.pixel_kind().name())?;
    let parts = PyList::empty(py);
    for p in acq.parts() {
        parts.append((p.file.clone(), p.first_frame, p.n_frames, p.is_present()))?;
    }
    d.set_item("parts", parts)?;
    d.set_item("missing", acq.missing().iter().map(|m| m.file.clone()).collect::<Vec<_>>())?;
    Ok(d)
}

/// `reduce_range(master, first, count, center, bf, adf) -> dict`: the fused pass over frames
/// `[first, first + count)` (pixel mask applied as the CLI does). With `center` and `bf` the
/// standard detectors are summed (`adf` defaults to `[1.2 bf, 2.5 bf]`); without, only the
/// patterns, totals and centre of mass (enough for the probe).
#[pyfunction]
#[pyo3(signature = (master, first, count, center=None, bf=None, adf=None))]
fn reduce_range<'py>(py: Python<'py>, master: &str, first: u64, count: u64, center: Option<(f64, f64)>, bf: Option<f64>, adf: Option<(f64, f64)>) -> PyResult<Bound<'py, PyDict>> {
    check_geometry(center, bf, adf)?;
    let tagged = py.detach(|| -> PyResult<Tagged> {
        let (_, acq) = open(master)?;
        let end = first.checked_add(count).ok_or_else(|| PyValueError::new_err(format!("frames {first}..+{count}: past any acquisition")))?;
        if let Some(p) = acq.parts().iter().find(|p| !p.is_present() && p.first_frame < end && first < p.first_frame + p.n_frames) {
            return Err(PyFileNotFoundError::new_err(format!("frames {first}..{end} of {master}: data file {} is missing", p.file)));
        }
        let (options, geometry, detectors) = detectors_of(&acq, center, bf, adf)?;
        let partial = reduce_frames(&acq, first..end, &detectors, options.mask, &CancelToken::new()).map_err(value_err)?;
        Ok(Tagged { master: master.to_owned(), partial, geometry })
    })?;
    to_dict(py, tagged)
}

/// Checks the geometry arguments of a reduction: finite numbers, a positive BF radius.
pub(crate) fn check_geometry(center: Option<(f64, f64)>, bf: Option<f64>, adf: Option<(f64, f64)>) -> PyResult<()> {
    let finite = |v: f64, what: &str| if v.is_finite() { Ok(()) } else { Err(PyValueError::new_err(format!("{what} must be finite (got {v})"))) };
    for (v, what) in center.iter().flat_map(|c| [(c.0, "center row"), (c.1, "center col")]).chain(adf.iter().flat_map(|a| [(a.0, "adf inner"), (a.1, "adf outer")])) {
        finite(v, what)?;
    }
    if bf.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        return Err(PyValueError::new_err(format!("bf: the BF radius must be a positive number (got {})", bf.unwrap_or(f64::NAN))));
    }
    Ok(())
}

/// The options, geometry and virtual detectors of a reduction of `acq`: the standard detectors
/// with `center` and `bf`, none without (the probe's pass).
pub(crate) fn detectors_of(
    acq: &Acquisition,
    center: Option<(f64, f64)>,
    bf: Option<f64>,
    adf: Option<(f64, f64)>,
) -> PyResult<(ReduceOptions, Option<Geometry>, Vec<VirtualDetector>)> {
    let options = ReduceOptions { center: center.map(|c| [c.0, c.1]), bf_radius: bf, adf: adf.map(|a| [a.0, a.1]), ..Default::default() };
    let geometry = if center.is_some() && bf.is_some() { Some(resolve_geometry(acq, &options, None).map_err(value_err)?) } else { None };
    let detectors = geometry.map(|g| g.detectors()).unwrap_or_default();
    Ok((options, geometry, detectors))
}

/// Reads `parts` back and merges them in Rust (they must cover the acquisition exactly once).
fn merged(py: Python<'_>, parts: &Bound<'_, PyAny>) -> PyResult<Tagged> {
    let mut tagged = Vec::new();
    for p in parts.try_iter()? {
        tagged.push(from_dict(&p?)?);
    }
    let Some(head) = tagged.first() else {
        return Err(PyValueError::new_err("merge: no partial products"));
    };
    let (master, geometry) = (head.master.clone(), head.geometry);
    if let Some(t) = tagged.iter().find(|t| t.master != master || t.geometry != geometry) {
        return Err(PyValueError::new_err(format!(
            "merge: the part of frames {}.. ({}) was reduced from another file or geometry than the first ({master})",
            t.partial.first, t.master
        )));
    }
    py.detach(|| {
        let (_, acq) = open(&master)?;
        let partial = merge_parts(tagged.into_iter().map(|t| t.partial).collect(), acq.n_frames()).map_err(value_err)?;
        Ok(Tagged { master, partial, geometry })
    })
}

/// `merge(parts) -> dict`: partial products covering every frame once, combined exactly (sums
/// added, max patterns maxed, per-frame values placed) into one partial from frame 0.
#[pyfunction]
fn merge<'py>(py: Python<'py>, parts: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let m = merged(py, parts)?;
    to_dict(py, m)
}

/// `probe(parts) -> ((row, col), radius)`: the bright-field disc of the merged mean pattern
/// (`auto_probe`, as the CLI finds it without `--center`/`--bf`).
#[pyfunction]
fn probe(py: Python<'_>, parts: &Bound<'_, PyAny>) -> PyResult<((f64, f64), f64)> {
    let m = merged(py, parts)?;
    let p = auto_probe(&m.partial.result.mean_dp(), m.partial.result.det).map_err(value_err)?;
    Ok(((p.center[0], p.center[1]), p.radius))
}

/// `products(parts) -> dict[str, ndarray]`: merges `parts` (reduced with detectors) and computes
/// every product of `scatterlab stem reduce` after its fused pass (CoM, DPC, iDPC, …) with its
/// code, keyed like its `.npy` files.
#[pyfunction]
fn products<'py>(py: Python<'py>, parts: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let m = merged(py, parts)?;
    let geometry = m
        .geometry
        .ok_or_else(|| PyValueError::new_err("products: the parts were reduced without detectors; give reduce_range the center and bf (scatterlab.stem.probe finds them)"))?;
    let n_parts = parts.len().unwrap_or(0);
    let out = py.detach(|| -> PyResult<_> {
        let (files, acq) = open(&m.master)?;
        let options = ReduceOptions { center: Some(geometry.center), bf_radius: Some(geometry.bf_radius), adf: Some(geometry.adf), ..Default::default() };
        let record = LoadRecord { frames: [0, acq.n_frames()], region: None, bin: 1, mask_policy: options.mask, n_masked: m.partial.n_masked };
        let provenance = acq.provenance(&files, &record, None).map_err(load_err)?;
        let device = format!("cpu (fused pass u64, {n_parts} ranges merged)");
        finish(&acq, &options, &geometry, m.partial.result, Vec::new(), device, provenance).map_err(value_err)
    })?;
    let d = PyDict::new(py);
    for (name, shape, values) in out.integers {
        d.set_item(name, values.into_pyarray(py).reshape(shape)?)?;
    }
    for (name, shape, values) in out.reals {
        d.set_item(name, values.into_pyarray(py).reshape(shape)?)?;
    }
    Ok(d)
}
