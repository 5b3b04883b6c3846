//! The desktop window: eframe with the wgpu renderer, whose device the app shares for GPU compute.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> eframe::Result<()> {
    let options = eframe::NativeOptions {
        // wgpu, not glow: the GPU engine computes on the renderer's own wgpu device.
        renderer: eframe::Renderer::Wgpu,
        viewport: egui::ViewportBuilder::default()
            .with_title("scatterlab")
            .with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    eframe::run_native(
        "scatterlab",
        options,
        Box::new(|cc| Ok(Box::new(scatterlab_app::ScatterlabApp::new(cc)))),
    )
}

/// On wasm32 the app starts from JavaScript through `start` in the library (src/web.rs);
/// this empty `main` only lets `cargo build --target wasm32-unknown-unknown` build every target.
#[cfg(target_arch = "wasm32")]
fn main() {}
