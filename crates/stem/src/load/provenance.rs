//! Provenance of loaded data: which files (names, sizes, content hashes), what shape and type
//! they held, and what was read from them how (region, bin, mask policy), by which reader.

use scatterlab_hdf5::hash::{hash_storage, HashKind};
use scatterlab_hdf5::READER_VERSION;
use serde::{Deserialize, Serialize};

use super::bin::MaskPolicy;
use super::error::{LoadError, Result};
use super::fileset::FileSet;
use super::Acquisition;

/// What one read covered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// Global frames `[first, end)` spanned.
    pub frames: [u64; 2],
    /// Scan region `[[row0, row1), [col0, col1)]` when read by scan position.
    pub region: Option<[[usize; 2]; 2]>,
    /// Detector bin factor (1 = none).
    pub bin: usize,
    /// The bad-pixel policy applied.
    pub mask_policy: MaskPolicy,
    /// Pixels per frame the policy zeroed.
    pub n_masked: usize,
}

/// One source file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRecord {
    /// File name.
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Lower-case hex digest.
    pub hash: String,
    /// Which hash (CONVENTIONS.md, "Provenance hashes").
    pub hash_kind: HashKind,
}

/// The provenance of a load result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadProvenance {
    /// Master first, then the present data files in link order.
    pub sources: Vec<SourceRecord>,
    /// Data files linked but missing.
    pub missing: Vec<String>,
    /// `[scan_rows, scan_cols, det_rows, det_cols]` (scan `[1, n_frames]` without a scan shape).
    pub source_shape: [u64; 4],
    /// Stored pixel type.
    pub dtype: String,
    /// What was read and how.
    pub record: LoadRecord,
    /// The reader and the pinned crates under it.
    pub reader: String,
}

impl Acquisition {
    /// Provenance of a read described by `record`. Hashes every source once (then cached):
    /// `kind` `None` picks [`HashKind::default_for`] the total size. `files` must be the set
    /// the acquisition was opened from.
    pub fn provenance(&self, files: &dyn FileSet, record: &LoadRecord, kind: Option<HashKind>) -> Result<LoadProvenance> {
        let sources = match self.hashes.get() {
            Some(s) => s.clone(),
            None => {
                let total = self.master_size + self.parts.iter().filter_map(|p| p.size).sum::<u64>();
                let kind = kind.unwrap_or_else(|| HashKind::default_for(total));
                let mut names = vec![self.master.clone()];
                names.extend(self.parts.iter().filter(|p| p.is_present() && p.file != self.master).map(|p| p.file.clone()));
                let mut out = Vec::new();
                for name in names {
                    let st = files.open(&name)?.ok_or_else(|| LoadError::MissingFile { file: name.clone(), needed_by: "provenance".into() })?;
                    out.push(SourceRecord { size: st.len(), hash: hash_storage(&st, &name, kind)?, hash_kind: kind, name });
                }
                self.hashes.get_or_init(|| out).clone()
            }
        };
        let [sr, sc] = self.scan.as_ref().map_or([1, self.n_frames], |s| [s.rows as u64, s.cols as u64]);
        Ok(LoadProvenance {
            sources,
            missing: self.missing.iter().map(|m| m.file.clone()).collect(),
            source_shape: [sr, sc, self.det[0] as u64, self.det[1] as u64],
            dtype: self.kind.name().to_string(),
            record: record.clone(),
            reader: READER_VERSION.to_string(),
        })
    }
}
