//! Writing NumPy `.npy` files (format 1.0: magic, a Python-dict header padded to 64 bytes,
//! little-endian row-major data) — the handful of lines it takes does not justify a dependency.

use std::io::Write;
use std::path::Path;

/// Element types written here.
pub trait NpyElement: Copy {
    /// NumPy `descr`.
    const DESCR: &'static str;
    /// Little-endian bytes.
    fn le(self, out: &mut Vec<u8>);
}

impl NpyElement for u64 {
    const DESCR: &'static str = "<u8";
    fn le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl NpyElement for f64 {
    const DESCR: &'static str = "<f8";
    fn le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl NpyElement for bool {
    const DESCR: &'static str = "|b1";
    fn le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

/// Complex numbers as `(re, im)` pairs: numpy's complex128.
impl NpyElement for [f64; 2] {
    const DESCR: &'static str = "<c16";
    fn le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self[0].to_le_bytes());
        out.extend_from_slice(&self[1].to_le_bytes());
    }
}

impl NpyElement for f32 {
    const DESCR: &'static str = "<f4";
    fn le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// Complex numbers as `(re, im)` f32 pairs: numpy's complex64 (the GPU's results).
impl NpyElement for [f32; 2] {
    const DESCR: &'static str = "<c8";
    fn le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self[0].to_le_bytes());
        out.extend_from_slice(&self[1].to_le_bytes());
    }
}

/// The bytes of a `.npy` file holding `values` with `shape`.
pub fn npy_bytes<T: NpyElement>(shape: &[usize], values: &[T]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}", T::DESCR);
    // magic (6) + version (2) + header length (2) + header + '\n' is a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + values.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &v in values {
        v.le(&mut out);
    }
    out
}

/// Writes `values` with `shape` to `path`.
pub fn write_npy<T: NpyElement>(path: &Path, shape: &[usize], values: &[T]) -> Result<(), String> {
    let bytes = npy_bytes(shape, values);
    std::fs::File::create(path).and_then(|mut f| f.write_all(&bytes)).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
