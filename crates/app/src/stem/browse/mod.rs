//! Browsing what is open: the HDF5 tree of each file (the master, the data files its external
//! links reach, or a single file) with a metadata inspector (shape, type, chunks, filters,
//! attributes), plus the frames in memory as one 4-D dataset (the built-in example has no
//! file), and quick views of any dataset: a line for 1-D, a heatmap for 2-D and up with a slider
//! per other dimension ([`slice::Mapping`]). Only the slice on display is read.
//!
//! The trees come from `scatterlab_hdf5::tree` (errors caught per object and shown next to it);
//! values from hdf5-reader's hyperslab reads with our filters. In the browser the data files are
//! read range by range as they are browsed ([`linked`]).

mod linked;
pub mod slice;
mod ui;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scatterlab_hdf5::links::GroupStorage;
use scatterlab_hdf5::tree::{DatasetInfo, StorageLayout};
use scatterlab_hdf5::{H5File, Node, NodeKind, Tree};
use scatterlab_stem::load::PixelSlice;

use super::resident::Resident;
use super::staged::{StagedFiles, Wanted};
use super::view::{Display, ImageView, Transform};
use slice::{Mapping, Slice2};

/// The path of the in-memory frames in their pseudo-file.
pub const FRAMES_PATH: &str = "/frames";

/// Where a listed file's values come from.
enum Source {
    /// An HDF5 file.
    H5(H5File),
    /// The acquisition's frames in memory.
    Memory,
}

/// One listed file and its tree.
pub struct BrowseFile {
    /// The tree (an error node at `/` when the file could not be opened).
    pub tree: Tree,
    source: Option<Source>,
    /// A linked file listed while its bytes are fetched (read again when they arrive).
    pending: bool,
}

/// A file given as bytes rather than a path — in the browser, the master of picked files, read
/// whole once the acquisition opened (its data files are read in ranges as they are browsed).
pub struct ExtraFile {
    /// The file's name.
    pub name: String,
    /// Its bytes.
    pub storage: scatterlab_hdf5::storage::DynStorage,
    /// The names of the other files picked with it (external links to them show as resolved).
    pub present: Vec<String>,
    /// The files picked with it, fetched range by range for browsing: the files its external
    /// links reach are listed after it and browsed like the desktop's (`None`: links only named).
    pub staged: Option<Arc<StagedFiles>>,
}

/// The browser's state.
pub struct Browser {
    /// The listed files: the frames in memory first, then the opened HDF5 files.
    pub files: Vec<BrowseFile>,
    /// The selected node: (file index, path).
    pub selected: Option<(usize, String)>,
    /// The quick view's dimension mapping (for the selected dataset).
    pub mapping: Option<Mapping>,
    /// The quick view's heatmap display.
    pub display: Display,
    /// What the files were listed for (acquisition name and path).
    origin: Option<(String, Option<PathBuf>)>,
    /// The slice on display and what it was read for.
    view: Option<(ViewKey, Result<Slice2, String>)>,
    image: ImageView,
    /// A file listed after the frames when the acquisition has no path ([`ExtraFile`]).
    extra: Option<ExtraFile>,
    /// The selected dataset's value when it is small (a scalar, a string, a few numbers), with
    /// its units: read once on selection, shown by the inspector.
    value: Option<Result<String, String>>,
    /// Collapsed groups: (file index, group path). Their descendants are not drawn.
    pub collapsed: std::collections::HashSet<(usize, String)>,
    /// A range of a staged file some read wanted, until the host takes it ([`linked`]).
    wanted: Option<Wanted>,
    /// Ranges fetched for this listing (capped at [`linked::MAX_FETCHES`]).
    fetches: usize,
    /// Whether the quick view, or the value, waits for a fetched range.
    view_waits: bool,
    value_waits: bool,
}

/// What a quick view was read for (file, path, mapping, frames loaded).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ViewKey(usize, String, Mapping, usize);

impl Default for Browser {
    fn default() -> Self {
        use scatterlab_stem::reduce::colormap::Colormap;
        Self {
            files: Vec::new(),
            selected: None,
            mapping: None,
            display: Display::new(Colormap::Viridis, Transform::Linear),
            origin: None,
            view: None,
            image: ImageView::default(),
            extra: None,
            value: None,
            collapsed: Default::default(),
            wanted: None,
            fetches: 0,
            view_waits: false,
            value_waits: false,
        }
    }
}

impl Browser {
    /// Lists the files of what is open (rebuilt when another acquisition opens; the in-memory
    /// frames' node follows the load).
    pub fn sync(&mut self, data: Option<&Resident>, path: Option<&Path>) {
        let Some(data) = data else {
            self.files.clear();
            self.origin = None;
            return;
        };
        let origin = (data.name.clone(), path.map(Path::to_path_buf));
        if self.origin.as_ref() != Some(&origin) {
            self.files = vec![BrowseFile { tree: memory_tree(data), source: Some(Source::Memory), pending: false }];
            (self.wanted, self.fetches, self.view_waits, self.value_waits) = (None, 0, false, false);
            if let Some(p) = path {
                self.files.extend(linked::open_files(p));
            } else if let Some(e) = &self.extra {
                let (files, wanted) = linked::open_extra(e);
                self.files.extend(files);
                self.wanted = wanted;
            }
            self.selected = None;
            self.mapping = None;
            self.view = None;
            self.value = None;
            self.collapsed.clear();
            self.origin = Some(origin);
        } else if let Some(f) = self.files.first_mut() {
            f.tree = memory_tree(data);
        }
    }

    /// Lists `extra` after the frames in memory from now on (`None`: no longer); the files are
    /// listed anew at the next [`Self::sync`].
    pub fn set_extra(&mut self, extra: Option<ExtraFile>) {
        self.extra = extra;
        self.origin = None;
    }

    /// The node at `path` of file `file`.
    pub fn node(&self, file: usize, path: &str) -> Option<&Node> {
        self.files.get(file)?.tree.get(path)
    }

    /// Where the selected node leads: itself, or an external link's target when that file is
    /// listed. Returns (file index, path, node).
    pub fn target(&self) -> Option<(usize, String, &Node)> {
        let (f, path) = self.selected.as_ref()?;
        let node = self.node(*f, path)?;
        if let NodeKind::ExternalLink { file, path: target, .. } = &node.kind {
            let i = self.files.iter().position(|b| b.tree.file == *file)?;
            return self.node(i, target).map(|n| (i, target.clone(), n));
        }
        Some((*f, path.clone(), node))
    }

    /// Selects `path` of file `file` (an external link shows its target) and maps its view.
    pub fn select(&mut self, file: usize, path: &str) {
        self.selected = Some((file, path.to_owned()));
        self.mapping = match self.target().map(|t| &t.2.kind) {
            Some(NodeKind::Dataset(d)) if !d.shape.is_empty() => Some(Mapping::new(&d.shape)),
            _ => None,
        };
        self.read_value();
    }

    /// Reads the selected dataset's value when it is small (waiting for its bytes in the browser).
    fn read_value(&mut self) {
        self.clear_wanted();
        let value = self.target().and_then(|(f, path, node)| match (&node.kind, self.files.get(f).and_then(|b| b.source.as_ref())) {
            (NodeKind::Dataset(d), Some(Source::H5(h5))) => small_value(h5, &path, d, &node.attrs),
            _ => None,
        });
        self.value_waits = matches!(value, Some(Err(_))) && self.wait_for_bytes();
        self.value = if self.value_waits { Some(Err("reading …".to_owned())) } else { value };
    }

    /// The browser's state for a host, as JSON: the listed files, the selection, where it leads
    /// (file, path, dataset shape), the small value and the quick view last read (rows, cols,
    /// Σ values, or why there is none).
    pub fn status_json(&self) -> serde_json::Value {
        let target = self.target().map(|(f, path, node)| {
            let shape = match &node.kind {
                NodeKind::Dataset(d) => Some(d.shape.clone()),
                _ => None,
            };
            serde_json::json!({"file": self.files.get(f).map(|b| b.tree.file.clone()), "path": path, "shape": shape})
        });
        let view = self.view.as_ref().map(|(_, v)| match v {
            Ok(s) => serde_json::json!({"rows": s.rows, "cols": s.cols, "sum": s.values.iter().sum::<f64>()}),
            Err(e) => serde_json::json!({"error": e}),
        });
        serde_json::json!({
            "files": self.files.iter().map(|b| b.tree.file.clone()).collect::<Vec<_>>(),
            "selected": self.selected.as_ref().map(|(f, p)| (self.files.get(*f).map(|b| b.tree.file.clone()), p.clone())),
            "target": target,
            "value": self.value.as_ref().map(|v| match v { Ok(t) => serde_json::json!({"ok": t}), Err(e) => serde_json::json!({"error": e}) }),
            "view": view,
        })
    }

    /// Selects `path` of the listed file named `file` (as a click in the tree does).
    pub fn select_by_name(&mut self, file: &str, path: &str) -> Result<(), String> {
        let i = self
            .files
            .iter()
            .position(|b| b.tree.file == file)
            .ok_or_else(|| format!("stemBrowse: no listed file named {file:?} ({})", self.files.iter().map(|b| b.tree.file.as_str()).collect::<Vec<_>>().join(", ")))?;
        if self.node(i, path).is_none() {
            return Err(format!("stemBrowse: {file} has no object at {path:?}"));
        }
        self.select(i, path);
        Ok(())
    }

    /// The selected dataset's value when it is small ([`small_value`]).
    pub fn value(&self) -> Option<&Result<String, String>> {
        self.value.as_ref()
    }

    /// The quick view's slice (reading it if the selection, mapping or loaded frames changed),
    /// or why there is none.
    pub fn view(&mut self, data: Option<&Resident>) -> Option<&Result<Slice2, String>> {
        let mapping = self.mapping.clone()?;
        let (file, path, _) = self.target()?;
        let loaded = data.map_or(0, Resident::loaded);
        let key = ViewKey(file, path.clone(), mapping.clone(), loaded);
        if self.view.as_ref().is_none_or(|v| v.0 != key) {
            self.clear_wanted();
            let result = match self.files.get(file).and_then(|f| f.source.as_ref()) {
                Some(Source::H5(h5)) => slice::read_h5(h5, &path, &mapping).map_err(|e| e.to_string()),
                Some(Source::Memory) => match data {
                    Some(d) => {
                        let frames = d.frames();
                        slice::read_flat(&path, &mapping, |i| frames.get(i).map(|v| v as f64)).map_err(|e| e.to_string())
                    }
                    None => Err("nothing in memory".to_owned()),
                },
                None => Err("the file is not open".to_owned()),
            };
            self.view_waits = result.is_err() && self.wait_for_bytes();
            let result = if self.view_waits { Err(format!("reading {} …", self.files.get(file).map_or("", |f| f.tree.file.as_str()))) } else { result };
            self.view = Some((key, result));
        }
        self.view.as_ref().map(|v| &v.1)
    }
}

/// The element type's name of `frames`.
fn kind_name(frames: &PixelSlice<'_>) -> &'static str {
    match frames {
        PixelSlice::U8(_) => "u8",
        PixelSlice::U16(_) => "u16",
        PixelSlice::U32(_) => "u32",
        PixelSlice::U64(_) => "u64",
    }
}

/// The frames in memory as a one-dataset tree: `/frames` of shape (scan rows, scan cols,
/// detector rows, detector cols).
fn memory_tree(data: &Resident) -> Tree {
    let frames = data.frames();
    let dtype = kind_name(&frames).to_owned();
    let element_size = match frames {
        PixelSlice::U8(_) => 1,
        PixelSlice::U16(_) => 2,
        PixelSlice::U32(_) => 4,
        PixelSlice::U64(_) => 8,
    };
    let shape = vec![data.scan[0] as u64, data.scan[1] as u64, data.det[0] as u64, data.det[1] as u64];
    let bytes = shape.iter().product::<u64>() * element_size as u64;
    let attr = |name: &str, value: String| scatterlab_hdf5::tree::AttrInfo { name: name.into(), dtype: "u64".into(), shape: Vec::new(), value };
    let info = DatasetInfo { shape, max_shape: None, dtype, element_size, layout: StorageLayout::Contiguous { bytes }, filters: Vec::new(), unsupported: None };
    Tree {
        file: format!("{} (in memory)", data.name),
        superblock_version: 0,
        nodes: vec![
            Node { path: "/".into(), kind: NodeKind::Group { storage: GroupStorage::Compact }, attrs: Vec::new() },
            Node {
                path: FRAMES_PATH.into(),
                kind: NodeKind::Dataset(info),
                attrs: vec![attr("frames_loaded", data.loaded().to_string()), attr("masked_pixels", data.n_masked.to_string())],
            },
        ],
    }
}

/// A tree that only says why a file could not be listed.
fn error_tree(name: &str, message: String) -> Tree {
    Tree { file: name.to_owned(), superblock_version: 0, nodes: vec![Node { path: "/".into(), kind: NodeKind::Error { message }, attrs: Vec::new() }] }
}

/// Most elements a dataset may have for the inspector to show its value.
const SMALL_VALUE: u64 = 16;

/// The value of a scalar, string or ≤ [`SMALL_VALUE`]-element dataset, with the `units` (or
/// `unit`) attribute when there is one: `0.0196875 angstrom`, `[32.3, 31.6] pixel`. `None` for
/// larger datasets (the quick view shows those).
fn small_value(h5: &H5File, path: &str, d: &DatasetInfo, attrs: &[scatterlab_hdf5::tree::AttrInfo]) -> Option<Result<String, String>> {
    if d.shape.iter().product::<u64>() > SMALL_VALUE {
        return None;
    }
    let units = attrs.iter().find(|a| a.name == "units" || a.name == "unit").map(|a| a.value.trim_matches('"').to_owned());
    let with_units = |v: String| units.as_ref().map_or_else(|| v.clone(), |u| format!("{v} {u}"));
    let text = match scatterlab_hdf5::values::dataset_numbers(h5, path) {
        Ok(v) if v.len() == 1 => Ok(with_units(scatterlab_hdf5::values::format_number(v[0]))),
        Ok(v) => Ok(with_units(format!("[{}]", v.iter().map(|&x| scatterlab_hdf5::values::format_number(x)).collect::<Vec<_>>().join(", ")))),
        Err(_) => scatterlab_hdf5::values::dataset_string(h5, path).map(|s| format!("{s:?}")).map_err(|e| e.to_string()),
    };
    Some(text)
}
