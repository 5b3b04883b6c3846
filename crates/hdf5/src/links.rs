//! The links of a group, whatever way the group stores them, external links included.
//!
//! hdf5-reader 0.12.1 lists a group's members as opened objects, and without a resolver it
//! silently drops external links (`Group::members`, `member_names`). A Dectris master is
//! nothing *but* external links under `/entry/data`, so we read the links ourselves:
//! - old-style groups (superblock v0/v1): symbol table = v1 B-tree of `SNOD` nodes + local heap
//!   (hard links and soft links only; the format has no external links there);
//! - compact new-style groups: `Link` messages in the object header;
//! - dense new-style groups (more than 8 links by default): link messages in a fractal heap,
//!   indexed by a v2 B-tree of name hashes (`LinkInfo` message).
//!
//! Links come back sorted by name (HDF5's default name index order), so a compact and a dense
//! group with the same members list identically.

use hdf5_reader::btree_v1::collect_btree_v1_leaves_storage;
use hdf5_reader::btree_v2::{collect_btree_v2_records_storage, BTreeV2Header, BTreeV2Record};
use hdf5_reader::fractal_heap::FractalHeap;
use hdf5_reader::io::Cursor;
use hdf5_reader::local_heap::LocalHeap;
use hdf5_reader::messages::link::{self, LinkTarget as ReaderTarget};
use hdf5_reader::messages::link_info::LinkInfoMessage;
use hdf5_reader::messages::symbol_table_msg::SymbolTableMessage;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::symbol_table::SymbolTableNode;
use serde::Serialize;

use crate::error::{H5Error, Result};
use crate::file::H5File;

/// Most links one group may list: a guard against forged heaps, far above real files.
pub const MAX_LINKS: usize = 1 << 20;

/// Where a link points.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LinkTarget {
    /// An object in this file, by object header address.
    Hard {
        /// Object header address.
        address: u64,
    },
    /// A path in this file (resolved when followed).
    Soft {
        /// The target path.
        path: String,
    },
    /// An object in another file.
    External {
        /// The other file's name as stored (Dectris writes it relative, same folder).
        file: String,
        /// The object path in that file.
        path: String,
    },
}

/// One link of a group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkInfo {
    /// The link's name in its group.
    pub name: String,
    /// Its target.
    pub target: LinkTarget,
}

/// How a group stores its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupStorage {
    /// Old-style symbol table (v1 B-tree + local heap).
    SymbolTable,
    /// Link messages in the object header.
    Compact,
    /// Fractal heap + v2 B-tree name index.
    Dense,
}

/// The links of the group at `group_path`, sorted by name.
pub fn links(file: &H5File, group_path: &str) -> Result<Vec<LinkInfo>> {
    let group = file.reader().group(group_path).map_err(|e| file.err(group_path, e))?;
    links_at(file, group.address(), group_path).map(|(_, l)| l)
}

/// The links of the group whose object header is at `address` (`object` names it in errors),
/// with the way the group stores them. Sorted by name.
pub fn links_at(file: &H5File, address: u64, object: &str) -> Result<(GroupStorage, Vec<LinkInfo>)> {
    let h5 = file.reader();
    let header = h5.get_or_parse_header(address).map_err(|e| file.err(object, e))?;
    let mut compact = Vec::new();
    let mut dense = None;
    for msg in &header.messages {
        match msg {
            HdfMessage::SymbolTable(st) => {
                let mut out = symbol_table_links(file, st).map_err(|e| file.err(object, e))?;
                sort(&mut out);
                return Ok((GroupStorage::SymbolTable, out));
            }
            HdfMessage::Link(l) => compact.push(LinkInfo { name: l.name.clone(), target: convert(&l.target) }),
            HdfMessage::LinkInfo(li) => dense = Some(li.clone()),
            _ => {}
        }
    }
    let undefined = |a: u64| hdf5_reader::io::Cursor::is_undefined_offset(a, h5.superblock().offset_size);
    let storage = match dense {
        Some(li) if compact.is_empty() && !undefined(li.fractal_heap_address) && !undefined(li.btree_name_index_address) => {
            compact = dense_links(file, &li).map_err(|e| file.err(object, e))?;
            GroupStorage::Dense
        }
        _ => GroupStorage::Compact,
    };
    if compact.len() > MAX_LINKS {
        return Err(H5Error::Format { file: file.name().to_string(), object: object.to_string(), detail: format!("{} links, more than {MAX_LINKS}", compact.len()) });
    }
    sort(&mut compact);
    Ok((storage, compact))
}

fn sort(links: &mut [LinkInfo]) {
    links.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
}

fn convert(t: &ReaderTarget) -> LinkTarget {
    match t {
        ReaderTarget::Hard { address } => LinkTarget::Hard { address: *address },
        ReaderTarget::Soft { path } => LinkTarget::Soft { path: path.clone() },
        ReaderTarget::External { filename, path } => LinkTarget::External { file: filename.clone(), path: path.clone() },
    }
}

/// Dense storage: every record of the name index B-tree points at a link message in the heap.
fn dense_links(file: &H5File, li: &LinkInfoMessage) -> hdf5_reader::error::Result<Vec<LinkInfo>> {
    let h5 = file.reader();
    let st = h5.storage();
    let (osz, lsz) = (h5.superblock().offset_size, h5.superblock().length_size);
    let heap = FractalHeap::parse_at_storage(st, li.fractal_heap_address, osz, lsz)?;
    let btree = BTreeV2Header::parse_at_storage(st, li.btree_name_index_address, osz, lsz)?;
    let records = collect_btree_v2_records_storage(st, &btree, osz, lsz, None, &[], None)?;
    let mut out = Vec::new();
    for record in &records {
        let heap_id = match record {
            BTreeV2Record::LinkNameHash { heap_id, .. } | BTreeV2Record::CreationOrder { heap_id, .. } => heap_id,
            _ => continue,
        };
        if out.len() >= MAX_LINKS {
            return Err(hdf5_reader::error::Error::InvalidData(format!("more than {MAX_LINKS} links")));
        }
        let bytes = heap.get_object_storage(heap_id, st, osz, lsz)?;
        let msg = link::parse(&mut Cursor::new(&bytes), osz, lsz, bytes.len())?;
        out.push(LinkInfo { name: msg.name, target: convert(&msg.target) });
    }
    Ok(out)
}

/// Old-style groups: the v1 B-tree's leaves are `SNOD` nodes of symbol table entries, names in
/// the local heap. Cache type 2 marks a soft link (heap offset of the target path in the scratch pad).
fn symbol_table_links(file: &H5File, stm: &SymbolTableMessage) -> hdf5_reader::error::Result<Vec<LinkInfo>> {
    use hdf5_reader::error::Error;
    let h5 = file.reader();
    let st = h5.storage();
    let (osz, lsz) = (h5.superblock().offset_size, h5.superblock().length_size);
    let heap = LocalHeap::parse_at_storage(st, stm.heap_address, osz, lsz)?;
    let leaves = collect_btree_v1_leaves_storage(st, stm.btree_address, osz, lsz, None, &[], None)?;
    let entry_len = 2 * usize::from(osz) + 4 + 4 + 16;
    let mut out = Vec::new();
    for (_, snod) in &leaves {
        let prefix = st.read_range(*snod, 8)?;
        let count =
            prefix.get(6..8).map(|b| usize::from(u16::from_le_bytes([b[0], b[1]]))).ok_or(Error::UnexpectedEof { offset: *snod, needed: 8, available: prefix.len() as u64 })?;
        if out.len() + count > MAX_LINKS {
            return Err(Error::InvalidData(format!("more than {MAX_LINKS} links")));
        }
        let bytes = st.read_range(*snod, 8 + count * entry_len)?;
        let node = SymbolTableNode::parse(&mut Cursor::new(bytes.as_ref()), osz, lsz)?;
        for entry in &node.entries {
            let name = heap.get_string_storage(entry.link_name_offset, st)?;
            let target = if entry.cache_type == 2 {
                let s = entry.scratch;
                let offset = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                LinkTarget::Soft { path: heap.get_string_storage(u64::from(offset), st)? }
            } else {
                LinkTarget::Hard { address: entry.object_header_address }
            };
            out.push(LinkInfo { name, target });
        }
    }
    Ok(out)
}
