//! What a 4D-STEM user reads off the images (issue 17, items 16 and 17): colour bars with the
//! limits in units beside each image, the hover read-out (row, col, value, units, and Å/nm or
//! mrad), the CoM components on a diverging colormap centred at 0, the export's one zip and
//! PNG scale bar, and columns that reflow with the window instead of clipping.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;
mod stem_common;

use std::io::Read as _;

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::stem::example;
use scatterlab_app::stem::readout::bar_number;
use scatterlab_app::stem::scale::{PixelSize, ScaleBar};
use scatterlab_app::stem::view::{fmt, symmetric_limits};
use scatterlab_app::{ScatterlabApp, Workspace};
use stem_common::{settle, stem_app};

/// The centre of pixel (row, col) of a `shape` image drawn in `rect`.
fn centre_of(rect: egui::Rect, shape: [usize; 2], row: usize, col: usize) -> egui::Pos2 {
    egui::pos2(rect.left() + (col as f32 + 0.5) * rect.width() / shape[1] as f32, rect.top() + (row as f32 + 0.5) * rect.height() / shape[0] as f32)
}

/// Hovers pixel (row, col) of the image labelled `label`; returns the read-out.
fn hover(harness: &mut Harness<'static, ScatterlabApp>, label: &str, shape: [usize; 2], row: usize, col: usize) -> scatterlab_app::stem::readout::Hover {
    let rect = harness.get_by_label(label).rect();
    harness.hover_at(centre_of(rect, shape, row, col));
    harness.step();
    harness.step();
    harness.state().stem.hover().cloned().unwrap_or_else(|| panic!("no read-out over {label}"))
}

#[test]
fn hover_reads_value_units_and_place_and_colour_bars_show_the_limits() {
    let mut harness = stem_app();
    settle(&mut harness);
    let scan = example::SCAN;
    let step = example::calibration().scan_step_a.expect("the example's step");
    let size = PixelSize::Angstrom(step);

    // Virtual image (BF): the exact sum at (5, 9) and the place in Å (0.3 Å steps).
    let h = hover(&mut harness, "virtual image", scan, 5, 9);
    let bf = harness.state().stem.virtual_image(0).expect("BF").to_vec();
    assert_eq!((h.image.as_str(), h.row, h.col, h.unit.as_str()), ("virtual image", 5, 9, "counts"));
    assert_eq!(h.value, bf[5 * scan[1] + 9] as f64);
    assert_eq!(h.position.as_deref(), Some("y 1.5 Å, x 2.7 Å"));
    assert_eq!(h.position, Some(format!("y {}, x {}", size.describe(5.0), size.describe(9.0))));
    let status: serde_json::Value = serde_json::from_str(&harness.state().status_json()).expect("status JSON");
    assert_eq!(status["stem"]["hover"]["row"], 5);
    assert_eq!(status["stem"]["hover"]["value"].as_f64(), Some(h.value));
    println!("virtual image read-out: {}", h.text());

    // Its colour bar names the limits on display in counts.
    let (_, (lo, hi)) = harness.state().stem.displayed_image().expect("drawn");
    let bar = format!("virtual image colour bar: {} … {} counts", bar_number(lo), bar_number(hi));
    assert!(harness.query_by_label(&bar).is_some(), "missing {bar:?}");
    assert!(harness.query_by_label_contains("diffraction pattern colour bar:").is_some());
    assert!(harness.query_by_label_contains("iDPC phase colour bar:").is_some());

    // Diffraction pattern: the mean at (20, 30) and the angle from the beam centre in mrad.
    let det = example::DET;
    let h = hover(&mut harness, "diffraction pattern", det, 20, 30);
    let stem = &harness.state().stem;
    let mean = stem.mean_dp().expect("mean");
    assert_eq!((h.row, h.col, h.unit.as_str()), (20, 30, "counts/frame"));
    assert!((h.value - mean[20 * det[1] + 30]).abs() <= 1e-12 * mean[20 * det[1] + 30].abs(), "{} vs {}", h.value, mean[20 * det[1] + 30]);
    let probe = stem.probe().expect("probe");
    let mrad = stem.data().expect("data").calibration.mrad_per_px(probe.radius).expect("sampling");
    let theta = (20.0 - probe.center[0]).hypot(30.0 - probe.center[1]) * mrad;
    assert_eq!(h.position, Some(format!("θ {} mrad", fmt(theta))));
    println!("pattern read-out: {} (sampling {mrad:.4} mrad/px)", h.text());

    // CoM components: signed, one range symmetric about 0 for both, read out in px.
    let dpc = stem.dpc().expect("DPC").clone();
    let both: Vec<f64> = dpc.aligned.r.iter().chain(&dpc.aligned.c).copied().collect();
    let (lo, hi) = symmetric_limits(&both, 99.5);
    assert!(lo < 0.0 && lo == -hi, "{lo} {hi}");
    let bar = format!("CoM components colour bar: {} … {} px", bar_number(lo), bar_number(hi));
    assert!(harness.query_by_label(&bar).is_some(), "missing {bar:?}");
    let h = hover(&mut harness, "CoM column component", scan, 7, 21);
    assert_eq!((h.image.as_str(), h.unit.as_str()), ("CoM column", "px"));
    assert_eq!(h.value, dpc.aligned.c[7 * scan[1] + 21]);
    let h = hover(&mut harness, "CoM row component", scan, 30, 2);
    assert_eq!(h.value, dpc.aligned.r[30 * scan[1] + 2]);

    // Off every image: no read-out.
    harness.hover_at(egui::pos2(5.0, 5.0));
    harness.step();
    assert!(harness.state().stem.hover().is_none());
}

#[test]
fn one_zip_holds_every_file_and_pngs_carry_the_scale_bar() {
    let out = common::temp_dir("stem-export-zip");
    let mut harness = stem_app();
    settle(&mut harness);
    {
        let stem = &mut harness.state_mut().stem;
        stem.export.folder = out.display().to_string();
        stem.export.what = scatterlab_app::stem::export::ExportWhat { virtual_images: true, pattern: true, com: true, idpc: true };
    }
    let files = harness.state_mut().stem.export_files().expect("files");
    // BF, ADF, mean pattern, wheel, row, col, iDPC: 7 images × (png, npy, tiff, json).
    assert_eq!(files.len(), 7 * 4);
    harness.state_mut().stem.export_zip_now();
    let status = harness.state().stem.export.status.clone().expect("exported").expect("no error");
    let zip_path = out.join("built-in_example_export.zip");
    assert_eq!(status, vec![zip_path.display().to_string()], "one file written");
    assert_eq!(std::fs::read_dir(&out).expect("folder").count(), 1, "only the zip in the folder");
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&zip_path).expect("zip")).expect("a zip");
    assert_eq!(archive.len(), 28);
    for (i, (name, bytes)) in files.iter().enumerate() {
        let mut entry = archive.by_index(i).expect("entry");
        assert_eq!(entry.name().expect("entry name"), name.as_str());
        let mut got = Vec::new();
        entry.read_to_end(&mut got).expect("read");
        // The sidecars hold the same record; every data file is byte for byte the same.
        if !name.ends_with(".json") {
            assert!(&got == bytes, "{name}");
        }
    }
    harness.get_by_label("Export images").click();
    harness.step();
    assert!(harness.query_by_label_contains("exported 28 files in one zip").is_some());

    // The PNG: enlarged 16× (32 → 512 columns), each data pixel a flat block of the display
    // mapping, a 2 Å bar (a quarter of 32 × 0.3 Å = 2.4 Å) of 6.67 × 16 = 107 PNG pixels.
    let (_, png_bytes) = files.iter().find(|(n, _)| n.ends_with("virtual_BF.png")).expect("BF png");
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("pixels");
    assert_eq!((info.width, info.height), (512, 512));
    let stem = &harness.state().stem;
    let bf: Vec<f64> = stem.virtual_image(0).expect("BF").iter().map(|&v| v as f64).collect();
    let d = &stem.displays.image;
    let (lo, hi) = d.limits_for(&bf);
    let want = scatterlab_stem::reduce::colormap::colorize(&bf, lo, hi, d.scale(), d.colormap).expect("colours");
    for y in 0..400 {
        for x in 0..512 {
            let got = &pixels[(y * 512 + x) * 4..(y * 512 + x + 1) * 4];
            assert_eq!(got, want[(y / 16) * 32 + x / 16], "PNG pixel ({y}, {x})");
        }
    }
    let bar = ScaleBar::for_image(32, PixelSize::Angstrom(0.3)).expect("bar");
    assert_eq!((bar.length, bar.unit), (2.0, "Å"));
    let (_, json) = files.iter().find(|(n, _)| n.ends_with("virtual_BF.json")).expect("BF json");
    let json: serde_json::Value = serde_json::from_slice(json).expect("JSON");
    assert_eq!(json["scale_bar"], serde_json::json!({"length": 2.0, "unit": "Å", "data_pixels": bar.pixels, "png_factor": 16, "png_pixels": 107}));
    let row = 512 - 512 / 48 - 512 / 160 + 1;
    let white = (0..512).filter(|&x| pixels[(row * 512 + x) * 4..(row * 512 + x + 1) * 4] == [255, 255, 255, 255]).count();
    assert_eq!(white, 107, "bar pixels on row {row}");
    // The components' sidecars: a diverging map centred at 0.
    let (_, json) = files.iter().find(|(n, _)| n.ends_with("com_row.json")).expect("row json");
    let json: serde_json::Value = serde_json::from_slice(json).expect("JSON");
    assert_eq!(json["display"]["colormap"], "RdBu");
    assert_eq!(json["display"]["centred_at_zero"], true);
    let limits = &json["display"]["limits"];
    assert_eq!(limits[0].as_f64().map(|v| -v), limits[1].as_f64());
}

/// The app on the 4D-STEM workspace in a `width` × `height` window.
fn stem_app_sized(width: f32, height: f32) -> Harness<'static, ScatterlabApp> {
    let mut harness = Harness::builder().with_size(egui::vec2(width, height)).build_eframe(|cc| ScatterlabApp::new(cc));
    harness.step();
    harness.get_by_label("4D-STEM").click();
    harness.step();
    assert_eq!(harness.state().workspace, Workspace::Stem);
    harness
}

#[test]
fn columns_reflow_with_the_window() {
    for (width, per_row) in [(800.0, 2), (1024.0, 2), (1440.0, 3)] {
        let mut harness = stem_app_sized(width, 1000.0);
        settle(&mut harness);
        harness.step();
        assert_eq!(harness.state().stem.columns().per_row, per_row, "{width} px");
        let dp = harness.get_by_label("diffraction pattern").rect();
        let image = harness.get_by_label("virtual image").rect();
        let wheel = harness.get_by_label("centre of mass").rect();
        // Nothing past the window's right edge.
        for (name, r) in [("pattern", dp), ("image", image), ("wheel", wheel)] {
            assert!(r.right() <= width, "{width} px: {name} ends at {}", r.right());
        }
        assert!(image.left() > dp.right(), "{width} px: pattern and image side by side");
        if per_row == 2 {
            assert!(wheel.top() > dp.bottom(), "{width} px: DPC column below the first row");
        } else {
            assert!(wheel.left() > image.right(), "{width} px: three columns side by side");
            // The row fills the window (it was a quarter empty at 1440 px).
            assert!(wheel.right() > 0.8 * width, "{width} px: last column ends at {}", wheel.right());
        }
        println!("{width} px: {} columns per row, images {:.0} pt wide", per_row, image.width());
    }
}
