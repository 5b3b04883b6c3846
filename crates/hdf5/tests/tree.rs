//! The file browser's tree and link listing on the STEM fixtures: external links with their
//! targets (hdf5-reader alone drops them), compact vs dense link groups listing identically,
//! dataset storage and filters, and errors confined to the object they belong to (a patched
//! unknown filter id, a corrupt object header). Fixtures: `../shared/fixtures/stem/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;

use scatterlab_hdf5::links::{links, LinkTarget};
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::tree::{NodeKind, StorageLayout};
use scatterlab_hdf5::{open_raw, tree, H5Error, H5File, Tree, TreeOptions};

fn dir() -> PathBuf {
    scatterlab_testkit::fixture("stem")
}

fn fixture(name: &str) -> PathBuf {
    let p = dir().join(name);
    assert!(p.is_file(), "fixture {name} missing: the STEM fixtures must be at {} (../shared/fixtures/stem beside the repository)", dir().display());
    p
}

fn tree_of(name: &str) -> Tree {
    let f = H5File::open_path(fixture(name)).unwrap_or_else(|e| panic!("{e}"));
    tree(&f, &TreeOptions::default())
}

fn patched_tree(name: &str, patch: impl FnOnce(&mut Vec<u8>)) -> (H5File, Tree) {
    let mut data = std::fs::read(fixture(name)).unwrap();
    patch(&mut data);
    let f = H5File::open(bytes(data), name).unwrap_or_else(|e| panic!("{e}"));
    let t = tree(&f, &TreeOptions::default());
    (f, t)
}

const MASTERS: [(&str, usize); 10] = [
    ("dev_small", 3),
    ("dev_small_raw", 3),
    ("dev_small_gzip", 3),
    ("dev_small_lz4", 3),
    ("dev_small_lz4blk", 3),
    ("dev_small_latest", 3),
    ("dev_small_u32", 3),
    ("dev_medium", 4),
    ("dev_oddtail", 3),
    ("dev_oddtail_raw", 3),
];

#[test]
fn masters_list_their_external_links_with_targets() {
    for (prefix, n) in MASTERS {
        let mut t = tree_of(&format!("{prefix}_master.h5"));
        t.resolve_external(|file| dir().join(file).is_file());
        let ext: Vec<_> = t.nodes.iter().filter(|n| matches!(n.kind, NodeKind::ExternalLink { .. })).collect();
        assert_eq!(ext.len(), n, "{prefix}: external links");
        for (k, node) in ext.iter().enumerate() {
            assert_eq!(node.path, format!("/entry/data/data_{:06}", k + 1));
            let NodeKind::ExternalLink { file, path, resolved } = &node.kind else { unreachable!() };
            assert_eq!(file, &format!("{prefix}_data_{:06}.h5", k + 1));
            assert_eq!(path, "/entry/data/data");
            assert_eq!(*resolved, Some(true), "{prefix}: {file} is beside the master");
        }
        assert!(t.problems().is_empty(), "{prefix}: {:?}", t.problems());
        // scan_shape attribute preview on /entry/data.
        let data = t.get("/entry/data").unwrap();
        let scan = data.attrs.iter().find(|a| a.name == "scan_shape").unwrap();
        assert_eq!(scan.dtype, "i64");
        assert!(scan.value.starts_with('['), "{}", scan.value);
        // A missing data file shows as unresolved.
        t.resolve_external(|file| !file.ends_with("_000002.h5"));
        let unresolved: Vec<_> = t.nodes.iter().filter(|n| matches!(n.kind, NodeKind::ExternalLink { resolved: Some(false), .. })).map(|n| n.path.as_str()).collect();
        assert_eq!(unresolved, ["/entry/data/data_000002"]);
    }
    let t = tree_of("dev_small_master.h5");
    let scan = &t.get("/entry/data").unwrap().attrs.iter().find(|a| a.name == "scan_shape").unwrap().value;
    assert_eq!(scan, "[16, 16]");
}

#[test]
fn dense_and_compact_link_groups_list_identically() {
    let old = H5File::open_path(fixture("dev_small_master.h5")).unwrap();
    let latest = H5File::open_path(fixture("dev_small_latest_master.h5")).unwrap();
    // The latest master stores /entry/instrument/detector densely (fractal heap + v2 B-tree),
    // the superblock-v0 master as a symbol table; /entry/data is compact in both.
    let a = tree(&old, &TreeOptions::default());
    let b = tree(&latest, &TreeOptions::default());
    let storage = |t: &Tree, p: &str| match &t.get(p).unwrap().kind {
        NodeKind::Group { storage } => format!("{storage:?}"),
        k => panic!("{p}: {k:?}"),
    };
    assert_eq!(storage(&a, "/entry/instrument/detector"), "SymbolTable");
    assert_eq!(storage(&b, "/entry/instrument/detector"), "Dense");
    assert_eq!(storage(&a, "/entry/data"), "Compact");
    let names = |f: &H5File, g: &str| links(f, g).unwrap().into_iter().map(|l| l.name).collect::<Vec<_>>();
    let detector = names(&latest, "/entry/instrument/detector");
    assert_eq!(detector.len(), 12, "{detector:?}");
    assert_eq!(detector, names(&old, "/entry/instrument/detector"));
    assert_eq!(detector[0], "beam_center_x");
    assert_eq!(names(&latest, "/entry/data"), names(&old, "/entry/data"));
    // The whole trees agree node for node (paths, kinds, shapes, attributes), apart from the
    // group storage and the data file names.
    assert_eq!(a.nodes.len(), b.nodes.len());
    assert_eq!(a.nodes.len(), 34);
    for (x, y) in a.nodes.iter().zip(&b.nodes) {
        assert_eq!(x.path, y.path);
        let norm = |n: &scatterlab_hdf5::Node| match &n.kind {
            NodeKind::Group { .. } => "group".to_string(),
            NodeKind::ExternalLink { file, path, .. } => format!("{}:{path}", file.replace("latest_", "")),
            k => serde_json::to_string(k).unwrap(),
        };
        assert_eq!(norm(x), norm(y), "{}", x.path);
        assert_eq!(serde_json::to_string(&x.attrs).unwrap(), serde_json::to_string(&y.attrs).unwrap(), "{}", x.path);
    }
    let ext = links(&latest, "/entry/data").unwrap();
    assert_eq!(ext[2].target, LinkTarget::External { file: "dev_small_latest_data_000003.h5".into(), path: "/entry/data/data".into() });
}

#[test]
fn datasets_show_shape_type_chunking_and_filters() {
    let ds = |file: &str, path: &str| match tree_of(file).get(path).map(|n| n.kind.clone()) {
        Some(NodeKind::Dataset(d)) => d,
        k => panic!("{file} {path}: {k:?}"),
    };
    let d = ds("dev_small_data_000001.h5", "/entry/data/data");
    assert_eq!((d.shape.clone(), d.dtype.as_str(), d.element_size), (vec![100, 64, 64], "u16", 2));
    let StorageLayout::Chunked { chunks, index } = &d.layout else { panic!("{:?}", d.layout) };
    assert_eq!((chunks.clone(), format!("{index:?}")), (vec![1, 64, 64], "BTreeV1".to_string()));
    assert_eq!(d.filters.len(), 1);
    assert_eq!((d.filters[0].id, d.filters[0].name.as_str(), d.filters[0].supported), (32008, "bitshuffle", true));
    assert_eq!(d.filters[0].client_data, [0, 4, 2, 0, 2]);
    let latest = ds("dev_small_latest_data_000003.h5", "/entry/data/data");
    assert_eq!(latest.shape, [56, 64, 64]);
    assert!(matches!(latest.layout, StorageLayout::Chunked { index: scatterlab_hdf5::raw::ChunkIndexKind::FixedArray, .. }));
    let gzip = ds("dev_small_gzip_data_000001.h5", "/entry/data/data");
    let names: Vec<_> = gzip.filters.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["shuffle", "deflate"]);
    assert_eq!(ds("dev_small_lz4blk_data_000001.h5", "/entry/data/data").filters[0].name, "lz4");
    assert_eq!(ds("dev_small_u32_data_000001.h5", "/entry/data/data").dtype, "u32");
    let odd = ds("dev_oddtail_data_000001.h5", "/entry/data/data");
    assert_eq!(odd.shape, [8, 61, 67]);
    let single = ds("dev_small_single.h5", "/entry/data/data");
    assert!(matches!(single.layout, StorageLayout::Contiguous { bytes: 2_097_152 }), "{:?}", single.layout);
    let mask = ds("dev_small_master.h5", "/entry/instrument/detector/detectorSpecific/pixel_mask");
    assert_eq!((mask.shape, mask.dtype.as_str()), (vec![64, 64], "u32"));
    // Attribute previews.
    let t = tree_of("dev_small_data_000002.h5");
    let attrs = &t.get("/entry/data/data").unwrap().attrs;
    let v: Vec<_> = attrs.iter().map(|a| (a.name.as_str(), a.value.as_str())).collect();
    assert_eq!(v, [("image_nr_high", "200"), ("image_nr_low", "101")]);
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json["nodes"][3]["kind"]["type"], "dataset");
    assert_eq!(json["nodes"][3]["kind"]["filters"][0]["name"], "bitshuffle");
}

/// Byte offset of the filter id of the 32008 entry in the filter pipeline message (v1
/// message: id u16, name length u16, flags u16, value count u16, then the stored name).
fn bitshuffle_filter_id_offset(data: &[u8]) -> usize {
    let name = b"bitshuffle; see";
    let p = data.windows(name.len()).position(|w| w == name).expect("stored filter name");
    assert_eq!(&data[p - 8..p - 6], &32008u16.to_le_bytes(), "filter id before the name");
    p - 8
}

#[test]
fn an_unsupported_filter_is_reported_on_that_dataset_only() {
    let (f, t) = patched_tree("dev_small_data_000002.h5", |d| {
        let at = bitshuffle_filter_id_offset(d);
        d[at..at + 2].copy_from_slice(&32099u16.to_le_bytes());
    });
    let clean = tree_of("dev_small_data_000002.h5");
    assert_eq!(t.nodes.len(), clean.nodes.len(), "everything still lists");
    let problems = t.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, "/entry/data/data");
    assert!(problems[0].1.contains("unsupported filter 32099"), "{}", problems[0].1);
    let NodeKind::Dataset(d) = &t.get("/entry/data/data").unwrap().kind else { panic!() };
    assert_eq!((d.filters[0].id, d.filters[0].supported), (32099, false));
    assert_eq!(d.shape, [100, 64, 64], "shape still shown");
    assert_eq!(t.get("/entry/data/data").unwrap().attrs.len(), 2, "attributes still shown");
    // Reading it is a typed error naming the filter, file and dataset.
    let raw = open_raw(&f, "/entry/data/data").unwrap();
    let mut buf = vec![0u8; raw.chunk_bytes() as usize];
    match raw.read_chunk_into(&f, 0, &mut buf, &mut Vec::new()) {
        Err(e @ H5Error::UnsupportedFilter { id: 32099, .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("dev_small_data_000002.h5") && msg.contains("/entry/data/data"), "{msg}");
        }
        other => panic!("expected UnsupportedFilter 32099, got {other:?}"),
    }
}

#[test]
fn a_corrupt_object_header_gives_one_error_node() {
    let master = "dev_small_master.h5";
    let f = H5File::open_path(fixture(master)).unwrap();
    let mask = "/entry/instrument/detector/detectorSpecific/pixel_mask";
    let addr = links(&f, "/entry/instrument/detector/detectorSpecific")
        .unwrap()
        .into_iter()
        .find_map(|l| match l.target {
            LinkTarget::Hard { address } if l.name == "pixel_mask" => Some(address),
            _ => None,
        })
        .unwrap();
    let clean = tree(&f, &TreeOptions::default());
    let (_, t) = patched_tree(master, |d| {
        // Object header v1 starts with its version (1); 9 is no version at all.
        assert_eq!(d[addr as usize], 1);
        d[addr as usize] = 9;
    });
    assert_eq!(t.nodes.len(), clean.nodes.len());
    let problems = t.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, mask);
    assert!(problems[0].1.contains(master), "{}", problems[0].1);
    for (x, y) in t.nodes.iter().zip(&clean.nodes).filter(|(x, _)| x.path != mask) {
        assert_eq!(serde_json::to_string(&x.kind).unwrap(), serde_json::to_string(&y.kind).unwrap());
    }
}

#[test]
fn links_of_a_missing_group_name_it() {
    let f = H5File::open_path(fixture("dev_small_master.h5")).unwrap();
    let e = links(&f, "/entry/nothing").unwrap_err().to_string();
    assert!(e.contains("dev_small_master.h5") && e.contains("/entry/nothing"), "{e}");
}
