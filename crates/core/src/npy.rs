//! NumPy `.npy` bytes (format 1.0: magic, a Python-dict header padded with spaces so that the
//! data start on a 64-byte boundary, then little-endian row-major data), the one writer behind
//! the CLI's reduction products and the app's exports. It lives here, the lowest crate both
//! depend on, because the few lines it takes do not justify a dependency (no `npyz` in the tree).

/// An element type `.npy` files are written with.
pub trait NpyElement: Copy {
    /// NumPy's `descr` of the type (little-endian, or `|` where byte order does not apply).
    const DESCR: &'static str;
    /// Appends the little-endian bytes of `self`.
    fn put_le(self, out: &mut Vec<u8>);
}

/// Implements [`NpyElement`] for a number type through its `to_le_bytes`.
macro_rules! npy_number {
    ($t:ty, $descr:literal) => {
        impl NpyElement for $t {
            const DESCR: &'static str = $descr;
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}

npy_number!(u64, "<u8");
npy_number!(f64, "<f8");
npy_number!(f32, "<f4");

/// NumPy's bool: one byte, 0 or 1.
impl NpyElement for bool {
    const DESCR: &'static str = "|b1";
    fn put_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

/// Complex numbers as `(re, im)` pairs: numpy's complex128.
impl NpyElement for [f64; 2] {
    const DESCR: &'static str = "<c16";
    fn put_le(self, out: &mut Vec<u8>) {
        self[0].put_le(out);
        self[1].put_le(out);
    }
}

/// Complex numbers as `(re, im)` f32 pairs: numpy's complex64 (the GPU's results).
impl NpyElement for [f32; 2] {
    const DESCR: &'static str = "<c8";
    fn put_le(self, out: &mut Vec<u8>) {
        self[0].put_le(out);
        self[1].put_le(out);
    }
}

/// Why `.npy` bytes could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    /// The values do not fill the shape (or its element count overflows).
    #[error(".npy array: {values} values for shape {shape:?}")]
    Shape {
        /// How many values were given.
        values: usize,
        /// The shape they were to fill.
        shape: Vec<usize>,
    },
    /// The header does not fit format 1.0's u16 length (a shape of thousands of dimensions).
    #[error(".npy header of {0} bytes exceeds format 1.0's 65535")]
    Header(usize),
}

/// The bytes of a `.npy` file (format 1.0, C order) holding `values` of `shape`.
pub fn npy_bytes<T: NpyElement>(shape: &[usize], values: &[T]) -> Result<Vec<u8>, NpyError> {
    if shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(values.len()) {
        return Err(NpyError::Shape { values: values.len(), shape: shape.to_vec() });
    }
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let shape_text = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}", T::DESCR);
    // Magic (6) + version (2) + header length (2) + header + '\n' end on a 64-byte boundary.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let header_len = u16::try_from(header.len()).map_err(|_| NpyError::Header(header.len()))?;
    let mut out = Vec::with_capacity(10 + header.len() + std::mem::size_of_val(values));
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &v in values {
        v.put_le(&mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact bytes numpy 1.x/2.x `np.save` writes for `np.array([[1, 2, 3], [4, 5, 6]], '<u8')`
    /// (header text, padding and newline included): the format other tools read our files with.
    #[test]
    fn bytes_equal_numpy_save() {
        let bytes = npy_bytes(&[2, 3], &[1u64, 2, 3, 4, 5, 6]).unwrap();
        let header = "{'descr': '<u8', 'fortran_order': False, 'shape': (2, 3), }";
        let mut want = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
        want.extend_from_slice(header.as_bytes());
        want.extend(std::iter::repeat_n(b' ', 118 - header.len() - 1));
        want.push(b'\n');
        for v in 1u64..=6 {
            want.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(bytes, want);
        assert_eq!((bytes.len() - 48) % 64, 0);
    }

    #[test]
    fn one_dimension_has_a_trailing_comma_and_every_descr_is_numpys() {
        let text = |b: &[u8]| String::from_utf8_lossy(&b[10..]).into_owned();
        assert!(text(&npy_bytes(&[3], &[true, false, true]).unwrap()).starts_with("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"));
        assert!(text(&npy_bytes(&[1], &[[1.0f64, 2.0]]).unwrap()).contains("'<c16'"));
        assert!(text(&npy_bytes(&[1], &[[1.0f32, 2.0]]).unwrap()).contains("'<c8'"));
        assert!(text(&npy_bytes(&[1], &[1.0f32]).unwrap()).contains("'<f4'"));
        assert!(text(&npy_bytes(&[1], &[1.0f64]).unwrap()).contains("'<f8'"));
        let c = npy_bytes(&[1], &[[1.5f64, -2.0]]).unwrap();
        assert_eq!(&c[c.len() - 16..], [1.5f64.to_le_bytes(), (-2.0f64).to_le_bytes()].concat());
    }

    #[test]
    fn values_that_do_not_fill_the_shape_are_named() {
        assert_eq!(npy_bytes(&[2, 2], &[1u64; 3]), Err(NpyError::Shape { values: 3, shape: vec![2, 2] }));
        assert!(matches!(npy_bytes(&[usize::MAX, 2], &[0u64]), Err(NpyError::Shape { .. })));
    }
}
