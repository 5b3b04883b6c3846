//! Content hashes of source files for provenance: full SHA-256, or a documented sampled
//! SHA-256 for sources too large to read whole (20 GB in a browser takes minutes).
//!
//! `Sha256SampledV1` (CONVENTIONS.md, "Provenance hashes") is SHA-256 over, in order:
//! the file length as u64 little-endian; the first 1 MiB; the last 1 MiB; and 62 windows of
//! 64 KiB starting at `floor(i × (len − 64 KiB) / 61)` for i = 0..62 (each clipped to the file;
//! offsets 0 when the file is shorter than 64 KiB). It changes with the length and with any
//! byte in the sampled 5.9 MiB, not with others: it identifies a file, it does not verify it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{H5Error, Result};
use crate::storage::DynStorage;

/// Which hash a provenance record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashKind {
    /// SHA-256 of every byte.
    Sha256Full,
    /// SHA-256 of the length and 5.9 MiB of samples (module docs).
    Sha256SampledV1,
}

/// Sources up to this many bytes in total are hashed whole by default (natively).
pub const FULL_HASH_LIMIT: u64 = 2 << 30;
/// Bytes read per request while hashing whole.
const READ_BLOCK: u64 = 4 << 20;
const EDGE: u64 = 1 << 20;
const WINDOW: u64 = 64 << 10;
const WINDOWS: u64 = 62;

impl HashKind {
    /// The default for sources of `total_bytes` together: full below [`FULL_HASH_LIMIT`], else sampled.
    pub fn default_for(total_bytes: u64) -> Self {
        if total_bytes <= FULL_HASH_LIMIT {
            Self::Sha256Full
        } else {
            Self::Sha256SampledV1
        }
    }
}

/// Lower-case hex hash of `storage` (`name` for errors).
pub fn hash_storage(storage: &DynStorage, name: &str, kind: HashKind) -> Result<String> {
    let len = storage.len();
    let mut h = Sha256::new();
    let ranges: Vec<(u64, u64)> = match kind {
        HashKind::Sha256Full => (0..len.div_ceil(READ_BLOCK)).map(|i| (i * READ_BLOCK, READ_BLOCK)).collect(),
        HashKind::Sha256SampledV1 => {
            // The length goes in first: files that differ only in unsampled bytes but not in
            // length are the only collisions by construction.
            h.update(len.to_le_bytes());
            let span = len.saturating_sub(WINDOW);
            let mut r = vec![(0, EDGE), (len.saturating_sub(EDGE), EDGE)];
            r.extend((0..WINDOWS).map(|i| (i * span / (WINDOWS - 1), WINDOW)));
            r
        }
    };
    for (off, n) in ranges {
        let n = n.min(len.saturating_sub(off));
        if n == 0 {
            continue;
        }
        let n = usize::try_from(n).map_err(|_| H5Error::Io { file: name.to_string(), detail: format!("hashing bytes {off}..+{n}: larger than memory") })?;
        let buf = storage.read_range(off, n).map_err(|e| H5Error::Io { file: name.to_string(), detail: format!("hashing bytes {off}..+{n}: {e}") })?;
        h.update(&buf[..]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
