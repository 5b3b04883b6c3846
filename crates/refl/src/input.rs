//! Reading input text: bounded in size, and JSON whose syntax errors keep their real location.
//!
//! Why two JSON passes: serde reports the first error it meets, and a struct that denies unknown
//! keys meets an unknown key before a syntax error further on ("unknown field `description` …
//! column 46" for a file broken at line 80). A syntax-only pass first (into `IgnoredAny`, no
//! allocation per value) reports the real line and column; the typed pass then reports typos and
//! wrong types with theirs.

use std::io::Read;

use serde::de::{DeserializeOwned, IgnoredAny};

#[cfg(not(target_arch = "wasm32"))] // only the file reader uses it; wasm reads no files
use crate::limits::MAX_INPUT_BYTES;
use crate::ReflError;

/// Reads all of `reader` as UTF-8 text, at most `limit` bytes: a longer input (or an endless
/// one, `/dev/zero`) stops at the limit with an error naming `what` and the limit.
pub fn read_text_limited(reader: impl Read, limit: u64, what: &str) -> Result<String, ReflError> {
    let mut bytes = Vec::new();
    // One byte past the limit tells "exactly at the limit" from "longer".
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| ReflError::Format { what: what.to_owned(), message: e.to_string() })?;
    if bytes.len() as u64 > limit {
        return Err(ReflError::Format { what: what.to_owned(), message: format!("is larger than the input limit of {limit} bytes") });
    }
    String::from_utf8(bytes).map_err(|e| ReflError::Format { what: what.to_owned(), message: format!("is not UTF-8 text ({e})") })
}

/// Reads a file as text under [`MAX_INPUT_BYTES`]; errors name the path.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_file_text(path: &std::path::Path) -> Result<String, ReflError> {
    let what = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| ReflError::Format { what: what.clone(), message: e.to_string() })?;
    // A regular file's length is known: refuse a huge one without reading a byte of it.
    if let Ok(meta) = file.metadata() {
        if meta.is_file() && meta.len() > MAX_INPUT_BYTES {
            return Err(ReflError::Format { what, message: format!("is {} bytes, larger than the input limit of {MAX_INPUT_BYTES} bytes", meta.len()) });
        }
    }
    read_text_limited(file, MAX_INPUT_BYTES, &what)
}

/// Parses JSON text into `T`. A syntax error is reported at its real line and column, before
/// any typed error (unknown key, wrong type) that comes earlier in the text.
pub fn parse_json<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, ReflError> {
    serde_json::from_str::<IgnoredAny>(text).map_err(|e| ReflError::Format { what: what.to_owned(), message: format!("JSON syntax error: {e}") })?;
    serde_json::from_str::<T>(text).map_err(|e| ReflError::Format { what: what.to_owned(), message: e.to_string() })
}
