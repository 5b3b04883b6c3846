//! The fixture-path resolver: `$SCATTERLAB_FIXTURES`, else `shared/fixtures` beside the
//! repository (`<workspace root>/../shared/fixtures`, where CI's fresh clone also finds them).

use std::path::{Path, PathBuf};

/// The environment variable naming the fixtures folder.
pub const FIXTURES_VAR: &str = "SCATTERLAB_FIXTURES";

/// The fixtures folder: `$SCATTERLAB_FIXTURES` when set (and not empty), else
/// `../shared/fixtures` relative to the workspace root.
pub fn fixtures_dir() -> PathBuf {
    match std::env::var_os(FIXTURES_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        // This crate sits at `<root>/crates/testkit`, so the root is two levels up; the path is
        // left unnormalised, as the tests wrote it before (messages show where it looked).
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures"),
    }
}

/// The path of fixture `rel` (e.g. `"stem/dev_small_master.h5"` or `"bloch"`); panics with a
/// message naming the folder and the variable when it does not exist, so a missing checkout of
/// the fixtures reads as such rather than as a parse error further on.
pub fn fixture(rel: &str) -> PathBuf {
    let path = fixtures_dir().join(rel);
    assert!(path.exists(), "fixture {} missing: the fixtures live in ../shared/fixtures beside the repository, or set {FIXTURES_VAR}=/path/to/fixtures", path.display());
    path
}

/// The bytes of fixture `rel` (see [`fixture`] for the message when it is missing).
pub fn read_fixture(rel: &str) -> Vec<u8> {
    let path = fixture(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {} unreadable: {e}", path.display()))
}

/// The text of fixture `rel` (see [`fixture`] for the message when it is missing).
pub fn read_fixture_text(rel: &str) -> String {
    let path = fixture(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {} unreadable: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_shared_fixtures_beside_the_workspace() {
        if std::env::var_os(FIXTURES_VAR).is_some() {
            return println!("{FIXTURES_VAR} set: the default is not in use");
        }
        // `<root>/crates/testkit/../../../shared/fixtures` is `<root>/../shared/fixtures`.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let want = root.join("../shared/fixtures");
        assert_eq!(fixtures_dir().components().filter(|c| c.as_os_str() == "..").count(), 3);
        if want.exists() {
            assert_eq!(fixtures_dir().canonicalize().ok(), want.canonicalize().ok());
            assert!(fixture("stem").is_dir());
        }
    }
}
