//! `scatterlab h5 ls <file> [--attrs] [--json]`: the file's tree of groups, datasets and links,
//! indented, with shapes, types, storage and filters; external links checked against the
//! file's folder.

use std::fmt::Write as _;
use std::path::Path;

use scatterlab_hdf5::tree::{DatasetInfo, StorageLayout};
use scatterlab_hdf5::{tree, H5File, Node, NodeKind, Tree, TreeOptions};

/// Prints the tree of `path`.
pub fn run(path: &Path, attrs: bool, json: bool) -> Result<(), String> {
    let file = H5File::open_path(path).map_err(|e| e.to_string())?;
    let mut t = tree(&file, &TreeOptions { attrs, ..Default::default() });
    let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
    t.resolve_external(|name| Path::new(name).file_name().is_some_and(|n| folder.join(n).is_file()));
    if json {
        let text = serde_json::to_string_pretty(&t).map_err(|e| e.to_string())?;
        println!("{text}");
    } else {
        print!("{}", render(&t, attrs));
    }
    Ok(())
}

/// The indented listing.
pub fn render(t: &Tree, attrs: bool) -> String {
    let mut out = format!("{} (HDF5, superblock v{})\n", t.file, t.superblock_version);
    for n in &t.nodes {
        let depth = n.path.matches('/').count().saturating_sub(usize::from(n.path == "/"));
        let indent = "  ".repeat(depth);
        let name = if n.path == "/" { "/" } else { n.path.rsplit('/').next().unwrap_or(&n.path) };
        let _ = writeln!(out, "{indent}{}", line(name, n));
        if attrs {
            for a in &n.attrs {
                let _ = writeln!(out, "{indent}    @{} = {}  ({}{})", a.name, a.value, a.dtype, shape_suffix(&a.shape));
            }
        }
    }
    out
}

/// The serde name of a unit enum value (`symbol_table`, `b_tree_v1`, …).
fn label(v: &impl serde::Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn shape_suffix(shape: &[u64]) -> String {
    if shape.is_empty() {
        String::new()
    } else {
        format!(" {}", dims(shape))
    }
}

fn dims(d: &[u64]) -> String {
    format!("({})", d.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

fn line(name: &str, n: &Node) -> String {
    match &n.kind {
        NodeKind::Group { storage } if name == "/" => format!("/  group ({})", label(storage)),
        NodeKind::Group { .. } => format!("{name}/"),
        NodeKind::Dataset(d) => format!("{name}  {}", dataset(d)),
        NodeKind::ExternalLink { file, path, resolved } => {
            let state = match resolved {
                Some(true) => "",
                Some(false) => "  [MISSING]",
                None => "",
            };
            format!("{name} -> {file}:{path}  (external link){state}")
        }
        NodeKind::SoftLink { target } => format!("{name} -> {target}  (soft link)"),
        NodeKind::HardLink { target } => format!("{name} => {target}  (hard link)"),
        NodeKind::Other { what } => format!("{name}  ({what})"),
        NodeKind::Error { message } => format!("{name}  ERROR: {message}"),
    }
}

/// `(100, 64, 64) u16  chunked (1, 64, 64) b_tree_v1  filters: bitshuffle (32008)`.
pub fn dataset(d: &DatasetInfo) -> String {
    let shape = if d.shape.is_empty() { "scalar".to_string() } else { dims(&d.shape) };
    let layout = match &d.layout {
        StorageLayout::Compact { bytes } => format!("compact {bytes} B"),
        StorageLayout::Contiguous { bytes } => format!("contiguous {bytes} B"),
        StorageLayout::Chunked { chunks, index } => {
            format!("chunked {} {}", dims(chunks), label(index))
        }
    };
    let mut s = format!("{shape} {}  {layout}", d.dtype);
    if !d.filters.is_empty() {
        let names: Vec<String> = d.filters.iter().map(|f| format!("{} ({}){}", f.name, f.id, if f.supported { "" } else { " UNSUPPORTED" })).collect();
        let _ = write!(s, "  filters: {}", names.join(", "));
    }
    if let Some(u) = &d.unsupported {
        let _ = write!(s, "  [{u}]");
    }
    s
}
