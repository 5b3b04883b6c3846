//! The Fit tab's pure parts: file classification, attaching data, histograms, PNG encoding and
//! cropping, file names. (DE's generation seeds live in `scatterlab_refl::fit`, tested there.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_app::refl_fit::export::{crop, encode_png, file_stem};
use scatterlab_app::refl_fit::loading::{attach, classify, model_from_inputs, Loaded, Target};
use scatterlab_app::refl_fit::plot::histogram;
use scatterlab_app::ReflInputs;
use scatterlab_refl::data::Dataset;
use scatterlab_refl::model::{Model, Polarization, ResolutionSpec};

#[test]
fn files_are_told_apart_by_content() {
    let Ok(Loaded::Data(d)) = classify("run.dat", b"# q R dR\n0.01 0.9 0.01\n0.02 0.5 0.01\n") else { panic!("columns") };
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].data.q, vec![0.01, 0.02]);
    assert_eq!(d[0].data.dr, Some(vec![0.01, 0.01]));
    assert_eq!(d[0].energy_ev, None);
    // Errors name the file (and the line).
    let e = classify("bad.dat", b"0.01 0.9\n0.02 x\n").expect_err("bad number");
    assert!(e.starts_with("bad.dat") && e.contains("line 2"), "{e}");
    let e = classify("m.json", b"{\"format\": \"scatterlab-refl-model\", \"version\": 1, \"layerz\": []}").expect_err("unknown key");
    assert!(e.starts_with("m.json") && e.contains("layerz"), "{e}");
    let e = classify("bin.dat", &[0xff, 0xfe, 0x00]).expect_err("binary");
    assert_eq!(e, "bin.dat: not UTF-8 text");
}

#[test]
fn attach_replaces_or_appends_and_sets_the_resolution() {
    let file = model_from_inputs(&ReflInputs::example());
    let data = Dataset { name: "scan".into(), q: vec![0.02, 0.03, 0.04], r: vec![0.5, 0.1, 0.02], dr: None, dq: Some(vec![1e-3; 3]) };
    // Replace dataset 1 (p): its energy and polarisation stay; dR = 5 % of R; dQ → pointwise.
    let out = attach(&file, &data, 999.0, Polarization::S, Target::Replace(1), 0.05);
    assert_eq!(out.datasets.len(), 2);
    let d = &out.datasets[1];
    assert_eq!((d.energy_ev, d.polarization), (250.0, Polarization::P));
    assert_eq!(d.q, data.q);
    let want: Vec<f64> = data.r.iter().map(|r| 0.05 * r).collect();
    assert_eq!(d.dr, Some(want));
    assert_eq!(d.instrument.resolution, Some(ResolutionSpec::Pointwise));
    assert_eq!(out.datasets[0], file.datasets[0], "others untouched");
    Model::new(out).expect("valid model");
    // Appended: the chosen energy and polarisation, the instrument of the same-energy dataset.
    let out = attach(&file, &data, 250.0, Polarization::Pp, Target::New, 0.05);
    assert_eq!(out.datasets.len(), 3);
    assert_eq!(out.datasets[2].name, "scan");
    assert_eq!(out.datasets[2].polarization, Polarization::Pp);
    assert_eq!(out.datasets[2].instrument.scale, file.datasets[0].instrument.scale);
    assert_eq!(file.datasets.len(), 2, "the input file is not modified");
}

#[test]
fn layer_table_model_reproduces_the_table() {
    let inputs = ReflInputs::example();
    let model = Model::new(model_from_inputs(&inputs)).expect("valid");
    assert_eq!(model.parameter_names(), ["background", "film1_rough", "film1_thick", "film2_rough", "film2_thick", "scale", "substrate_rough"]);
    assert_eq!(model.varying().len(), 5);
    let scatterlab_refl::model::BuiltStack::Uniaxial(stack) = model.stack(0, model.values()).expect("stack") else { panic!("uniaxial") };
    assert_eq!(stack, inputs.stack);
}

#[test]
fn histogram_counts_every_sample() {
    let samples: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.37).sin()).collect();
    let h = histogram(&samples, 20);
    assert_eq!(h.len(), 20);
    assert_eq!(h.iter().map(|b| b.2).sum::<usize>(), 1000);
    let (lo, hi) = (h[0].0 - 0.5 * h[0].1, h[19].0 + 0.5 * h[19].1);
    let (min, max) = samples.iter().fold((f64::MAX, f64::MIN), |m, &v| (m.0.min(v), m.1.max(v)));
    assert!((lo - min).abs() < 1e-12 && (hi - max).abs() < 1e-12);
    assert_eq!(histogram(&[2.0; 5], 10).iter().map(|b| b.2).sum::<usize>(), 5);
    assert!(histogram(&[], 10).is_empty());
}

#[test]
fn png_round_trips_and_crops_clip() {
    let pixels = (0..12 * 8).map(|i| egui::Color32::from_rgba_unmultiplied(i as u8, 255 - i as u8, 7, 255)).collect();
    let image = egui::ColorImage::new([12, 8], pixels);
    // 2 pixels per point; a rect reaching past the image is clipped to it.
    let rect = egui::Rect::from_min_max(egui::pos2(1.0, 2.0), egui::pos2(100.0, 3.0));
    let part = crop(&image, rect, 2.0).expect("non-empty");
    assert_eq!(part.size, [10, 2]);
    assert_eq!(part.pixels[0], image.pixels[4 * 12 + 2]);
    assert!(crop(&image, egui::Rect::from_min_max(egui::pos2(50.0, 0.0), egui::pos2(60.0, 1.0)), 1.0).is_none());

    let bytes = encode_png(&part).expect("encodes");
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("frame");
    assert_eq!((info.width, info.height), (10, 2));
    let want: Vec<u8> = part.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect();
    assert_eq!(&buf[..want.len()], &want[..]);
}

#[test]
fn file_names() {
    assert_eq!(file_stem("/data/fit_task.json"), "fit_task");
    assert_eq!(file_stem("C:\\x\\my run 2.ort"), "my_run_2");
    assert_eq!(file_stem("layer table"), "layer_table");
    assert_eq!(file_stem(""), "model");
}
