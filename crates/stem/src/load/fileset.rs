//! Where the files of an acquisition come from: a folder natively, the user's picked or
//! dropped files in the browser (a map of names to storages), memory in tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use scatterlab_hdf5::storage::{open_native, DynStorage};
use scatterlab_hdf5::H5Error;

use super::error::{LoadError, Result};

/// A set of files by name (external links name their targets relative to the master).
pub trait FileSet {
    /// The storage of file `name`, `None` when the set has no such file.
    fn open(&self, name: &str) -> Result<Option<DynStorage>>;
    /// Every file name in the set (for messages and pickers).
    fn list(&self) -> Vec<String>;
    /// Block size for reading the files' metadata: large where each read has a fixed cost
    /// (native files, `FileReaderSync`), small where bytes are fetched range by range before a
    /// file is held (then a block is what each chunk-index node costs).
    fn metadata_block_bytes(&self) -> usize {
        scatterlab_hdf5::storage::METADATA_BLOCK_BYTES
    }
}

/// The files of one folder. Names are taken as file names in that folder: a link target with
/// directories (`../x.h5`, `/abs/x.h5`) resolves to its last component, as the Dectris layout
/// keeps every file of an acquisition together.
#[derive(Clone, Debug)]
pub struct DirFileSet {
    dir: PathBuf,
}

impl DirFileSet {
    /// The folder `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The folder of `path` and the file name in it, for opening a master given by path.
    pub fn for_file(path: &Path) -> Result<(Self, String)> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| LoadError::Request(format!("{} is not a file path", path.display())))?;
        let dir = path.parent().map_or_else(|| PathBuf::from("."), |p| if p.as_os_str().is_empty() { PathBuf::from(".") } else { p.to_path_buf() });
        Ok((Self::new(dir), name))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl FileSet for DirFileSet {
    fn open(&self, name: &str) -> Result<Option<DynStorage>> {
        let Some(file) = Path::new(name).file_name() else { return Ok(None) };
        match open_native(self.dir.join(file)) {
            Ok(s) => Ok(Some(s)),
            Err(H5Error::MissingFile { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn list(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .map(|rd| rd.filter_map(|e| e.ok()).filter(|e| e.path().is_file()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// Files held as storages by name (the browser's picked files, tests).
#[derive(Clone, Default)]
pub struct MapFileSet {
    files: HashMap<String, DynStorage>,
}

impl MapFileSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) file `name`.
    pub fn insert(&mut self, name: impl Into<String>, storage: DynStorage) {
        self.files.insert(name.into(), storage);
    }
}

impl FileSet for MapFileSet {
    fn open(&self, name: &str) -> Result<Option<DynStorage>> {
        let base = name.rsplit('/').next().unwrap_or(name);
        Ok(self.files.get(name).or_else(|| self.files.get(base)).cloned())
    }

    fn list(&self) -> Vec<String> {
        let mut names: Vec<String> = self.files.keys().cloned().collect();
        names.sort();
        names
    }
}
