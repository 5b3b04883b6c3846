//! Writing NumPy `.npy` files: the bytes come from the workspace's one writer,
//! [`scatterlab_core::npy`]; this module only puts them in a file.

use std::io::Write;
use std::path::Path;

pub use scatterlab_core::npy::NpyElement;

/// Writes `values` with `shape` to `path`.
pub fn write_npy<T: NpyElement>(path: &Path, shape: &[usize], values: &[T]) -> Result<(), String> {
    let bytes = scatterlab_core::npy::npy_bytes(shape, values).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::File::create(path).and_then(|mut f| f.write_all(&bytes)).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
