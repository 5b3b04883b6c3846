//! The 4D-STEM workspace's Browse page and export. Browse: the trees of the built-in example
//! (its frames in memory as one 4-D dataset) and of dev_small (master with external links,
//! data files) show the right shapes, types, chunks and filters; quick views of a 1-D, a 2-D and
//! an N-D dataset equal the numbers read independently. Export: the `.npy`, TIFF and PNG bytes
//! decode back to the workspace's numbers and the sidecar JSON carries the provenance.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;
mod stem_common;

use egui_kittest::kittest::Queryable as _;
use scatterlab_app::stem::browse::slice::Slice2;
use scatterlab_app::stem::{example, Page};
use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::{H5File, NodeKind};
use stem_common::{settle, stem_app};

/// The quick view's slice after a frame.
fn quick_view(harness: &mut egui_kittest::Harness<'static, scatterlab_app::ScatterlabApp>) -> Slice2 {
    harness.step();
    harness.step();
    let app = harness.state_mut();
    let data = app.stem.data().cloned();
    app.stem.browser.view(data.as_ref()).expect("a quick view").as_ref().expect("read").clone()
}

#[test]
fn browse_shows_the_trees_and_quick_views_read_their_slices() {
    let mut harness = stem_app();
    settle(&mut harness);
    harness.get_by_label("Browse").click();
    harness.step();
    assert_eq!(harness.state().stem.page, Page::Browse);

    // The example: its frames in memory, 4-D; the default view is frame 0, the sliders pick others.
    harness.get_by_label("frames  32 × 32 × 48 × 48 u16").click();
    let frame = |f: usize| {
        let mut v = vec![0u16; 48 * 48];
        example::frame(f, &mut v);
        v.into_iter().map(f64::from).collect::<Vec<_>>()
    };
    let s = quick_view(&mut harness);
    assert_eq!((s.rows, s.cols), (48, 48));
    assert!(s.values == frame(0), "frame 0");
    assert!(harness.query_by_label("quick view").is_some(), "heatmap shown");
    let mapping = harness.state_mut().stem.browser.mapping.as_mut().expect("mapping");
    mapping.index[0] = 3;
    mapping.index[1] = 5;
    let s = quick_view(&mut harness);
    assert!(s.values == frame(3 * 32 + 5), "sliders pick scan (3, 5)");
    // Scan axes displayed, one detector pixel fixed: that pixel over the scan.
    let mapping = harness.state_mut().stem.browser.mapping.as_mut().expect("mapping");
    mapping.set_y(Some(0));
    mapping.set_x(1);
    mapping.index[2] = 24;
    mapping.index[3] = 20;
    let s = quick_view(&mut harness);
    let want: Vec<f64> = (0..1024).map(|f| frame(f)[24 * 48 + 20]).collect();
    assert_eq!((s.rows, s.cols), (32, 32));
    assert!(s.values == want, "detector pixel (24, 20) over the scan");

    // dev_small: the master (external links resolved beside it) and its three data files.
    let dir = common::fixtures_dir().join("stem");
    harness.state_mut().stem.open_path(&dir.join("dev_small_master.h5"));
    settle(&mut harness);
    let browser = &harness.state().stem.browser;
    let names: Vec<&str> = browser.files.iter().map(|f| f.tree.file.as_str()).collect();
    assert_eq!(names, ["dev_small_master.h5 (in memory)", "dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"]);
    let master = &browser.files[1].tree;
    match &master.get("/entry/instrument/detector/detectorSpecific/pixel_mask").expect("mask").kind {
        NodeKind::Dataset(d) => assert_eq!((d.shape.as_slice(), d.dtype.as_str()), (&[64u64, 64][..], "u32")),
        k => panic!("{k:?}"),
    }
    assert!(matches!(&master.get("/entry/data/data_000003").expect("link").kind, NodeKind::ExternalLink { file, resolved: Some(true), .. } if file == "dev_small_data_000003.h5"));
    match &browser.files[3].tree.get("/entry/data/data").expect("data").kind {
        NodeKind::Dataset(d) => {
            assert_eq!((d.shape.as_slice(), d.dtype.as_str()), (&[100u64, 64, 64][..], "u16"));
            assert!(matches!(&d.layout, scatterlab_hdf5::tree::StorageLayout::Chunked { chunks, .. } if chunks == &[1, 64, 64]));
            assert_eq!(d.filters.iter().map(|f| f.id).collect::<Vec<_>>(), [32008]);
        }
        k => panic!("{k:?}"),
    }
    assert!(harness.query_by_label("pixel_mask  64 × 64 u32").is_some());
    assert_eq!(harness.query_all_by_label("data  100 × 64 × 64 u16").count(), 2, "two full data files");
    assert!(harness.query_by_label("data  56 × 64 × 64 u16").is_some(), "the last one");
    // The root reads "/" (not "//"), and a collapsed group hides what is below it (issue 17, item 9).
    assert!(harness.query_by_label("//").is_none() && harness.query_all_by_label("/").count() >= 1);
    harness.state_mut().stem.browser.collapsed.insert((1, "/entry/instrument".to_owned()));
    harness.step();
    assert!(harness.query_by_label("pixel_mask  64 × 64 u32").is_none(), "collapsed");
    harness.state_mut().stem.browser.collapsed.clear();
    harness.step();
    assert!(harness.query_by_label("pixel_mask  64 × 64 u32").is_some(), "expanded again");
    // A constant image gets a range around its value, not a 1e-6 sliver.
    let display = &harness.state().stem.browser.display;
    assert_eq!(display.limits_for(&[0.0; 16]), (-0.5, 0.5));
    assert_eq!(display.limits_for(&[65535.0; 4]), (32767.5, 98302.5));

    // An external link shows its target: the second data file's frames, 3-D, frame 7 by slider.
    harness.get_by_label("data_000002  → dev_small_data_000002.h5:/entry/data/data").click();
    harness.step();
    assert!(harness.query_by_label_contains("32008 bitshuffle").is_some(), "filters in the inspector");
    assert!(harness.query_by_label_contains("chunked 1 × 64 × 64").is_some(), "chunks in the inspector");
    harness.state_mut().stem.browser.mapping.as_mut().expect("mapping").index[0] = 7;
    let s = quick_view(&mut harness);
    let f = H5File::open_path(dir.join("dev_small_data_000002.h5")).expect("data file");
    let all = dataset_numbers(&f, "/entry/data/data").expect("frames");
    assert_eq!((s.rows, s.cols), (64, 64));
    assert!(s.values == all[7 * 4096..8 * 4096], "frame 107 of the second file");

    // A 2-D dataset (the mask) and a 1-D one (a line), selected in code: they lie below the
    // tree's scrolled part.
    harness.state_mut().stem.browser.select(1, "/entry/instrument/detector/detectorSpecific/pixel_mask");
    let s = quick_view(&mut harness);
    let f = H5File::open_path(dir.join("dev_small_master.h5")).expect("master");
    assert!(s.values == dataset_numbers(&f, "/entry/instrument/detector/detectorSpecific/pixel_mask").expect("mask"), "mask view");
    assert_eq!(s.values.iter().filter(|&&v| v != 0.0).count(), 5, "3 dead + 2 hot masked");
    harness.state_mut().stem.browser.select(1, "/entry/instrument/stem/scan_shape");
    let s = quick_view(&mut harness);
    assert_eq!((s.rows, s.values.as_slice()), (1, &[16.0, 16.0][..]));
    assert!(harness.query_by_label("quick view line").is_some(), "1-D: a line");
    // Scalars and strings show their value in the inspector, with units (issue 17, item 8).
    for (path, shown) in [
        ("/entry/instrument/beam/incident_wavelength", "0.0196874889748088 angstrom"),
        ("/entry/instrument/detector/beam_center_x", "31.6 pixel"),
        ("/entry/instrument/detector/count_time", "0.00009 s"),
        ("/entry/instrument/detector/description", "\"Dectris ARINA-like (synthetic)\""),
    ] {
        harness.state_mut().stem.browser.select(1, path);
        harness.step();
        let value = harness.state().stem.browser.value().cloned();
        assert_eq!(value, Some(Ok(shown.to_owned())), "{path}");
        assert!(harness.query_by_label(shown).is_some(), "{path}: {shown} in the inspector");
    }
    assert!(harness.state().stem.error().is_none());
}

#[test]
fn browse_flags_a_missing_data_file_next_to_its_link() {
    let src = common::fixtures_dir().join("stem");
    let dir = common::temp_dir("stem-browse-missing");
    for f in ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy fixture");
    }
    let mut harness = stem_app();
    harness.state_mut().stem.open_path(&dir.join("dev_small_master.h5"));
    settle(&mut harness);
    harness.get_by_label("Browse").click();
    // The page's first frame only sizes its new containers; clicks land from the second.
    harness.step();
    harness.step();
    assert!(harness.query_by_label("data_000003  → dev_small_data_000003.h5:/entry/data/data (missing)").is_some());
    harness.get_by_label("data_000003  → dev_small_data_000003.h5:/entry/data/data (missing)").click();
    harness.step();
    assert!(harness.query_by_label("the link's target file is not open: dev_small_data_000003.h5 (open it together with the master)").is_some());
}

/// The header dict and the data bytes of a `.npy` file (format 1.0).
fn parse_npy(bytes: &[u8]) -> (String, &[u8]) {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "npy magic and version");
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + len) % 64, 0, "header padded to 64 bytes");
    (String::from_utf8(bytes[10..10 + len].to_vec()).expect("ASCII header"), &bytes[10 + len..])
}

/// The f32 samples and (width, height) of a TIFF, read with the `tiff` crate's decoder.
fn parse_tiff(bytes: &[u8]) -> ((u32, u32), Vec<f32>) {
    assert_eq!(&bytes[..4], b"II*\0", "little-endian baseline TIFF");
    let mut d = tiff::decoder::Decoder::new(std::io::Cursor::new(bytes)).expect("TIFF");
    assert_eq!(d.colortype().expect("colour type"), tiff::ColorType::Gray(32));
    let dims = d.dimensions().expect("dimensions");
    match d.read_image().expect("pixels") {
        tiff::decoder::DecodingResult::F32(v) => (dims, v),
        _ => panic!("not float samples"),
    }
}

#[test]
fn export_bytes_decode_to_the_workspace_numbers_with_provenance() {
    let out = common::temp_dir("stem-export");
    let mut harness = stem_app();
    settle(&mut harness);
    harness.get_by_label("Export images").click();
    harness.step();
    {
        let stem = &mut harness.state_mut().stem;
        stem.export.folder = out.display().to_string();
        stem.export.what.idpc = true;
    }
    harness.get_by_label("Export").click();
    harness.step();
    harness.step();
    let stem = &harness.state().stem;
    let written = stem.export.status.clone().expect("exported").expect("no error");
    assert_eq!(written.len(), 4 * 4, "BF, ADF, mean pattern, iDPC × png, npy, tiff, json");
    assert!(harness.query_by_label_contains("exported 16 files").is_some());
    let read = |name: &str| std::fs::read(out.join(format!("built-in_example_{name}"))).expect(name);

    // BF: exact u64 sums in the .npy, the same as f32 in the TIFF.
    let bf = stem.virtual_image(0).expect("BF").to_vec();
    let npy = read("virtual_BF.npy");
    let (header, body) = parse_npy(&npy);
    assert!(header.contains("'descr': '<u8'") && header.contains("'shape': (32, 32)"), "{header}");
    let got: Vec<u64> = body.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
    assert!(got == bf, "npy = BF sums");
    let ((w, h), samples) = parse_tiff(&read("virtual_BF.tiff"));
    assert_eq!((w, h), (32, 32));
    assert!(samples == bf.iter().map(|&v| v as f32).collect::<Vec<_>>(), "TIFF = BF as f32");

    // The mean pattern as f64.
    let mean = stem.mean_dp().expect("mean");
    let npy = read("dp_mean.npy");
    let (header, body) = parse_npy(&npy);
    assert!(header.contains("'descr': '<f8'") && header.contains("'shape': (48, 48)"), "{header}");
    let got: Vec<f64> = body.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
    assert!(got == mean, "npy = mean pattern");
    let ((w, h), samples) = parse_tiff(&read("dp_mean.tiff"));
    assert_eq!((w, h), (48, 48));
    assert!(samples == mean.iter().map(|&v| v as f32).collect::<Vec<_>>(), "TIFF = mean as f32");

    // The PNG is the display mapping: the STEM crate's colorize with the on-screen settings,
    // each value a 16 × 16 block (enlarged for the scale bar in the lower-left corner).
    let decoder = png::Decoder::new(std::io::Cursor::new(read("virtual_BF.png")));
    let mut reader = decoder.read_info().expect("PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("pixels");
    assert_eq!((info.width, info.height, info.color_type), (512, 512, png::ColorType::Rgba));
    let d = &stem.displays.image;
    let values: Vec<f64> = bf.iter().map(|&v| v as f64).collect();
    let (lo, hi) = d.limits_for(&values);
    let want = scatterlab_stem::reduce::colormap::colorize(&values, lo, hi, d.scale(), d.colormap).expect("colours");
    let blocks: Vec<[u8; 4]> = (0..400 * 512).map(|i| want[(i / 512 / 16) * 32 + (i % 512) / 16]).collect();
    assert!(&pixels[..400 * 512 * 4] == blocks.as_flattened(), "PNG = colorize(BF) with the display settings");

    // The sidecar: geometry, rotation, device, accumulation, version and the source record.
    let json: serde_json::Value = serde_json::from_slice(&read("virtual_BF.json")).expect("JSON");
    let probe = stem.probe().expect("probe");
    assert_eq!(json["product"], "virtual_BF");
    assert_eq!(json["shape"], serde_json::json!([32, 32]));
    assert_eq!(json["dtype"], "uint64");
    assert_eq!(json["files"], serde_json::json!(["built-in_example_virtual_BF.png", "built-in_example_virtual_BF.npy", "built-in_example_virtual_BF.tiff"]));
    assert_eq!(json["record"]["center_row_col"], serde_json::json!(probe.center));
    assert_eq!(json["record"]["bf_radius_px"], serde_json::json!(probe.radius));
    let rotation = stem.dpc().expect("DPC").rotation;
    assert_eq!(json["record"]["rotation_deg"], serde_json::json!(rotation.degrees));
    assert_eq!(json["record"]["use_transpose"], false);
    assert_eq!(json["record"]["device"], "cpu");
    assert!(json["record"]["accumulation"].as_str().is_some_and(|s| s.contains("u64")));
    assert!(json["record"]["version"].as_str().is_some_and(|s| s.contains("scatterlab-stem")));
    assert!(json["backend"].as_str().is_some_and(|s| s.contains("exact")));
    assert_eq!(json["detectors"][0]["name"], "BF");
    assert_eq!(json["detectors"][0]["kind"], "disc");
    assert_eq!(json["display"]["colormap"], d.colormap.name());
    assert_eq!(json["provenance"]["source_shape"], serde_json::json!([32, 32, 48, 48]));
    assert_eq!(json["provenance"]["dtype"], "u16");
    assert_eq!(json["provenance"]["record"]["frames"], serde_json::json!([0, 1024]));
    assert_eq!(json["frames"], serde_json::json!([1024, 1024]));

    // dev_small: the sidecar names the master and the data files with their hashes.
    let dir = common::fixtures_dir().join("stem");
    harness.state_mut().stem.open_path(&dir.join("dev_small_master.h5"));
    settle(&mut harness);
    harness.state_mut().stem.export.what = scatterlab_app::stem::export::ExportWhat { virtual_images: false, pattern: true, com: false, idpc: false };
    harness.state_mut().stem.export_now();
    let status = harness.state().stem.export.status.clone().expect("exported");
    assert_eq!(status.map(|f| f.len()), Ok(4));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("dev_small_master_dp_mean.json")).expect("sidecar")).expect("JSON");
    let sources = json["provenance"]["sources"].as_array().expect("sources");
    let names: Vec<&str> = sources.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"]);
    for s in sources {
        let hash = s["hash"].as_str().unwrap_or_default();
        assert!(hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()), "{s}");
    }
    assert_eq!(json["provenance"]["source_shape"], serde_json::json!([16, 16, 64, 64]));
    let npy = std::fs::read(out.join("dev_small_master_dp_mean.npy")).expect("npy");
    let (_, body) = parse_npy(&npy);
    let mean = harness.state().stem.mean_dp().expect("mean");
    assert!(body.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8"))).collect::<Vec<_>>() == mean, "dev_small mean pattern");
}

/// The centre of mass exports as the colour wheel shown (PNG) with |CoM| as its raw arrays, and
/// the aligned row/column components as f64, each sidecar naming the rotation.
#[test]
fn com_exports_the_wheel_and_the_aligned_components() {
    let out = common::temp_dir("stem-export-com");
    let mut harness = stem_app();
    settle(&mut harness);
    {
        let stem = &mut harness.state_mut().stem;
        stem.export.folder = out.display().to_string();
        stem.export.what = scatterlab_app::stem::export::ExportWhat { virtual_images: false, pattern: false, com: true, idpc: false };
        stem.export_now();
    }
    let stem = &harness.state().stem;
    let written = stem.export.status.clone().expect("exported").expect("no error");
    assert_eq!(written.len(), 3 * 4, "wheel, row, col × png, npy, tiff, json");
    let read = |name: &str| std::fs::read(out.join(format!("built-in_example_{name}"))).expect(name);
    let dpc = stem.dpc().expect("DPC after loading");

    let decoder = png::Decoder::new(std::io::Cursor::new(read("com_wheel.png")));
    let mut reader = decoder.read_info().expect("PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("pixels");
    assert_eq!((info.width, info.height, info.color_type), (512, 512, png::ColorType::Rgba));
    let blocks: Vec<[u8; 4]> = (0..400 * 512).map(|i| dpc.wheel[(i / 512 / 16) * 32 + (i % 512) / 16]).collect();
    assert!(&pixels[..400 * 512 * 4] == blocks.as_flattened(), "PNG = the wheel on screen (16× blocks above the scale bar)");
    let wheel_npy = read("com_wheel.npy");
    let (_, body) = parse_npy(&wheel_npy);
    let magnitude: Vec<f64> = dpc.aligned.r.iter().zip(&dpc.aligned.c).map(|(r, c)| r.hypot(*c)).collect();
    assert!(body.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8"))).collect::<Vec<_>>() == magnitude, "wheel npy = |CoM|");
    for (name, want) in [("com_row", &dpc.aligned.r), ("com_col", &dpc.aligned.c)] {
        let npy = read(&format!("{name}.npy"));
        let (header, body) = parse_npy(&npy);
        assert!(header.contains("'descr': '<f8'") && header.contains("'shape': (32, 32)"), "{header}");
        assert!(&body.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8"))).collect::<Vec<_>>() == want, "{name}");
        let json: serde_json::Value = serde_json::from_slice(&read(&format!("{name}.json"))).expect("JSON");
        assert!(json["description"].as_str().is_some_and(|d| d.contains(&format!("{:.3}°", dpc.rotation.degrees))), "{}", json["description"]);
    }
}
