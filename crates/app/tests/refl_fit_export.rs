//! Fit tab exports read back (model JSON, curves CSV, profile CSV, plots PNG), ORSO loading, and
//! the fit driver's Resume (n + m generations equal one run of n + m).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use std::path::{Path, PathBuf};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::refl_fit::{run_fit, FitRequest, FitSettings, Method, ProgressSink, Start};
use scatterlab_app::ScatterlabApp;
use scatterlab_core::CancelToken;
use scatterlab_refl::fit::task::task_to_model;
use scatterlab_refl::model::{BuiltStack, Model};
use scatterlab_refl::Engine;

fn fixture_task() -> (PathBuf, String) {
    let path = common::fit_task_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{} ({e}); set SCATTERLAB_FIXTURES", path.display()));
    (path, text)
}

/// The app on the Fit tab with the fixture task loaded and exports going to `dir`.
fn app_with_task(gpu: bool, dir: &Path) -> Harness<'static, ScatterlabApp> {
    let mut harness = common::app(gpu);
    common::load(&mut harness, &common::fit_task_path());
    let fit = &harness.state().refl.fit;
    assert!(fit.model().is_some(), "{:?}", fit.message());
    harness.get_by_label("to folder"); // the desktop's export folder field
    harness.state_mut().refl.fit.export_dir = dir.display().to_string();
    harness.step();
    harness
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn model_json_curves_and_profile_csv_read_back() {
    let dir = common::temp_dir("fit-export");
    let mut harness = app_with_task(false, &dir);
    for button in ["model JSON", "curves CSV", "profile CSV"] {
        harness.get_by_label(button).click();
        harness.step();
    }
    let fit = &harness.state().refl.fit;
    let model = fit.model().expect("model");
    let values = model.values().to_vec();

    // Model JSON: the same parameters, values and data.
    let saved = Model::from_json(&read(&dir.join("fit_task_model.json"))).expect("saved model parses");
    assert_eq!(saved.parameter_names(), model.parameter_names());
    for (a, b) in saved.values().iter().zip(&values) {
        assert!((a - b).abs() <= 1e-15 * b.abs(), "{a} vs {b}"); // serde_json may differ by an ulp
    }
    assert_eq!(saved.datasets().len(), 4);
    assert_eq!(saved.varying(), model.varying());

    // Curves CSV: every data point, and the model curve as the engine gives it.
    let want = pollster::block_on(model.evaluate(Engine::Cpu, &[&values])).expect("evaluate").remove(0);
    let csv = read(&dir.join("fit_task_curves.csv"));
    let mut lines = csv.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("dataset,q_inv_A,R_data,dR,R_model"));
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|f| f.parse().expect("number")).collect()).collect();
    assert_eq!(rows.len(), 720);
    let mut seen = [0usize; 4];
    for row in &rows {
        let i = row[0] as usize;
        let d = &model.datasets()[i];
        let k = seen[i];
        seen[i] += 1;
        assert_eq!(row[1], d.q[k]);
        assert_eq!(row[2], d.r.expect("R")[k]);
        assert_eq!(row[3], d.dr.expect("dR")[k]);
        assert_eq!(row[4], want[i][k], "dataset {i} q {}", d.q[k]);
    }
    assert_eq!(seen, [180; 4]);

    // Profile CSV: 400 depths from vacuum (δ = 0) into the substrate of dataset 0's stack.
    let csv = read(&dir.join("fit_task_profile.csv"));
    assert!(csv.starts_with("# depth profile of model 'fit task' at 250 eV"), "{}", &csv[..80]);
    let rows: Vec<Vec<f64>> = csv.lines().skip(2).map(|l| l.split(',').map(|f| f.parse().expect("number")).collect()).collect();
    assert_eq!(rows.len(), 400);
    assert!(rows.windows(2).all(|w| w[1][0] > w[0][0]), "z ascending");
    // Vacuum on top: 4σ_max + 10 Å above the first interface, the erf tail is below 1e-6 of δ.
    let delta_max = rows.iter().map(|r| r[1]).fold(0.0, f64::max);
    assert!(rows[0][1..].iter().all(|v| v.abs() <= 1e-6 * delta_max), "{:?}", rows[0]);
    let BuiltStack::Uniaxial(stack) = model.stack(0, &values).expect("stack") else { panic!("fixture is uniaxial") };
    let substrate = stack.layers.last().expect("substrate");
    let last = rows.last().expect("rows");
    // The grid ends 4σ + 10 Å below the last interface: the substrate's δ to 1e-9.
    assert!((last[1] - substrate.delta_o).abs() <= 1e-9 * substrate.delta_o, "{} vs {}", last[1], substrate.delta_o);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn plots_png_is_a_cropped_screenshot() {
    if scatterlab_testkit::skip_gpu("app plots PNG") {
        return;
    }
    let dir = common::temp_dir("fit-png");
    let mut harness = app_with_task(true, &dir);
    harness.get_by_label("plots PNG").click();
    let path = dir.join("fit_task_plots.png");
    for _ in 0..10 {
        harness.step();
        if path.exists() {
            break;
        }
    }
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}: {:?}", harness.state().refl.fit.message()));
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("decodes");
    println!("PNG {}×{}", info.width, info.height);
    // The plots: the 380-point curve plot (a tall window), the 130-point residual plot under
    // it (one item spacing apart), and the 8-point margin all round; nearly the window's width.
    let margin = scatterlab_app::refl_fit::export::PNG_MARGIN as u32;
    let spacing = egui::Style::default().spacing.item_spacing.y as u32;
    assert_eq!(info.height, 380 + spacing + 130 + 2 * margin);
    assert!(info.width > 1000 && info.width <= 1400, "{}", info.width);
    // Nothing clipped at the edges (the y axis label was): the outer columns and rows are
    // background only, one colour.
    let (w, h) = (info.width as usize, info.height as usize);
    let pixel = |x: usize, y: usize| &pixels[4 * (y * w + x)..4 * (y * w + x) + 4];
    let background = pixel(0, 0).to_vec();
    for y in 0..h {
        for x in (0..margin as usize / 2).chain(w - margin as usize / 2..w) {
            assert_eq!(pixel(x, y), &background[..], "ink at ({x}, {y}) in the margin");
        }
    }
    // Not blank: the plots draw axes, points and lines in several colours.
    let distinct: std::collections::HashSet<&[u8]> = pixels.chunks(4).collect();
    assert!(distinct.len() > 20, "{} colours", distinct.len());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn orso_file_gives_two_curves_at_the_header_energy() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../refl/tests/data/orso_two_datasets.ort");
    let bytes = std::fs::read(&path).expect("ORSO example");
    let mut fit = scatterlab_app::FitPanel::default();
    assert!(fit.load_bytes("two.ort", &bytes), "{:?}", fit.message());
    assert_eq!(fit.pending.len(), 2);
    for p in &fit.pending {
        // 49.59 Å → 12398.4193 / 49.59 = 250.02 eV.
        assert!((p.energy_ev - 12398.4193 / 49.59).abs() < 1e-9, "{}", p.energy_ev);
        assert_eq!(p.loaded.data.q.len(), 12);
        assert!(p.loaded.data.dr.is_some() && p.loaded.data.dq.is_some());
    }
    assert!(fit.pending[0].loaded.data.name.starts_with("two.ort: s-polarised"), "{}", fit.pending[0].loaded.data.name);
}

#[test]
fn resume_equals_one_longer_run() {
    let (_, text) = fixture_task();
    let model = Model::new(task_to_model(&text).expect("task")).expect("model");
    let settings = |generations| FitSettings { method: Method::DeLm, seed: 11, max_generations: generations, popsize: 6, ..FitSettings::default() };
    let run = |settings: FitSettings, start: Start| {
        let request = FitRequest { model: model.clone(), settings, start };
        let sink = ProgressSink::default();
        let ctx = egui::Context::default();
        let result = pollster::block_on(run_fit(&request, Engine::Cpu, &sink, &ctx, &CancelToken::new(), || async {}));
        result.expect("fit runs")
    };
    let first = run(settings(3), Start::Fresh);
    let resumed = run(settings(3), Start::Resume(first.de.clone().expect("DE state")));
    let whole = run(settings(6), Start::Fresh);
    let (a, b) = (resumed.de.expect("resumed DE"), whole.de.expect("whole DE"));
    println!("DE after 3+3: χ² {:.3}; after 6: χ² {:.3}", a.result.chi2, b.result.chi2);
    assert_eq!(a.generations, 6);
    assert_eq!(a.result.population, b.result.population);
    assert_eq!(a.result.energies, b.result.energies);
    assert_eq!(a.result.evaluations, b.result.evaluations);
    assert!(a.result.chi2 <= first.de.expect("first DE").result.chi2);
}
