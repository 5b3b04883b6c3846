//! The quick view's dimension mapping (h5web's dimension mapper): which dataset dimension runs
//! along x (and y, for a heatmap), a slider index for every other dimension, and reading just
//! that slice — from an HDF5 dataset through hdf5-reader's hyperslab read (only the chunks it
//! touches are decoded) or from frames in memory. Long axes are read with a stride so a view
//! never holds more than [`MAX_SIDE`]² (heatmap) or [`MAX_LINE`] (line) values.

use hdf5_reader::{Datatype, H5Type, SliceInfo, SliceInfoElem};
use scatterlab_hdf5::H5File;

/// Most samples along a heatmap axis (longer axes are strided).
pub const MAX_SIDE: u64 = 1024;
/// Most samples of a line.
pub const MAX_LINE: u64 = 100_000;

/// Why a slice could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SliceError {
    /// The HDF5 read failed (the message names the file and object).
    #[error("{0}")]
    Read(#[from] scatterlab_hdf5::H5Error),
    /// The element type has no numbers to show.
    #[error("{path}: cannot show {dtype} values")]
    Type {
        /// The dataset.
        path: String,
        /// Its element type.
        dtype: String,
    },
    /// The mapping does not fit the dataset.
    #[error("{path}: {message}")]
    Mapping {
        /// The dataset.
        path: String,
        /// What does not fit.
        message: String,
    },
}

/// Which dimensions are shown and where the others are cut.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mapping {
    /// The dataset's shape.
    pub shape: Vec<u64>,
    /// The dimension along x (a heatmap's columns, a line's abscissa).
    pub x: usize,
    /// The dimension along y (a heatmap's rows); `None` = a line.
    pub y: Option<usize>,
    /// An index per dimension (the sliders; those of `x` and `y` are unused).
    pub index: Vec<u64>,
}

/// A slice as read: `rows × cols` values, row-major (a line has one row).
#[derive(Clone, Debug, PartialEq)]
pub struct Slice2 {
    /// Rows (y samples; 1 for a line).
    pub rows: usize,
    /// Columns (x samples).
    pub cols: usize,
    /// Stride along y and x (1 = every element).
    pub step: [u64; 2],
    /// The values.
    pub values: Vec<f64>,
}

impl Mapping {
    /// The default view of `shape`: a line for 1-D, the last two dimensions as a heatmap
    /// otherwise, every slider at 0.
    pub fn new(shape: &[u64]) -> Self {
        let n = shape.len();
        let (x, y) = if n >= 2 { (n - 1, Some(n - 2)) } else { (0, None) };
        Self { shape: shape.to_vec(), x, y, index: vec![0; n] }
    }

    /// The dimensions with a slider (neither x nor y).
    pub fn sliders(&self) -> Vec<usize> {
        (0..self.shape.len()).filter(|&d| d != self.x && Some(d) != self.y).collect()
    }

    /// Puts dimension `d` on x (swapping with y if it was there).
    pub fn set_x(&mut self, d: usize) {
        if self.y == Some(d) {
            self.y = Some(self.x);
        }
        self.x = d;
    }

    /// Puts dimension `d` on y (swapping with x if it was there); `None` shows a line.
    pub fn set_y(&mut self, d: Option<usize>) {
        if d == Some(self.x) {
            if let Some(old) = self.y {
                self.x = old;
            }
        }
        self.y = d;
    }

    /// The stride of each shown axis: (y, x).
    fn steps(&self) -> [u64; 2] {
        let len = |d: Option<usize>| d.and_then(|d| self.shape.get(d)).copied().unwrap_or(1);
        let max = if self.y.is_some() { MAX_SIDE } else { MAX_LINE };
        [len(self.y).div_ceil(max).max(1), len(Some(self.x)).div_ceil(max).max(1)]
    }

    /// Checks the mapping against the shape (dimensions exist, indices in range).
    fn check(&self, path: &str) -> Result<(), SliceError> {
        let err = |message: String| Err(SliceError::Mapping { path: path.to_owned(), message });
        let n = self.shape.len();
        if n == 0 || self.x >= n || self.y.is_some_and(|y| y >= n || y == self.x) || self.index.len() != n {
            return err(format!("no view of {n} dimensions with x = {}, y = {:?}", self.x, self.y));
        }
        if self.shape.contains(&0) {
            return err("the dataset is empty".to_owned());
        }
        for d in self.sliders() {
            if self.index[d] >= self.shape[d] {
                return err(format!("index {} beyond dimension {d} of {}", self.index[d], self.shape[d]));
            }
        }
        Ok(())
    }

    /// The samples of the shown axes, (y, x).
    fn counts(&self) -> [usize; 2] {
        let [sy, sx] = self.steps();
        let ny = self.y.map_or(1, |y| self.shape[y].div_ceil(sy));
        [ny as usize, self.shape[self.x].div_ceil(sx) as usize]
    }
}

/// Reads the slice `mapping` shows of the dataset at `path` in `file`.
pub fn read_h5(file: &H5File, path: &str, mapping: &Mapping) -> Result<Slice2, SliceError> {
    mapping.check(path)?;
    let ds = file.reader().dataset(path).map_err(|e| file.err(path, e))?;
    let step = mapping.steps();
    let selections = (0..mapping.shape.len())
        .map(|d| {
            let s = if d == mapping.x {
                Some(step[1])
            } else if Some(d) == mapping.y {
                Some(step[0])
            } else {
                None
            };
            match s {
                Some(step) => SliceInfoElem::Slice { start: 0, end: mapping.shape[d], step },
                None => SliceInfoElem::Index(mapping.index[d]),
            }
        })
        .collect();
    let sel = SliceInfo { selections };
    let values = match ds.dtype() {
        Datatype::FixedPoint { size: 1, signed: false, .. } => read::<u8>(&ds, &sel, f64::from),
        Datatype::FixedPoint { size: 1, signed: true, .. } => read::<i8>(&ds, &sel, f64::from),
        Datatype::FixedPoint { size: 2, signed: false, .. } => read::<u16>(&ds, &sel, f64::from),
        Datatype::FixedPoint { size: 2, signed: true, .. } => read::<i16>(&ds, &sel, f64::from),
        Datatype::FixedPoint { size: 4, signed: false, .. } => read::<u32>(&ds, &sel, f64::from),
        Datatype::FixedPoint { size: 4, signed: true, .. } => read::<i32>(&ds, &sel, f64::from),
        Datatype::FixedPoint { size: 8, signed: false, .. } => read::<u64>(&ds, &sel, |v| v as f64),
        Datatype::FixedPoint { size: 8, signed: true, .. } => read::<i64>(&ds, &sel, |v| v as f64),
        Datatype::FloatingPoint { size: 4, .. } => read::<f32>(&ds, &sel, f64::from),
        Datatype::FloatingPoint { size: 8, .. } => read::<f64>(&ds, &sel, |v| v),
        other => return Err(SliceError::Type { path: path.to_owned(), dtype: scatterlab_hdf5::values::dtype_name(other) }),
    }
    .map_err(|e| file.err(path, e))?;
    let [rows, cols] = mapping.counts();
    if values.len() != rows * cols {
        return Err(SliceError::Mapping { path: path.to_owned(), message: format!("read {} values for a {rows} × {cols} view", values.len()) });
    }
    // The read keeps dataset order; a y dimension after x comes back transposed.
    let values = if mapping.y.is_some_and(|y| y > mapping.x) { transpose(&values, cols, rows) } else { values };
    Ok(Slice2 { rows, cols, step, values })
}

fn read<T: H5Type + Copy>(ds: &hdf5_reader::Dataset, sel: &SliceInfo, f: fn(T) -> f64) -> hdf5_reader::error::Result<Vec<f64>> {
    Ok(ds.read_slice::<T>(sel)?.iter().map(|&v| f(v)).collect())
}

/// `values` of a `rows × cols` row-major array, transposed.
fn transpose(values: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols).flat_map(|c| (0..rows).map(move |r| values[r * cols + c])).collect()
}

/// Reads the slice `mapping` shows of a row-major array of which `get(flat index)` returns an
/// element (`None` = not available: shown as NaN), e.g. frames in memory.
pub fn read_flat(path: &str, mapping: &Mapping, get: impl Fn(usize) -> Option<f64>) -> Result<Slice2, SliceError> {
    mapping.check(path)?;
    let n = mapping.shape.len();
    let mut strides = vec![1usize; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * mapping.shape[d + 1] as usize;
    }
    let base: usize = mapping.sliders().iter().map(|&d| mapping.index[d] as usize * strides[d]).sum();
    let step = mapping.steps();
    let [rows, cols] = mapping.counts();
    let (sy, sx) = (mapping.y.map_or(0, |y| strides[y] * step[0] as usize), strides[mapping.x] * step[1] as usize);
    let values = (0..rows).flat_map(|r| (0..cols).map(move |c| base + r * sy + c * sx)).map(|i| get(i).unwrap_or(f64::NAN)).collect();
    Ok(Slice2 { rows, cols, step, values })
}
