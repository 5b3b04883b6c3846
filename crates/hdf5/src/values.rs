//! Small values: numbers and strings of attributes and metadata datasets, whatever integer or
//! float type the writer chose, and short previews of them for the file browser.
//!
//! hdf5-reader's typed reads need the exact element type (`read_scalar::<u32>` fails on a u64
//! attribute), and metadata writers differ (Dectris stores `nimages` as u32 or u64, sizes as
//! f32 or f64), so these helpers switch on the stored [`Datatype`].

use hdf5_reader::{Attribute, ByteOrder, Datatype};

use crate::error::{H5Error, Result};
use crate::file::H5File;

/// Most elements [`dataset_numbers`] reads (4 M: a 2048 × 2048 pixel mask): metadata only.
pub const MAX_METADATA_ELEMENTS: u64 = 1 << 22;

/// Most bytes a metadata dataset ([`dataset_numbers`], [`dataset_string`]) may hold (32 MiB: the
/// largest mask in f64), checked before anything is allocated for it: a forged dataspace or
/// string length in a small file may claim gigabytes.
pub const MAX_METADATA_BYTES: u64 = 8 * MAX_METADATA_ELEMENTS;

/// A short name of a datatype: `u16`, `f64`, `i32 be`, `string[17]`, `vlen string`, `compound{a,b}`, ….
pub fn dtype_name(dt: &Datatype) -> String {
    use hdf5_reader::datatype_api::StringSize;
    let be = |o: &ByteOrder| if *o == ByteOrder::BigEndian { " be" } else { "" };
    match dt {
        Datatype::FixedPoint { size, signed, byte_order } => {
            format!("{}{}{}", if *signed { "i" } else { "u" }, u32::from(*size) * 8, be(byte_order))
        }
        Datatype::FloatingPoint { size, byte_order } => format!("f{}{}", u32::from(*size) * 8, be(byte_order)),
        Datatype::String { size: StringSize::Fixed(n), .. } => format!("string[{n}]"),
        Datatype::String { size: StringSize::Variable, .. } => "vlen string".into(),
        Datatype::Compound { fields, .. } => {
            format!("compound{{{}}}", fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(","))
        }
        Datatype::Array { base, dims } => format!("array{dims:?} of {}", dtype_name(base)),
        Datatype::Enum { base, .. } => format!("enum of {}", dtype_name(base)),
        Datatype::VarLen { base, kind, .. } => match kind {
            hdf5_reader::datatype_api::VarLenKind::String => "vlen string".into(),
            _ => format!("vlen of {}", dtype_name(base)),
        },
        Datatype::Opaque { size, tag } => format!("opaque[{size}] {tag}"),
        Datatype::Reference { .. } => "reference".into(),
        Datatype::Bitfield { size, .. } => format!("bitfield{}", u32::from(*size) * 8),
    }
}

/// Decodes up to `max` numbers from `raw` (elements of `dt` in file byte order) as f64;
/// `None` when `dt` is not an integer or float of 1, 2, 4 or 8 bytes. u64/i64 beyond 2^53
/// round, which metadata never reaches.
pub fn numbers(dt: &Datatype, raw: &[u8], max: usize) -> Option<Vec<f64>> {
    let (size, order, kind) = match dt {
        Datatype::FixedPoint { size, signed, byte_order } => (*size as usize, *byte_order, if *signed { 'i' } else { 'u' }),
        Datatype::FloatingPoint { size, byte_order } => (*size as usize, *byte_order, 'f'),
        Datatype::Enum { base, .. } => return numbers(base, raw, max),
        _ => return None,
    };
    if !matches!((kind, size), ('i' | 'u', 1 | 2 | 4 | 8) | ('f', 4 | 8)) {
        return None;
    }
    let mut out = Vec::with_capacity((raw.len() / size).min(max));
    for chunk in raw.chunks_exact(size).take(max) {
        let mut b = [0u8; 8];
        if order == ByteOrder::BigEndian {
            for (d, s) in b.iter_mut().zip(chunk.iter().rev()) {
                *d = *s;
            }
        } else {
            b[..size].copy_from_slice(chunk);
        }
        let u = u64::from_le_bytes(b);
        out.push(match (kind, size) {
            ('f', 4) => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ('f', _) => f64::from_bits(u),
            ('i', _) => {
                // Sign-extend from `size` bytes.
                // `size` is 1..=8 (checked above), so the shift is 0..=56.
                let shift = 64 - 8 * u32::try_from(size).unwrap_or(8);
                (((u << shift) as i64) >> shift) as f64
            }
            _ => u as f64,
        });
    }
    Some(out)
}

/// The strings of a string attribute (fixed or variable length), if it is one.
pub fn attr_strings(a: &Attribute) -> Option<Vec<String>> {
    match &a.datatype {
        Datatype::String { .. } | Datatype::VarLen { kind: hdf5_reader::datatype_api::VarLenKind::String, .. } => {
            if let Some(s) = &a.decoded_strings {
                return Some(s.clone());
            }
            if a.shape.is_empty() {
                a.read_string().ok().map(|s| vec![s])
            } else {
                a.read_strings().ok()
            }
        }
        _ => None,
    }
}

/// The numbers of a numeric attribute (at most `max`).
pub fn attr_numbers(a: &Attribute, max: usize) -> Option<Vec<f64>> {
    numbers(&a.datatype, &a.raw_data, max)
}

/// A one-line preview of an attribute's value: numbers or strings, the first few with `…` and
/// the count when there are more; the datatype in brackets otherwise.
pub fn attr_preview(a: &Attribute) -> String {
    const SHOW: usize = 8;
    let total = a.num_elements().unwrap_or(0);
    let more = |shown: usize| if total > shown as u64 { format!(", … ({total} values)") } else { String::new() };
    if let Some(v) = attr_numbers(a, SHOW) {
        let body = v.iter().map(|x| format_number(*x)).collect::<Vec<_>>().join(", ");
        return if a.shape.is_empty() { body } else { format!("[{body}{}]", more(v.len())) };
    }
    if let Some(s) = attr_strings(a) {
        let shown: Vec<String> = s.iter().take(SHOW).map(|x| format!("{:?}", truncate(x, 120))).collect();
        return if a.shape.is_empty() && shown.len() == 1 { shown.concat() } else { format!("[{}{}]", shown.join(", "), more(shown.len())) };
    }
    format!("<{}>", dtype_name(&a.datatype))
}

/// Integers without a fraction, the rest with Rust's shortest round-trip form.
pub fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        #[allow(clippy::cast_possible_truncation)] // integral and below 1e15: exact in an i64
        let i = x as i64;
        format!("{i}")
    } else {
        format!("{x}")
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Every element of a small numeric dataset as f64 (at most [`MAX_METADATA_ELEMENTS`]), read
/// through hdf5-reader with our filters. Errors name the file and `path`.
pub fn dataset_numbers(file: &H5File, path: &str) -> Result<Vec<f64>> {
    let ds = file.reader().dataset(path).map_err(|e| file.err(path, e))?;
    let n = ds.num_elements().map_err(|e| file.err(path, e))?;
    if n > MAX_METADATA_ELEMENTS {
        return Err(H5Error::Limit { file: file.name().to_string(), object: path.to_string(), what: "metadata dataset".into(), requested: n, limit: MAX_METADATA_ELEMENTS });
    }
    check_metadata_bytes(file, path, &ds)?;
    let raw = ds.read_raw_bytes().map_err(|e| file.err(path, e))?;
    // n ≤ MAX_METADATA_ELEMENTS (checked above) fits a usize on every target.
    numbers(ds.dtype(), &raw, usize::try_from(n).unwrap_or(0)).ok_or_else(|| H5Error::Format {
        file: file.name().to_string(),
        object: path.to_string(),
        detail: format!("expected numbers, found {}", dtype_name(ds.dtype())),
    })
}

/// The first string of a string dataset (Dectris stores `description` and dates this way).
/// At most [`MAX_METADATA_BYTES`] of stored elements (a vlen string's element is its heap
/// reference); a larger dataset is an [`H5Error::Limit`], refused before it is read.
pub fn dataset_string(file: &H5File, path: &str) -> Result<String> {
    let ds = file.reader().dataset(path).map_err(|e| file.err(path, e))?;
    check_metadata_bytes(file, path, &ds)?;
    ds.read_string().or_else(|_| ds.read_strings().map(|v| v.into_iter().next().unwrap_or_default())).map_err(|e| file.err(path, e))
}

/// Refuses a metadata dataset whose elements take more than [`MAX_METADATA_BYTES`].
fn check_metadata_bytes(file: &H5File, path: &str, ds: &hdf5_reader::Dataset) -> Result<()> {
    let bytes = ds.raw_byte_len().map_err(|e| file.err(path, e))? as u64;
    if bytes > MAX_METADATA_BYTES {
        return Err(H5Error::Limit { file: file.name().to_string(), object: path.to_string(), what: "metadata dataset bytes".into(), requested: bytes, limit: MAX_METADATA_BYTES });
    }
    Ok(())
}

/// The numbers of attribute `name` of the object at `path` (group or dataset).
pub fn attribute_numbers(file: &H5File, path: &str, name: &str) -> Result<Vec<f64>> {
    let h5 = file.reader();
    let object = format!("{path}@{name}");
    let attr = match h5.dataset(path) {
        Ok(ds) => ds.attribute(name),
        Err(_) => h5.group(path).and_then(|g| g.attribute(name)),
    }
    .map_err(|e| file.err(&object, e))?;
    attr_numbers(&attr, usize::try_from(MAX_METADATA_ELEMENTS).unwrap_or(usize::MAX)).ok_or_else(|| H5Error::Format {
        file: file.name().to_string(),
        object,
        detail: format!("expected numbers, found {}", dtype_name(&attr.datatype)),
    })
}
