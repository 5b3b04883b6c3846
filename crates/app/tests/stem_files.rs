//! The 4D-STEM workspace on files, opened natively by path: the dev_small fixture's BF image
//! equals the reference `bf` exactly (display scaling bypassed: the raw u64 sums), and broken
//! inputs (a missing data file, an unknown filter, a non-HDF5 file, a missing path) give
//! messages naming the file while the app keeps running. The browser's path natively: staged
//! files open to the same image, and Browse follows the master's links into the picked files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;
mod stem_common;

use egui_kittest::kittest::Queryable as _;
use scatterlab_app::stem::detectors::{Detector, Shape};
use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::{tree, H5File, NodeKind, TreeOptions};
use stem_common::{settle, stem_app};

#[test]
fn dev_small_bf_equals_the_reference() {
    let dir = common::fixtures_dir().join("stem");
    let mut harness = stem_app();
    settle(&mut harness);
    let path = dir.join("dev_small_master.h5");
    harness.get_by_label("STEM file path").click();
    harness.step();
    harness.get_by_label("STEM file path").type_text(path.to_str().expect("UTF-8 path"));
    harness.step();
    harness.get_by_label("Open").click();
    harness.step();
    settle(&mut harness);
    let stem = &harness.state().stem;
    assert!(stem.error().is_none(), "{:?}", stem.error());
    let data = stem.data().expect("open");
    assert_eq!((data.name.as_str(), data.scan, data.det, data.loaded()), ("dev_small_master.h5", [16, 16], [64, 64], 256));
    let probe = stem.probe().expect("probe");
    // params.json references.auto_probe_*.
    assert!((probe.center[0] - 32.096085409252666).abs() < 1e-9 && (probe.center[1] - 31.551601423487543).abs() < 1e-9, "{probe:?}");
    assert!((probe.radius - 9.45754080179648).abs() < 1e-9);
    assert_bf_is_the_reference(&mut harness);
    let stem = &harness.state().stem;
    assert!(stem.dpc().is_some_and(|d| d.idpc.is_ok()), "dev_small is calibrated: iDPC shown");
}

#[test]
fn broken_inputs_give_messages_naming_the_file() {
    let src = common::fixtures_dir().join("stem");
    let dir = common::temp_dir("stem-broken");
    for f in ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy fixture");
    }
    std::fs::write(dir.join("garbage_master.h5"), b"this is not an HDF5 file at all").expect("write");
    let mut harness = stem_app();
    settle(&mut harness);

    harness.state_mut().stem.open_path(&dir.join("dev_small_master.h5"));
    let note = harness.state().stem.notes().join("\n");
    assert!(note.contains("dev_small_data_000003.h5"), "missing file listed: {note}");
    settle(&mut harness);
    let stem = &harness.state().stem;
    // The frames of the missing file are stepped over and marked absent: never zeros in the CoM,
    // the rotation fit or iDPC (issue 17, item 1).
    assert_eq!(stem.error(), None);
    let data = stem.data().expect("open");
    assert_eq!(data.loaded(), 256);
    assert_eq!((0..256).filter(|&i| data.is_present(i)).count(), 200, "frames 0..200 present");
    assert!(!data.is_present(200) && data.is_present(199));
    let note = stem.notes().join("\n");
    assert!(note.contains("56 of 256 frames have no data"), "{note}");
    let dpc = stem.dpc().expect("DPC over the present frames");
    assert!(dpc.aligned.r[..200].iter().all(|v| v.is_finite()) && dpc.aligned.r[200..].iter().all(|v| v.is_nan()), "CoM NaN without data");
    let phase = dpc.idpc.as_ref().expect("iDPC on the complete rows");
    assert!(phase[..192].iter().all(|v| v.is_finite()) && phase[192..].iter().all(|v| v.is_nan()), "iDPC on rows 0..12 only");
    assert!(harness.query_all_by_label_contains("dev_small_data_000003.h5").count() >= 1, "the missing file is named in the UI");

    for (name, path) in [("garbage_master.h5", dir.join("garbage_master.h5")), ("nowhere_master.h5", dir.join("nowhere_master.h5"))] {
        harness.state_mut().stem.open_path(&path);
        settle(&mut harness);
        let error = harness.state().stem.error().unwrap_or_default().to_owned();
        assert!(error.contains(name), "{error}");
        // What stays on screen is said (issue 17, item 5).
        assert!(error.contains("still showing dev_small_master.h5"), "{error}");
        assert_eq!(harness.state().stem.data().map(|d| d.name.clone()).as_deref(), Some("dev_small_master.h5"), "the open acquisition stays");
    }

    // An unknown HDF5 filter (the bitshuffle id 32008 → 32009 in the first data file's
    // pipeline message, an object header without checksums): reading names the file and filter.
    let odd = common::temp_dir("stem-filter");
    for f in ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"] {
        std::fs::copy(src.join(f), odd.join(f)).expect("copy fixture");
    }
    let data = odd.join("dev_small_data_000001.h5");
    let mut bytes = std::fs::read(&data).expect("read");
    let pipeline = b"\x08\x7d\x40\x00\x01\x00\x05\x00bitshuffle";
    let at = bytes.windows(pipeline.len()).position(|w| w == pipeline).expect("bitshuffle filter message");
    bytes[at] = 0x09;
    std::fs::write(&data, bytes).expect("write");
    harness.state_mut().stem.open_path(&odd.join("dev_small_master.h5"));
    settle(&mut harness);
    let error = harness.state().stem.error().unwrap_or_default().to_owned();
    assert!(error.contains("dev_small_data_000001.h5") && error.contains("32009"), "{error}");
    assert_eq!(harness.state().stem.data().map(|d| d.loaded()), Some(0));

    harness.get_by_label("Example").click();
    settle(&mut harness);
    assert!(harness.state().stem.error().is_none(), "a good load clears the error");
}

/// A dropped file as the desktop integration hands it over (an absolute path).
#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn dropping_an_acquisitions_files_opens_its_master() {
    let dir = common::fixtures_dir().join("stem");
    let mut harness = stem_app();
    settle(&mut harness);
    let files = ["dev_small_data_000001.h5", "dev_small_master.h5", "dev_small_data_000002.h5"];
    harness.input_mut().dropped_files = files.iter().map(|f| std::sync::Arc::new(Dropped(dir.join(f))) as egui::DroppedFileHandle).collect();
    harness.step();
    settle(&mut harness);
    let stem = &harness.state().stem;
    assert!(stem.error().is_none(), "{:?}", stem.error());
    assert_eq!(stem.data().map(|d| (d.name.as_str(), d.loaded())), Some(("dev_small_master.h5", 256)));
    assert_eq!(stem.path, dir.join("dev_small_master.h5").display().to_string());
}

/// Puts the fixture's BF disc on detector 0 and checks its image against dev_small_reference.h5
/// `bf`, exactly.
fn assert_bf_is_the_reference(harness: &mut egui_kittest::Harness<'_, scatterlab_app::ScatterlabApp>) {
    let dir = common::fixtures_dir().join("stem");
    harness.state_mut().stem.detectors[0] = Detector { name: "BF".into(), shape: Shape::Disc { center: [32.3, 31.6], radius: 9.5 } };
    harness.state_mut().stem.touch_detectors();
    harness.step();
    let f = H5File::open_path(dir.join("dev_small_reference.h5")).expect("reference");
    let t = tree(&f, &TreeOptions { attrs: false, ..Default::default() });
    let node = t.nodes.iter().find(|n| n.path.rsplit('/').next() == Some("bf") && matches!(n.kind, NodeKind::Dataset(_))).expect("bf in reference");
    let want = dataset_numbers(&f, &node.path).expect("bf values");
    let got: Vec<f64> = harness.state().stem.virtual_image(0).expect("BF").iter().map(|&v| v as f64).collect();
    assert_eq!(got, want, "BF image = reference bf, exactly");
    assert_eq!(got.iter().sum::<f64>(), 754651.0, "params.json bf total");
}

/// The browser's path, natively: the acquisition opened from staged files (metadata fetched in
/// ranges, each data file handed over whole when the stream asks) gives the same BF image.
#[test]
fn dev_small_from_staged_files_equals_the_reference() {
    use std::sync::Arc;

    use scatterlab_app::stem::staged::StagedFiles;
    use scatterlab_app::stem::staged_open::open_staged;

    let dir = common::fixtures_dir().join("stem");
    let names: Vec<String> = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"].map(String::from).to_vec();
    let read = |name: &str| std::fs::read(dir.join(name)).expect("fixture file");
    let files = Arc::new(StagedFiles::new(names.iter().map(|n| (n.clone(), read(n).len() as u64))));
    let acq = pollster::block_on(open_staged(&files, "dev_small_master.h5", |i, start, end| {
        let bytes = read(&names[i])[start as usize..end as usize].to_vec();
        async move { Ok(bytes) }
    }))
    .expect("opens from staged files");
    let mut harness = stem_app();
    settle(&mut harness);
    let (held, names2, dir2) = (files.clone(), names.clone(), dir.clone());
    let request = Box::new(move |i: usize| {
        let whole = std::fs::read(dir2.join(&names2[i])).expect("data file");
        held.put_whole(i, whole.into()).expect("whole file");
    });
    harness.state_mut().stem.open_staged(acq, files, request);
    settle(&mut harness);
    let stem = &harness.state().stem;
    assert!(stem.error().is_none(), "{:?}", stem.error());
    assert_eq!(stem.data().map(|d| d.loaded()), Some(256));
    assert_bf_is_the_reference(&mut harness);

    // Browse: the master given as bytes (the browser reads it whole) is listed after the frames,
    // its links to the picked data files resolved, its datasets readable.
    let extra = scatterlab_app::stem::browse::ExtraFile { name: names[0].clone(), storage: scatterlab_hdf5::storage::bytes(read(&names[0])), present: names.clone(), staged: None };
    harness.state_mut().stem.browser.set_extra(Some(extra));
    harness.get_by_label("Browse").click();
    harness.step();
    let browser = &harness.state().stem.browser;
    let listed: Vec<&str> = browser.files.iter().map(|f| f.tree.file.as_str()).collect();
    assert_eq!(listed, ["dev_small_master.h5 (in memory)", "dev_small_master.h5"]);
    let master = &browser.files[1].tree;
    assert!(matches!(&master.get("/entry/data/data_000002").expect("link").kind, NodeKind::ExternalLink { resolved: Some(true), .. }));
    harness.state_mut().stem.browser.select(1, "/entry/instrument/detector/detectorSpecific/pixel_mask");
    harness.step();
    let view = harness.state_mut().stem.browser.view(None).cloned().expect("a view").expect("read");
    let f = H5File::open_path(dir.join("dev_small_master.h5")).expect("master");
    assert!(view.values == dataset_numbers(&f, "/entry/instrument/detector/detectorSpecific/pixel_mask").expect("mask"), "mask view from the bytes");
}

/// Steps the app, handing the Browse page each range of a picked file it asks for (read from
/// disk, as the browser fetches `Blob` slices) until it asks for none. Returns the bytes fetched
/// per file.
fn pump_browse(harness: &mut egui_kittest::Harness<'_, scatterlab_app::ScatterlabApp>, files: &[Vec<u8>]) -> Vec<u64> {
    let mut fetched = vec![0u64; files.len()];
    for _ in 0..2000 {
        harness.step();
        let Some((i, start, end)) = harness.state_mut().stem.browser.wanted() else { return fetched };
        fetched[i] += end - start;
        let bytes = files[i][start as usize..end as usize].to_vec();
        harness.state_mut().stem.browser.put_range(i, start, Ok(bytes));
    }
    panic!("Browse still asks for ranges after 2000 fetches");
}

/// The browser's Browse page, natively: the master given as bytes and the other picked files
/// staged (fetched range by range as the page asks). `/entry/data/data_000001` leads into the
/// picked data file: its dataset's shape, type, chunks and filter as the desktop lists them, and
/// a quick view equal to the dataset's numbers; the data file not picked is named, not followed.
#[test]
fn browse_follows_links_into_the_picked_data_files() {
    use std::sync::Arc;

    use scatterlab_app::stem::browse::ExtraFile;
    use scatterlab_app::stem::staged::StagedFiles;

    let dir = common::fixtures_dir().join("stem");
    // data_000003 is not picked.
    let names: Vec<String> = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"].map(String::from).to_vec();
    let bytes: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(dir.join(n)).expect("fixture file")).collect();
    let staged = Arc::new(StagedFiles::new(names.iter().cloned().zip(bytes.iter().map(|b| b.len() as u64))));
    let mut harness = stem_app();
    settle(&mut harness);
    let extra = ExtraFile { name: names[0].clone(), storage: scatterlab_hdf5::storage::bytes(bytes[0].clone()), present: names.clone(), staged: Some(staged) };
    harness.state_mut().stem.browser.set_extra(Some(extra));
    harness.get_by_label("Browse").click();
    let listing = pump_browse(&mut harness, &bytes);
    eprintln!("listing fetched {listing:?} bytes of {:?}", bytes.iter().map(Vec::len).collect::<Vec<_>>());
    // Only metadata: the data files' headers and chunk indexes, not their chunks.
    for i in 1..3 {
        assert!(listing[i] < bytes[i].len() as u64 / 2, "listing {} fetched {} of {} bytes", names[i], listing[i], bytes[i].len());
    }
    let browser = &harness.state().stem.browser;
    let listed: Vec<&str> = browser.files.iter().skip(1).map(|f| f.tree.file.as_str()).collect();
    assert_eq!(listed, ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"]);
    assert!(matches!(&browser.files[1].tree.get("/entry/data/data_000003").expect("link").kind, NodeKind::ExternalLink { resolved: Some(false), .. }));

    // Following the link: the data file's dataset, as the desktop lists it.
    harness.state_mut().stem.browser.select(1, "/entry/data/data_000001");
    pump_browse(&mut harness, &bytes);
    let (file, path, node) = harness.state().stem.browser.target().map(|(f, p, n)| (f, p, n.clone())).expect("the link leads into the data file");
    assert_eq!((file, path.as_str()), (2, "/entry/data/data"));
    let desktop = H5File::open_path(dir.join(&names[1])).expect("data file");
    let want = tree(&desktop, &TreeOptions::default());
    match (&node.kind, &want.get("/entry/data/data").expect("desktop node").kind) {
        (NodeKind::Dataset(d), NodeKind::Dataset(w)) => {
            assert_eq!((d.shape.as_slice(), d.dtype.as_str()), (&[100u64, 64, 64][..], "u16"));
            assert!(matches!(&d.layout, scatterlab_hdf5::tree::StorageLayout::Chunked { chunks, .. } if chunks == &[1, 64, 64]), "{:?}", d.layout);
            assert_eq!(d.filters.iter().map(|f| f.id).collect::<Vec<_>>(), [32008]);
            assert_eq!(format!("{d:?}"), format!("{w:?}"), "the same dataset info as the desktop's");
        }
        k => panic!("{k:?}"),
    }
    assert!(harness.query_by_label("external link to dev_small_data_000001.h5:/entry/data/data").is_some(), "the inspector says where the link leads");

    // Its quick view: frame 7 of the data file (frame 7 of the scan), fetched chunk by chunk.
    harness.state_mut().stem.browser.mapping.as_mut().expect("a 3-D dataset maps to a heatmap").index[0] = 7;
    let viewing = pump_browse(&mut harness, &bytes);
    let view = harness.state_mut().stem.browser.view(None).cloned().expect("a quick view").expect("read");
    assert!(harness.query_by_label("quick view").is_some(), "heatmap shown");
    let all = dataset_numbers(&desktop, "/entry/data/data").expect("data values");
    assert_eq!((view.rows, view.cols), (64, 64));
    assert!(view.values == all[7 * 4096..8 * 4096], "frame 7 of data_000001, exactly");
    assert!(view.values.iter().sum::<f64>() > 0.0, "a frame with counts");
    eprintln!("the quick view fetched {viewing:?} bytes");

    // The data file not picked: named, not followed.
    harness.state_mut().stem.browser.select(1, "/entry/data/data_000003");
    pump_browse(&mut harness, &bytes);
    assert!(harness.query_by_label("the link's target file is not open: dev_small_data_000003.h5 (open it together with the master)").is_some());
}
