//! Following a master's external links into the other files the user picked (the browser's
//! path: the master is read whole, its data files stay [`StagedFiles`] fetched range by range).
//!
//! The HDF5 reader is synchronous, so a read of bytes not fetched yet fails and the staged set
//! records the range it wanted; the browser keeps that range ([`Browser::wanted`]), its host
//! fetches it (`Blob.slice()` in the browser, the file on disk in native tests) and hands it
//! over ([`Browser::put_range`]), and what waited (a data file's tree, a quick view, a small
//! value) is read again. Links resolve by the target's file name among the picked files, as the
//! desktop resolves them by name in the master's folder; a link to a file not picked stays
//! unresolved and the inspector names the file.
//!
//! On the desktop the linked files are opened by path beside the master ([`open_files`]).
//!
//! The ranges fetched for browsing stay in the set while the acquisition is open (metadata and
//! the chunks of the slices viewed: kilobytes per slice).

use std::path::Path;
use std::sync::Arc;

use scatterlab_hdf5::{tree, H5File, Node, NodeKind, Tree, TreeOptions};
use scatterlab_stem::load::FileSet as _;

use super::{error_tree, BrowseFile, Browser, ExtraFile, Source};
use crate::stem::staged::{StagedFiles, Wanted, METADATA_BLOCK, READ_AHEAD};

/// Most ranges one listing may fetch (a file that keeps asking is not one we can read; dev_small
/// needs a few dozen for its three data files).
pub(super) const MAX_FETCHES: usize = 4096;

/// The file name of a link target that may carry folders.
fn base(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// A data file's stand-in while its bytes are fetched.
fn reading_tree(file: &str) -> Tree {
    let what = format!("reading {} …", base(file));
    Tree { file: file.to_owned(), superblock_version: 0, nodes: vec![Node { path: "/".into(), kind: NodeKind::Other { what }, attrs: Vec::new() }] }
}

/// Opens `link` (a link's target file) among `files` with its tree, listed under the link's
/// name (as the desktop lists it); `Err(range)` when bytes not fetched yet were wanted.
fn open_linked(files: &StagedFiles, link: &str) -> Result<BrowseFile, Wanted> {
    // A range wanted by an earlier, abandoned read is not this read's.
    let _ = files.take_wanted(0);
    let storage = match files.open(link) {
        Ok(Some(s)) => s,
        _ => return Ok(BrowseFile { tree: error_tree(link, format!("{} is not among the opened files", base(link))), source: None, pending: false }),
    };
    let opened = H5File::open_with_block(storage, base(link), METADATA_BLOCK);
    if let Some(w) = files.take_wanted(READ_AHEAD) {
        return Err(w);
    }
    match opened {
        Ok(h5) => {
            let mut t = tree(&h5, &TreeOptions::default());
            // The tree catches errors per object: one of them may be a range not fetched yet.
            if let Some(w) = files.take_wanted(READ_AHEAD) {
                return Err(w);
            }
            t.file = link.to_owned();
            Ok(BrowseFile { tree: t, source: Some(Source::H5(h5)), pending: false })
        }
        Err(e) => Ok(BrowseFile { tree: error_tree(link, e.to_string()), source: None, pending: false }),
    }
}

/// Opens a master given as bytes; external links to the files picked with it count as resolved,
/// and with a staged set the files they reach are listed after it (each a stand-in until its
/// bytes arrive). Returns the files and the first range wanted.
pub(super) fn open_extra(e: &ExtraFile) -> (Vec<BrowseFile>, Option<Wanted>) {
    let h5 = match H5File::open(e.storage.clone(), e.name.clone()) {
        Ok(h5) => h5,
        Err(err) => return (vec![BrowseFile { tree: error_tree(&e.name, err.to_string()), source: None, pending: false }], None),
    };
    let mut t = tree(&h5, &TreeOptions::default());
    // Link targets may carry directories; the picked files are known by name.
    t.resolve_external(|f| e.present.iter().any(|p| p == base(f)));
    let mut linked: Vec<String> = Vec::new();
    for n in &t.nodes {
        if let NodeKind::ExternalLink { file, resolved: Some(true), .. } = &n.kind {
            if !linked.contains(file) && base(file) != e.name {
                linked.push(file.clone());
            }
        }
    }
    let mut out = vec![BrowseFile { tree: t, source: Some(Source::H5(h5)), pending: false }];
    let mut wanted = None;
    if let Some(staged) = &e.staged {
        for file in linked {
            // One range is fetched at a time: the files after the first that waits wait too.
            match wanted.is_none().then(|| open_linked(staged, &file)) {
                Some(Ok(f)) => out.push(f),
                waits => {
                    if let Some(Err(w)) = waits {
                        wanted = Some(w);
                    }
                    out.push(BrowseFile { tree: reading_tree(&file), source: None, pending: true });
                }
            }
        }
    }
    (out, wanted)
}

/// Opens `path` and the files its external links name (beside it), each with its tree.
pub(super) fn open_files(path: &Path) -> Vec<BrowseFile> {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut out = Vec::new();
    let master = match H5File::open_path(path) {
        Ok(f) => f,
        Err(e) => return vec![BrowseFile { tree: error_tree(&name, e.to_string()), source: None, pending: false }],
    };
    let mut t = tree(&master, &TreeOptions::default());
    // Link targets are relative names in the master's folder (the Dectris layout).
    let local = |f: &str| dir.join(Path::new(f).file_name().unwrap_or_default());
    t.resolve_external(|f| local(f).is_file());
    let mut linked: Vec<String> = Vec::new();
    for n in &t.nodes {
        if let NodeKind::ExternalLink { file, resolved: Some(true), .. } = &n.kind {
            if !linked.contains(file) && *file != name {
                linked.push(file.clone());
            }
        }
    }
    out.push(BrowseFile { tree: t, source: Some(Source::H5(master)), pending: false });
    for file in linked {
        match H5File::open_path(local(&file)) {
            Ok(h5) => {
                let mut t = tree(&h5, &TreeOptions::default());
                t.file = file;
                out.push(BrowseFile { tree: t, source: Some(Source::H5(h5)), pending: false });
            }
            Err(e) => out.push(BrowseFile { tree: error_tree(&file, e.to_string()), source: None, pending: false }),
        }
    }
    out
}

impl Browser {
    /// The staged files the listed data files are read from (browser opens only).
    pub(super) fn staged(&self) -> Option<Arc<StagedFiles>> {
        self.extra.as_ref()?.staged.clone()
    }

    /// After a read failed: whether it failed for bytes not fetched yet (the range is then
    /// kept for [`Self::wanted`] and the caller waits for [`Self::put_range`]).
    pub(super) fn wait_for_bytes(&mut self) -> bool {
        let Some(w) = self.staged().and_then(|s| s.take_wanted(READ_AHEAD)) else { return false };
        if self.fetches >= MAX_FETCHES {
            return false;
        }
        self.wanted = Some(w);
        true
    }

    /// Forgets any range a read of the staged files wanted before (the next read's is its own).
    pub(super) fn clear_wanted(&self) {
        if let Some(s) = self.staged() {
            let _ = s.take_wanted(0);
        }
    }

    /// The byte range of a picked file the browser waits for, as (file index among the picked
    /// files, start, end), taken: the host fetches it and calls [`Self::put_range`].
    pub fn wanted(&mut self) -> Option<Wanted> {
        self.wanted.take()
    }

    /// Whether the browser waits for a range (its host should keep the frames coming).
    pub fn is_waiting(&self) -> bool {
        self.wanted.is_some() || self.files.iter().any(|f| f.pending)
    }

    /// Hands over the bytes `start..` of picked file `file` fetched for [`Self::wanted`] (or
    /// why they could not be fetched: what waited shows it). The data files listed as stand-ins
    /// are read again, and so are a quick view and a value that waited.
    pub fn put_range(&mut self, file: usize, start: u64, bytes: Result<Vec<u8>, String>) {
        let Some(staged) = self.staged() else { return };
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => return self.fetch_failed(&e),
        };
        staged.put_range(file, start, bytes);
        self.fetches += 1;
        for i in 0..self.files.len() {
            if !self.files[i].pending {
                continue;
            }
            let name = self.files[i].tree.file.clone();
            if self.fetches >= MAX_FETCHES {
                self.files[i] = BrowseFile { tree: error_tree(&name, format!("gave up after {MAX_FETCHES} reads")), source: None, pending: false };
                continue;
            }
            match open_linked(&staged, &name) {
                Ok(f) => self.files[i] = f,
                Err(w) => {
                    self.wanted = Some(w);
                    break;
                }
            }
        }
        if std::mem::take(&mut self.view_waits) {
            self.view = None;
        }
        match self.selected.clone() {
            // A link selected while its file was a stand-in gets its view mapped now.
            Some((f, path)) if self.mapping.is_none() => self.select(f, &path),
            _ if self.value_waits => self.read_value(),
            _ => {}
        }
    }

    /// A fetch failed: what waited for it shows `message`.
    fn fetch_failed(&mut self, message: &str) {
        for f in self.files.iter_mut().filter(|f| f.pending) {
            *f = BrowseFile { tree: error_tree(&f.tree.file, message.to_owned()), source: None, pending: false };
        }
        if std::mem::take(&mut self.view_waits) {
            if let Some(v) = &mut self.view {
                v.1 = Err(message.to_owned());
            }
        }
        if std::mem::take(&mut self.value_waits) {
            self.value = Some(Err(message.to_owned()));
        }
    }
}
