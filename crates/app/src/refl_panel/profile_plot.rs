//! The depth profile of the stack: δ and β of both axes versus depth z, as the recursion sees it.

use egui_plot::{Corner, Legend, Line, Plot, PlotPoints};
use scatterlab_refl::profile::{depth_grid, profile_at, OpticalConstants};
use scatterlab_refl::Stack;

/// Samples of the profile on the depth grid.
pub const SAMPLES: usize = 400;

/// The profile of one stack (cheap: recomputed synchronously whenever the stack changes).
#[derive(Clone, Debug, PartialEq)]
pub struct DepthProfile {
    /// The stack this profile belongs to.
    pub stack: Stack,
    /// Depths z, Å (0 at the top interface, growing into the sample).
    pub z: Vec<f64>,
    /// The optical constants at each z.
    pub constants: Vec<OpticalConstants>,
}

impl DepthProfile {
    /// Samples `stack` at [`SAMPLES`] depths spanning all its interfaces.
    pub fn new(stack: &Stack) -> Self {
        let z = depth_grid(stack, SAMPLES);
        let constants = profile_at(stack, &z);
        Self { stack: stack.clone(), z, constants }
    }

    /// (z, value) points of one constant, picked by `pick`.
    pub fn points(&self, pick: impl Fn(&OpticalConstants) -> f64) -> Vec<[f64; 2]> {
        self.z.iter().zip(&self.constants).map(|(&z, c)| [z, pick(c)]).collect()
    }
}

/// Draws the four profiles, `width` wide.
pub fn show(ui: &mut egui::Ui, profile: &DepthProfile, width: f32) {
    type Pick = fn(&OpticalConstants) -> f64;
    let lines: [(&str, Pick, egui::Color32); 4] = [
        ("δ_o", |c| c.delta_o, egui::Color32::from_rgb(64, 156, 255)),
        ("δ_e", |c| c.delta_e, egui::Color32::from_rgb(150, 110, 255)),
        ("β_o", |c| c.beta_o, egui::Color32::from_rgb(255, 140, 40)),
        ("β_e", |c| c.beta_e, egui::Color32::from_rgb(230, 70, 90)),
    ];
    // Top left is vacuum (all zero): the legend hides nothing there.
    Plot::new("refl_profile_plot")
        .legend(Legend::default().position(Corner::LeftTop))
        .width(width)
        .height(ui.available_height())
        .x_axis_label("depth z (Å)")
        .y_axis_label("δ, β")
        .show(ui, |plot_ui| {
            for (name, pick, color) in lines {
                plot_ui.line(Line::new(name, PlotPoints::from(profile.points(pick))).color(color).width(1.5));
            }
        });
}
