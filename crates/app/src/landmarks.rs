//! Where a few named widgets were drawn in the last frame, and a one-line JSON status of the app,
//! kept in egui's memory so a host outside the frame loop can read them: the web handle
//! (`web.rs`, `AppControl`) gives them to browser tests, which then click the real buttons
//! (a file dialog needs a real click) and watch a fit run, without reaching into the app's state.
//!
//! Rectangles are in egui points, relative to the canvas (points × zoom = CSS pixels).

use egui::{Context, Id, Rect, Response};

fn key(name: &str) -> Id {
    Id::unique(("scatterlab landmark", name))
}

/// Records where `response`'s widget was drawn under `name` (also while it is disabled).
pub fn mark(response: &Response, name: &str) {
    let rect = response.rect;
    response.ctx.data_mut(|d| d.insert_temp(key(name), rect));
}

/// The rectangle last recorded under `name`.
pub fn rect(ctx: &Context, name: &str) -> Option<Rect> {
    ctx.data(|d| d.get_temp(key(name)))
}

/// Stores the app's status line (JSON) for [`status`].
pub fn set_status(ctx: &Context, json: String) {
    ctx.data_mut(|d| d.insert_temp(Id::unique("scatterlab status"), json));
}

/// The last status stored by [`set_status`] (`"{}"` before the first frame).
pub fn status(ctx: &Context) -> String {
    ctx.data(|d| d.get_temp::<String>(Id::unique("scatterlab status"))).unwrap_or_else(|| "{}".to_owned())
}
