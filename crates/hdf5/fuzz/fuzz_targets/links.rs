//! Links: arbitrary bytes opened as HDF5, then every group's links listed (`links_at`: symbol
//! tables, compact link messages, dense fractal-heap groups) walking hard links from the root,
//! soft links resolved by path through hdf5-reader, and external links resolved the way a
//! Dectris master's are (`open_raw` of the target path in the target file, here the same bytes
//! under the link's file name). Any panic, abort or out-of-memory is a bug; errors are expected.

#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use scatterlab_hdf5::links::links_at;
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::{links, open_raw, H5File, LinkTarget};

/// Deepest group nesting walked (real files: a handful).
const MAX_DEPTH: usize = 32;
/// Most groups visited per input.
const MAX_GROUPS: usize = 512;

struct Walk<'a> {
    file: &'a H5File,
    data: &'a [u8],
    seen: HashSet<u64>,
    /// The external links' target file, opened once (the same bytes under another name).
    other: Option<Option<H5File>>,
}

impl Walk<'_> {
    fn group(&mut self, address: u64, path: &str, depth: usize) {
        if depth > MAX_DEPTH || self.seen.len() >= MAX_GROUPS || !self.seen.insert(address) {
            return;
        }
        let Ok((_, list)) = links_at(self.file, address, path) else { return };
        for l in list {
            let child = if path == "/" { format!("/{}", l.name) } else { format!("{path}/{}", l.name) };
            match &l.target {
                LinkTarget::Hard { address } => {
                    if self.file.reader().group(&child).is_ok() {
                        self.group(*address, &child, depth + 1);
                    } else {
                        let _ = open_raw(self.file, &child);
                    }
                }
                LinkTarget::Soft { path: target } => {
                    // hdf5-reader follows soft links inside paths; a cycle must end in an error.
                    let _ = self.file.reader().group(&child);
                    let _ = self.file.reader().dataset(target);
                    let _ = links(self.file, target);
                }
                LinkTarget::External { path: target, .. } => {
                    let data = self.data;
                    if let Some(other) = self.other.get_or_insert_with(|| H5File::open(bytes(data.to_vec()), "external.h5").ok()) {
                        let _ = open_raw(other, target);
                        let _ = links(other, target);
                    }
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(f) = H5File::open(bytes(data.to_vec()), "fuzz.h5") else { return };
    let Ok(root) = f.reader().group("/") else { return };
    let mut walk = Walk { file: &f, data, seen: HashSet::new(), other: None };
    walk.group(root.address(), "/", 0);
});
