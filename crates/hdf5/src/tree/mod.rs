//! The file browser's view of a file: every group, dataset and link with shapes, types,
//! storage, filters and attributes, as one flat, serde-serialisable list in path order.
//!
//! Built from our own link listing ([`crate::links`](mod@crate::links)), so external links show (with their
//! target file and path) instead of vanishing. Errors are caught per object: a dataset with an
//! unsupported layout or a corrupt header becomes an [`NodeKind::Error`] node naming the
//! problem, and the rest of the file still lists. Nothing here reads dataset data, and
//! `Group::file_data()` (which would read the whole file) is never called.

mod dataset;

use std::collections::HashMap;

use hdf5_reader::messages::HdfMessage;
use serde::Serialize;

pub use dataset::{DatasetInfo, FilterInfo, StorageLayout};

use crate::file::H5File;
use crate::links::{links_at, GroupStorage, LinkTarget};
use crate::values::{attr_preview, dtype_name};

/// How deep groups are followed (a guard against forged or pathological nesting).
pub const MAX_DEPTH: usize = 64;

/// What to collect.
#[derive(Clone, Copy, Debug)]
pub struct TreeOptions {
    /// Read attributes (names, types, shapes, value previews).
    pub attrs: bool,
    /// Stop after this many nodes (the tree then ends with an error node saying so).
    pub max_nodes: usize,
}

impl Default for TreeOptions {
    fn default() -> Self {
        Self { attrs: true, max_nodes: 100_000 }
    }
}

/// A file's tree: nodes in depth-first order, children sorted by name.
#[derive(Clone, Debug, Serialize)]
pub struct Tree {
    /// The file's name.
    pub file: String,
    /// Superblock version (0–3).
    pub superblock_version: u8,
    /// The nodes; the first is the root group `/`.
    pub nodes: Vec<Node>,
}

/// One object or link.
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    /// Absolute path (`/entry/data/data_000001`).
    pub path: String,
    /// What it is.
    pub kind: NodeKind,
    /// Its attributes (empty for links and when not requested).
    pub attrs: Vec<AttrInfo>,
}

/// The kinds of node.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NodeKind {
    /// A group and how it stores its links.
    Group {
        /// Symbol table, compact or dense.
        storage: GroupStorage,
    },
    /// A dataset.
    Dataset(DatasetInfo),
    /// A link to an object in another file.
    ExternalLink {
        /// The other file's name as stored.
        file: String,
        /// The object path in it.
        path: String,
        /// Whether that file is available (`None` until [`Tree::resolve_external`] is called).
        resolved: Option<bool>,
    },
    /// A soft link (a path in this file).
    SoftLink {
        /// The target path.
        target: String,
    },
    /// A second hard link to an object listed earlier.
    HardLink {
        /// The path the object was first listed under.
        target: String,
    },
    /// A named datatype or another object that is neither group nor dataset.
    Other {
        /// What it is, in words.
        what: String,
    },
    /// The object could not be read; the message names the problem.
    Error {
        /// The error, with file and object.
        message: String,
    },
}

/// One attribute.
#[derive(Clone, Debug, Serialize)]
pub struct AttrInfo {
    /// Its name.
    pub name: String,
    /// Its datatype ([`dtype_name`]).
    pub dtype: String,
    /// Its shape (empty = scalar).
    pub shape: Vec<u64>,
    /// A one-line preview of the value ([`crate::values::attr_preview`]).
    pub value: String,
}

impl Tree {
    /// The node at `path`.
    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.path == path)
    }

    /// Sets `resolved` of every external link from `exists(file name)` (the CLI checks the
    /// master's folder, the browser the set of picked files).
    pub fn resolve_external(&mut self, mut exists: impl FnMut(&str) -> bool) {
        for n in &mut self.nodes {
            if let NodeKind::ExternalLink { file, resolved, .. } = &mut n.kind {
                *resolved = Some(exists(file));
            }
        }
    }

    /// Paths and messages of every error node and every dataset with an unsupported filter or
    /// feature: what the browser flags.
    pub fn problems(&self) -> Vec<(String, String)> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Error { message } => Some((n.path.clone(), message.clone())),
                NodeKind::Dataset(d) => d.unsupported.clone().map(|u| (n.path.clone(), u)),
                _ => None,
            })
            .collect()
    }
}

/// Builds the tree of `file`. Never fails: problems become error nodes.
pub fn tree(file: &H5File, opts: &TreeOptions) -> Tree {
    let h5 = file.reader();
    let mut walk = Walk { file, opts, nodes: Vec::new(), seen: HashMap::new() };
    match h5.root_group() {
        Ok(root) => walk.object("/", root.address(), 0),
        Err(e) => walk.error("/", file.err("/", e).to_string()),
    }
    Tree { file: file.name().to_string(), superblock_version: h5.superblock().version, nodes: walk.nodes }
}

struct Walk<'a> {
    file: &'a H5File,
    opts: &'a TreeOptions,
    nodes: Vec<Node>,
    /// Object header address → the path it was first listed under.
    seen: HashMap<u64, String>,
}

impl Walk<'_> {
    fn push(&mut self, path: &str, kind: NodeKind, attrs: Vec<AttrInfo>) {
        if self.nodes.len() == self.opts.max_nodes {
            let message = format!("{}: listing stopped after {} nodes", self.file.name(), self.opts.max_nodes);
            self.nodes.push(Node { path: path.to_string(), kind: NodeKind::Error { message }, attrs: Vec::new() });
        } else if self.nodes.len() < self.opts.max_nodes {
            self.nodes.push(Node { path: path.to_string(), kind, attrs });
        }
    }

    fn error(&mut self, path: &str, message: String) {
        self.push(path, NodeKind::Error { message }, Vec::new());
    }

    /// Lists the object at `address` (reached as `path`) and, for a group, its children.
    fn object(&mut self, path: &str, address: u64, depth: usize) {
        if self.nodes.len() >= self.opts.max_nodes {
            return;
        }
        if let Some(first) = self.seen.get(&address) {
            let target = first.clone();
            return self.push(path, NodeKind::HardLink { target }, Vec::new());
        }
        self.seen.insert(address, path.to_string());
        let header = match self.file.reader().get_or_parse_header(address) {
            Ok(h) => h,
            Err(e) => return self.error(path, self.file.err(path, e).to_string()),
        };
        let is_group = header.messages.iter().any(|m| matches!(m, HdfMessage::SymbolTable(_) | HdfMessage::Link(_) | HdfMessage::LinkInfo(_) | HdfMessage::GroupInfo(_)));
        let is_dataset = header.messages.iter().any(|m| matches!(m, HdfMessage::DataLayout(_)));
        if is_dataset {
            match dataset::info(self.file, path, &header) {
                Ok((info, ds)) => {
                    let attrs = if self.opts.attrs { sorted(ds.attributes().iter().map(attr_info).collect()) } else { Vec::new() };
                    self.push(path, NodeKind::Dataset(info), attrs);
                }
                Err(e) => self.error(path, e.to_string()),
            }
        } else if is_group {
            self.group(path, address, depth);
        } else {
            let what = if header.messages.iter().any(|m| matches!(m, HdfMessage::Datatype(_))) { "named datatype" } else { "unknown object" };
            self.push(path, NodeKind::Other { what: what.into() }, Vec::new());
        }
    }

    fn group(&mut self, path: &str, address: u64, depth: usize) {
        let (storage, links) = match links_at(self.file, address, path) {
            Ok(l) => l,
            Err(e) => return self.error(path, e.to_string()),
        };
        let attrs = if self.opts.attrs { self.group_attrs(path) } else { Vec::new() };
        self.push(path, NodeKind::Group { storage }, attrs);
        if depth >= MAX_DEPTH {
            return self.error(path, format!("{}: {path}: deeper than {MAX_DEPTH} levels, not listed", self.file.name()));
        }
        for link in links {
            let child = if path == "/" { format!("/{}", link.name) } else { format!("{path}/{}", link.name) };
            match link.target {
                LinkTarget::Hard { address } => self.object(&child, address, depth + 1),
                LinkTarget::Soft { path: target } => self.push(&child, NodeKind::SoftLink { target }, Vec::new()),
                LinkTarget::External { file, path } => self.push(&child, NodeKind::ExternalLink { file, path, resolved: None }, Vec::new()),
            }
        }
    }

    /// The group's attributes; if they cannot be read, one entry named `(error)` says why
    /// (the group itself still lists).
    fn group_attrs(&self, path: &str) -> Vec<AttrInfo> {
        let attrs = self.file.reader().group(path).and_then(|g| g.attributes());
        match attrs {
            Ok(a) => sorted(a.iter().map(attr_info).collect()),
            Err(e) => vec![AttrInfo { name: "(error)".into(), dtype: String::new(), shape: Vec::new(), value: self.file.err(&format!("{path} (attributes)"), e).to_string() }],
        }
    }
}

/// Attributes by name: files list them in creation or hash order, which differs between
/// writers of the same content.
fn sorted(mut a: Vec<AttrInfo>) -> Vec<AttrInfo> {
    a.sort_by(|x, y| x.name.cmp(&y.name));
    a
}

fn attr_info(a: &hdf5_reader::Attribute) -> AttrInfo {
    AttrInfo { name: a.name.clone(), dtype: dtype_name(&a.datatype), shape: a.shape.clone(), value: attr_preview(a) }
}
