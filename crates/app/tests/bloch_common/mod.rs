//! Helpers of the Bloch workspace tests: the fixture folder, the app in a headless harness,
//! host commands and the status JSON.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::script::{post, Command};
use scatterlab_app::{landmarks, ScatterlabApp, Workspace};
use serde_json::Value;

/// The Bloch fixtures folder (`SCATTERLAB_FIXTURES`, default `../shared/fixtures`, via the test kit).
pub fn fixtures() -> PathBuf {
    scatterlab_testkit::fixtures_dir().join("bloch")
}

pub fn app() -> Harness<'static, ScatterlabApp> {
    app_on(false)
}

/// The app in a harness rendering with wgpu (`gpu`: its device is the app's GPU, as eframe's is).
pub fn app_on(gpu: bool) -> Harness<'static, ScatterlabApp> {
    let builder = Harness::builder().with_size(egui::vec2(1600.0, 1200.0));
    let builder = if gpu { builder.wgpu() } else { builder };
    let mut harness = builder.build_eframe(|cc| ScatterlabApp::new(cc));
    harness.step();
    harness.get_by_label("Bloch").click();
    harness.step();
    assert_eq!(harness.state().workspace, Workspace::Bloch);
    harness
}

/// Posts `json` as a host command and runs the frame that applies it; its error is returned.
pub fn command(harness: &mut Harness<'_, ScatterlabApp>, json: &str) -> Option<String> {
    post(&harness.ctx, Command::parse(json).unwrap_or_else(|e| panic!("{json}: {e}")));
    harness.step();
    harness.state().command_error().map(str::to_owned)
}

pub fn status(harness: &Harness<'_, ScatterlabApp>) -> Value {
    serde_json::from_str(&landmarks::status(&harness.ctx)).expect("status is JSON")
}

/// Steps frames until `busy` is false (deadline: 10 minutes, generous under load).
pub fn settle(harness: &mut Harness<'_, ScatterlabApp>, busy: impl Fn(&ScatterlabApp) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(600);
    harness.step();
    while busy(harness.state()) {
        assert!(Instant::now() < deadline, "still busy after 10 minutes");
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    harness.step();
}

pub fn si_cif() -> String {
    let text = std::fs::read_to_string(fixtures().join("reference.json")).expect("reference.json");
    let reference: Value = serde_json::from_str(&text).expect("reference.json parses");
    reference["crystals"]["Si"]["cif"].as_str().expect("Si CIF").to_owned()
}
