//! The fused pass over frames already in memory (`reduce_frames`): for engines that read the data
//! themselves (LiberTEM's partitions), giving the partial products that `reduce_range` gives for
//! the same frames, so `merge` and `products` accept both.

use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scatterlab_stem::load::{MaskPolicy, PixelData};
use scatterlab_stem::reduce::{FusedPass, Partial};

use crate::convert::{describe, to_dict, Tagged};
use crate::stem::{check_geometry, detectors_of, open, value_err};

/// Registers the functions on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(reduce_frames, m)?)
}

/// The pixels of `obj` (an array of `T`; the caller checks its shape) copied out row-major with their shape, or `None`
/// when the dtype is not `T`. Non-contiguous arrays (a LiberTEM tile view) are copied by NumPy.
fn pixels<T: numpy::Element + Copy>(obj: &Bound<'_, PyAny>) -> PyResult<Option<(Vec<T>, Vec<usize>)>> {
    if obj.cast::<PyArrayDyn<T>>().is_err() {
        return Ok(None);
    }
    let flags = obj.getattr("flags")?;
    let plain = flags.getattr("c_contiguous")?.extract::<bool>()? && flags.getattr("aligned")?.extract::<bool>()?;
    let owned = if plain { obj.clone() } else { obj.call_method0("copy")? };
    let arr = owned.cast::<PyArrayDyn<T>>().map_err(|_| PyTypeError::new_err("frames: array changed type while copied"))?;
    let shape = arr.shape().to_vec();
    let values = arr.readonly().as_slice().map_err(|_| PyTypeError::new_err("frames: not a contiguous array"))?.to_vec();
    Ok(Some((values, shape)))
}

/// `reduce_frames(master, first, frames, center, bf, adf) -> dict`: the fused pass over the
/// in-memory `frames` (`ndarray[n, det_rows, det_cols]` of u8, u16 or u32, raw counts as stored),
/// taken to be frames `[first, first + n)` of the acquisition `master` (whose metadata gives the
/// detector, the pixel mask — applied as the CLI does — and the geometry defaults). The result
/// equals `reduce_range(master, first, n, …)`'s for the same frames.
#[pyfunction]
#[pyo3(signature = (master, first, frames, center=None, bf=None, adf=None))]
fn reduce_frames<'py>(
    py: Python<'py>,
    master: &str,
    first: u64,
    frames: &Bound<'py, PyAny>,
    center: Option<(f64, f64)>,
    bf: Option<f64>,
    adf: Option<(f64, f64)>,
) -> PyResult<Bound<'py, PyDict>> {
    check_geometry(center, bf, adf)?;
    let (mut data, shape) = if let Some((v, s)) = pixels::<u16>(frames)? {
        (PixelData::U16(v), s)
    } else if let Some((v, s)) = pixels::<u8>(frames)? {
        (PixelData::U8(v), s)
    } else if let Some((v, s)) = pixels::<u32>(frames)? {
        (PixelData::U32(v), s)
    } else {
        return Err(PyTypeError::new_err(format!("frames must be a 3-D uint8, uint16 or uint32 array (got {})", describe(frames))));
    };
    let tagged = py.detach(|| -> PyResult<Tagged> {
        let (_, acq) = open(master)?;
        let det = acq.det_shape();
        let [n, rows, cols] = shape[..] else {
            return Err(PyValueError::new_err(format!("frames must be 3-D (n, {}, {}) for {master} (got shape {shape:?})", det[0], det[1])));
        };
        if [rows, cols] != [det[0], det[1]] {
            return Err(PyValueError::new_err(format!("frames of {rows}×{cols} pixels do not match the {}×{} detector of {master}", det[0], det[1])));
        }
        if n == 0 || first.checked_add(n as u64).is_none_or(|e| e > acq.n_frames()) {
            return Err(PyValueError::new_err(format!("frames {first}..+{n}: not a non-empty range inside the {} frames of {master}", acq.n_frames())));
        }
        let (options, geometry, detectors) = detectors_of(&acq, center, bf, adf)?;
        // The CLI zeroes the mask's bad pixels before the pass (`read_frames_into`); frames from
        // another reader arrive raw, so the same pixels are zeroed here.
        let bad: Vec<usize> = match (options.mask, acq.mask()) {
            (MaskPolicy::ZeroMasked, Some(m)) => m.bad.iter().enumerate().filter(|(_, &b)| b).map(|(i, _)| i).collect(),
            _ => Vec::new(),
        };
        zero_pixels(&mut data, &bad, rows * cols);
        let mut pass = FusedPass::new([rows, cols], n, &detectors).map_err(value_err)?;
        pass.add(0, data.as_slice()).map_err(value_err)?;
        Ok(Tagged { master: master.to_owned(), partial: Partial { first, result: pass.finish(), n_masked: bad.len() }, geometry })
    })?;
    to_dict(py, tagged)
}

/// Zeroes the flat pixel indices `bad` in every frame of `px` pixels.
fn zero_pixels(data: &mut PixelData, bad: &[usize], px: usize) {
    fn zero<T: Default + Copy>(v: &mut [T], bad: &[usize], px: usize) {
        for frame in v.chunks_exact_mut(px.max(1)) {
            for &i in bad {
                if let Some(p) = frame.get_mut(i) {
                    *p = T::default();
                }
            }
        }
    }
    match data {
        PixelData::U8(v) => zero(v, bad, px),
        PixelData::U16(v) => zero(v, bad, px),
        PixelData::U32(v) => zero(v, bad, px),
        PixelData::U64(v) => zero(v, bad, px),
    }
}
