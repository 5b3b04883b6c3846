//! The desktop window: eframe with the wgpu renderer, whose device the app shares for GPU compute.
//!
//! `scatterlab-app` opens the window; `scatterlab-app --script run.json` runs a scripted session
//! (open an acquisition, apply commands, save a screenshot and the status, close; see
//! `scatterlab_app::native_script`) and exits non-zero if it failed.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    use scatterlab_app::native_script::{NativeScript, Outcome, ScriptedApp};
    use std::process::ExitCode;

    let args: Vec<String> = std::env::args().skip(1).collect();
    let script = match args.as_slice() {
        [] => None,
        [flag, path] if flag == "--script" => match NativeScript::load(std::path::Path::new(path)) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("scatterlab-app: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => {
            eprintln!("usage: scatterlab-app [--script run.json]");
            return ExitCode::FAILURE;
        }
    };
    let options = eframe::NativeOptions {
        // wgpu, not glow: the GPU engine computes on the renderer's own wgpu device.
        renderer: eframe::Renderer::Wgpu,
        viewport: egui::ViewportBuilder::default().with_title("scatterlab").with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    let outcome = Outcome::default();
    let scripted = script.is_some();
    let (run_outcome, mut script) = (outcome.clone(), script);
    let run = eframe::run_native(
        "scatterlab",
        options,
        Box::new(move |cc| {
            let app = scatterlab_app::ScatterlabApp::new(cc);
            Ok(match script.take() {
                Some((script, commands)) => Box::new(ScriptedApp::new(app, script, commands, run_outcome)) as Box<dyn eframe::App>,
                None => Box::new(app),
            })
        }),
    );
    if let Err(e) = run {
        eprintln!("scatterlab-app: {e}");
        return ExitCode::FAILURE;
    }
    let ended = outcome.lock().ok().and_then(|o| o.clone());
    match ended {
        Some(Err(e)) => {
            eprintln!("scatterlab-app: {e}");
            ExitCode::FAILURE
        }
        None if scripted => {
            eprintln!("scatterlab-app: the window closed before the script ended");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

/// On wasm32 the app starts from JavaScript through `start` in the library (src/web.rs);
/// this empty `main` only lets `cargo build --target wasm32-unknown-unknown` build every target.
#[cfg(target_arch = "wasm32")]
fn main() {}
