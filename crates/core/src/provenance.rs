//! Provenance: what made a result, from what, on which device.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::DeviceKind;

/// Everything needed to say where a result came from. Serialised next to every exported result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// SHA-256 (hex) of the input the result was computed from.
    pub source_sha256: String,
    /// Shape of the result, `(row, col, ...)` order.
    pub shape: Vec<usize>,
    /// Element type of the result (`"f64"`, `"f32"`, `"u64"` ...).
    pub dtype: String,
    /// Device kind that ran the computation.
    pub device: DeviceKind,
    /// Backend and adapter in words (`"cpu f64"`, `"vulkan llvmpipe"` ...).
    pub backend: String,
    /// Precision the accumulation/recursion used (`"f64"`, `"f32"`).
    pub accumulation: String,
    /// scatterlab version that produced the result.
    pub version: String,
}

impl Provenance {
    /// A record for a result of `shape`/`dtype` computed from `source` bytes.
    pub fn new(source: &[u8], shape: Vec<usize>, dtype: &str, device: DeviceKind, backend: &str, accumulation: &str) -> Self {
        Self {
            source_sha256: sha256_hex(source),
            shape,
            dtype: dtype.to_owned(),
            device,
            backend: backend.to_owned(),
            accumulation: accumulation.to_owned(),
            version: crate::VERSION.to_owned(),
        }
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
