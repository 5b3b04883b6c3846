//! Events for a host page that embeds the app (the npm package's `mountViewer`): what changed in
//! the 4D-STEM workspace, found by comparing the state after each phase of a frame with the last
//! one seen, so every way of changing it (a host command, a drag, a preset button, the app placing
//! its default detectors) is reported the same way, and nothing in the workspace has to call us.
//!
//! Each event is one JSON object with a `type`:
//! ```json
//! {"type": "file-opened", "name": "dev_small_master.h5", "scanShape": [16, 16], "detectorShape": [64, 64], "frames": 256}
//! {"type": "file-loaded", "name": "dev_small_master.h5", "frames": 256, "framesPresent": 256}
//! {"type": "detector-changed", "index": 0, "name": "BF", "selected": true, "source": "command",
//!  "shape": {"kind": "disc", "center": [32.3, 31.6], "radius": 9.5}}
//! {"type": "error", "source": "command", "message": "stemDetector: radius must be > 0 (got -1)"}
//! ```
//! A detector is reported when its name or geometry changed, or when it became the selected one.
//! `source` of a detector change is `"command"` when a host command made it in this frame and
//! `"ui"` otherwise (the user dragging or clicking, or the app placing its default detectors once
//! it found the probe); a drag reports once per frame while it moves. An error's `source` is
//! `"command"` (a host command that failed while applying) or `"stem"` (opening or reading files).

use serde_json::{json, Value};

use crate::stem::detectors::{Detector, Shape};
use crate::StemPanel;

/// What identifies the open acquisition: name, scan and detector shape.
type AcquisitionKey = (String, [usize; 2], [usize; 2]);

/// The state last reported, and the events found since the last [`Watcher::take`].
#[derive(Default)]
pub struct Watcher {
    acquisition: Option<AcquisitionKey>,
    loaded: usize,
    complete: bool,
    detectors: Vec<Detector>,
    selected: usize,
    error: Option<String>,
    queue: Vec<Value>,
}

impl Watcher {
    /// Compares `stem` with the state last seen and queues what changed; `source` names what ran
    /// since then (`"command"` or `"ui"`).
    pub fn observe(&mut self, stem: &StemPanel, source: &str) {
        self.observe_acquisition(stem);
        for (index, now) in stem.detectors.iter().enumerate() {
            let newly_selected = index == stem.selected && index != self.selected;
            if self.detectors.get(index) != Some(now) || newly_selected {
                self.queue.push(json!({"type": "detector-changed", "index": index, "name": now.name, "selected": index == stem.selected,
                    "source": source, "shape": shape_json(&now.shape)}));
            }
        }
        if stem.detectors != self.detectors {
            self.detectors.clone_from(&stem.detectors);
        }
        self.selected = stem.selected;
        let error = stem.error();
        if let Some(message) = error.filter(|&e| Some(e) != self.error.as_deref()) {
            self.queue.push(json!({"type": "error", "source": "stem", "message": message}));
        }
        self.error = error.map(str::to_owned);
    }

    /// A new acquisition (another name or shape, or the same one read again from its first frame)
    /// is `file-opened`; its last frame read is `file-loaded`.
    fn observe_acquisition(&mut self, stem: &StemPanel) {
        let Some(data) = stem.data() else {
            self.acquisition = None;
            return;
        };
        let key = (data.name.clone(), data.scan, data.det);
        if self.acquisition.as_ref() != Some(&key) || data.loaded() < self.loaded {
            self.queue.push(json!({"type": "file-opened", "name": data.name, "scanShape": data.scan, "detectorShape": data.det, "frames": data.n_frames()}));
            self.acquisition = Some(key);
            self.complete = false;
        }
        self.loaded = data.loaded();
        if !self.complete && data.is_complete() && !stem.is_loading() {
            self.complete = true;
            self.queue.push(json!({"type": "file-loaded", "name": data.name, "frames": data.n_frames(), "framesPresent": data.n_frames() - data.skipped()}));
        }
    }

    /// Queues an `error` event.
    pub fn push_error(&mut self, source: &str, message: &str) {
        self.queue.push(json!({"type": "error", "source": source, "message": message}));
    }

    /// The queued events, oldest first, as JSON text (the queue is emptied).
    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.queue).into_iter().map(|e| e.to_string()).collect()
    }
}

/// A detector's geometry as the `stemDetector` command takes it (an infinite `outer` is `null`).
pub fn shape_json(shape: &Shape) -> Value {
    match *shape {
        Shape::Disc { center, radius } => json!({"kind": "disc", "center": center, "radius": radius}),
        Shape::Annulus { center, inner, outer } => json!({"kind": "annulus", "center": center, "inner": inner, "outer": outer.is_finite().then_some(outer)}),
        Shape::Rect { rows, cols } => json!({"kind": "rect", "rows": rows, "cols": cols}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Command;

    fn types(events: &[String]) -> Vec<String> {
        events.iter().map(|e| serde_json::from_str::<Value>(e).map(|v| v["type"].as_str().unwrap_or("?").to_owned()).unwrap_or_default()).collect()
    }

    fn app() -> crate::ScatterlabApp {
        crate::ScatterlabApp::with_gpu(crate::GpuSupport::Unavailable("events test".into()), "none".into())
    }

    #[test]
    fn an_opened_acquisition_is_reported_opened_then_loaded() {
        let mut app = app();
        let mut w = Watcher::default();
        app.stem.open_example();
        w.observe(&app.stem, "ui");
        let events = w.take();
        assert_eq!(types(&events), ["file-opened"]);
        let e: Value = serde_json::from_str(&events[0]).unwrap();
        let data = app.stem.data().unwrap();
        assert_eq!(e["scanShape"], json!(data.scan));
        assert_eq!(e["detectorShape"], json!(data.det));
        assert_eq!(e["frames"].as_u64(), Some(data.n_frames() as u64));
        app.stem.finish_loading();
        w.observe(&app.stem, "ui");
        let events = w.take();
        // Loaded, and the default detectors the app placed on the probe it found (BF, ADF).
        assert_eq!(types(&events)[0], "file-loaded");
        let e: Value = serde_json::from_str(&events[0]).unwrap();
        assert_eq!(e["framesPresent"], e["frames"]);
        let placed: Vec<_> = events[1..].iter().map(|e| serde_json::from_str::<Value>(e).unwrap()["name"].as_str().unwrap_or("").to_owned()).collect();
        assert_eq!(placed, app.stem.detectors.iter().map(|d| d.name.clone()).collect::<Vec<_>>());
        // The same acquisition read again from its first frame is a new open.
        app.stem.open_example();
        w.observe(&app.stem, "ui");
        assert_eq!(types(&w.take())[0], "file-opened");
    }

    #[test]
    fn command_changes_are_reported_once_with_their_geometry() {
        let mut app = app();
        let mut w = Watcher::default();
        w.observe(&app.stem, "ui");
        assert!(w.take().is_empty());
        let c = Command::parse(r#"{"do":"stemDetector","index":0,"name":"BF","shape":{"kind":"annulus","center":[32.5,31.5],"inner":2,"outer":null}}"#).unwrap();
        c.apply(&mut app).unwrap();
        w.observe(&app.stem, "command");
        let events = w.take();
        assert_eq!(events.len(), 1, "{events:?}");
        let e: Value = serde_json::from_str(&events[0]).unwrap();
        assert_eq!(e["type"], "detector-changed");
        assert_eq!(e["source"], "command");
        assert_eq!(e["name"], "BF");
        assert_eq!(e["shape"], json!({"kind": "annulus", "center": [32.5, 31.5], "inner": 2.0, "outer": null}));
        // Nothing changed: nothing reported.
        w.observe(&app.stem, "ui");
        assert!(w.take().is_empty());
        // A second detector: only it is reported.
        let c = Command::parse(r#"{"do":"stemDetector","index":1,"shape":{"kind":"rect","rows":[1,3],"cols":[2,4]}}"#).unwrap();
        c.apply(&mut app).unwrap();
        w.observe(&app.stem, "command");
        let events = w.take();
        assert_eq!(types(&events), ["detector-changed"]);
        let e: Value = serde_json::from_str(&events[0]).unwrap();
        assert_eq!((e["index"].as_u64(), e["name"].as_str()), (Some(1), Some("custom")));
        assert_eq!(e["shape"], json!({"kind": "rect", "rows": [1, 3], "cols": [2, 4]}));
    }

    #[test]
    fn errors_are_queued_in_order() {
        let mut w = Watcher::default();
        w.push_error("command", "stemDetector: index 5, but there are 0 detectors");
        w.push_error("command", "again");
        let events = w.take();
        assert_eq!(types(&events), ["error", "error"]);
        assert!(events[0].contains("index 5") && events[1].contains("again"));
        assert!(w.take().is_empty());
        // A workspace error is reported once, when it appears or changes.
        let mut app = app();
        app.stem.set_error("dev_small_data_000002.h5: missing".into());
        w.observe(&app.stem, "ui");
        w.observe(&app.stem, "ui");
        let events = w.take();
        assert_eq!(types(&events), ["error"]);
        let e: Value = serde_json::from_str(&events[0]).unwrap();
        assert_eq!((e["source"].as_str(), e["message"].as_str()), (Some("stem"), Some("dev_small_data_000002.h5: missing")));
    }
}
