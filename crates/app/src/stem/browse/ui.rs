//! The browser's layout: the trees on the left (one entry per object, indented by depth, with
//! shape and type; errors in the error colour next to their object), the inspector and the
//! quick view (dimension mapper, then a line or a heatmap with display controls) on the right.

use egui_plot::{Line, Plot, PlotPoints};
use scatterlab_hdf5::tree::{DatasetInfo, StorageLayout};
use scatterlab_hdf5::{Node, NodeKind};

use super::slice::Mapping;
use super::Browser;
use crate::stem::controls::display_controls;
use crate::stem::layout::GAP;
use crate::stem::readout::{colour_bar, hover, Place, BAR_WIDTH};
use crate::stem::resident::Resident;

/// Width of the tree column, points.
const TREE: f32 = 560.0;
/// Width of the quick view, points.
const VIEW: f32 = 420.0;

/// `a × b × c` (or `scalar`).
pub fn dims(shape: &[u64]) -> String {
    if shape.is_empty() {
        "scalar".to_owned()
    } else {
        shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(" × ")
    }
}

/// The one-line summary of a node in the tree (its label, which tests query).
pub fn summary(node: &Node) -> String {
    let name = node.path.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or("/");
    match &node.kind {
        NodeKind::Group { .. } if node.path == "/" => "/".to_owned(),
        NodeKind::Group { .. } => format!("{name}/"),
        NodeKind::Dataset(d) => format!("{name}  {} {}", dims(&d.shape), d.dtype),
        NodeKind::ExternalLink { file, path, resolved } => {
            let missing = if *resolved == Some(false) { " (missing)" } else { "" };
            format!("{name}  → {file}:{path}{missing}")
        }
        NodeKind::SoftLink { target } => format!("{name}  → {target}"),
        NodeKind::HardLink { target } => format!("{name}  = {target}"),
        NodeKind::Other { what } => format!("{name}  ({what})"),
        NodeKind::Error { message } => format!("{name}  error: {message}"),
    }
}

impl Browser {
    /// Draws the browser for what is open (`data`: the frames in memory).
    pub fn ui(&mut self, ui: &mut egui::Ui, data: Option<&Resident>) {
        if self.files.is_empty() {
            ui.weak("nothing open");
            return;
        }
        // The tree narrows to leave the inspector its width; below ~300 points it goes above
        // the inspector instead (shorter), so a narrow window neither clips nor hides either.
        let inspector = VIEW + 40.0 + BAR_WIDTH;
        let room = ui.available_width() - inspector - 2.0 * GAP;
        let (tree_width, beside) = if room >= 300.0 { (room.min(TREE), true) } else { (inspector.min(TREE), false) };
        let tree = |this: &mut Self, ui: &mut egui::Ui| {
            ui.group(|ui| {
                ui.vertical(|ui| {
                    ui.set_width(tree_width);
                    // Not shrunk to the labels' width: the scrollbar belongs at the panel's edge, not mid-panel.
                    let height = if beside { 900.0 } else { 360.0 };
                    egui::ScrollArea::vertical().id_salt("stem browse tree").max_height(height).auto_shrink([false, true]).show(ui, |ui| this.tree_ui(ui));
                })
            });
        };
        let details = |this: &mut Self, ui: &mut egui::Ui| {
            ui.group(|ui| {
                ui.vertical(|ui| {
                    ui.set_width(inspector);
                    this.inspector_ui(ui);
                    ui.separator();
                    this.quick_view_ui(ui, data);
                })
            });
        };
        if beside {
            ui.horizontal_top(|ui| {
                tree(self, ui);
                details(self, ui);
            });
        } else {
            tree(self, ui);
            details(self, ui);
        }
        // A range to fetch (asked for by this frame's selection or quick view, or by a listing):
        // the host picks it up next frame and hands it over in a later one.
        if self.is_waiting() {
            ui.ctx().request_repaint();
        }
    }

    fn tree_ui(&mut self, ui: &mut egui::Ui) {
        let mut clicked = None;
        let mut toggled = None;
        for (i, f) in self.files.iter().enumerate() {
            ui.strong(&f.tree.file);
            for node in &f.tree.nodes {
                // Hidden below a collapsed group (nodes come in depth-first path order).
                let inside = |g: &String| if g == "/" { node.path != "/" } else { node.path.starts_with(&format!("{g}/")) };
                if self.collapsed.iter().any(|(fi, g)| *fi == i && inside(g)) {
                    continue;
                }
                let depth = node.path.matches('/').count().saturating_sub(usize::from(node.path == "/"));
                let selected = self.selected.as_ref().is_some_and(|(fi, p)| *fi == i && *p == node.path);
                ui.horizontal(|ui| {
                    ui.add_space(12.0 * depth as f32);
                    if matches!(node.kind, NodeKind::Group { .. }) {
                        let key = (i, node.path.clone());
                        let open = !self.collapsed.contains(&key);
                        let arrow = ui.add(egui::Button::new(if open { "▾" } else { "▸" }).frame(false)).on_hover_text(if open { "collapse" } else { "expand" });
                        if arrow.clicked() {
                            toggled = Some(key);
                        }
                    }
                    let text = summary(node);
                    let text = match node.kind {
                        NodeKind::Error { .. } => egui::RichText::new(text).color(ui.visuals().error_fg_color),
                        NodeKind::Dataset(DatasetInfo { unsupported: Some(_), .. }) => egui::RichText::new(text).color(ui.visuals().warn_fg_color),
                        _ => egui::RichText::new(text),
                    };
                    if ui.selectable_label(selected, text).clicked() {
                        clicked = Some((i, node.path.clone()));
                    }
                });
            }
            ui.add_space(6.0);
        }
        if let Some((i, p)) = clicked {
            self.select(i, &p);
        }
        if let Some(key) = toggled {
            if !self.collapsed.remove(&key) {
                self.collapsed.insert(key);
            }
        }
    }

    fn inspector_ui(&self, ui: &mut egui::Ui) {
        let Some((f, path)) = &self.selected else {
            ui.weak("select an object to inspect it");
            return;
        };
        let file = self.files.get(*f).map_or("", |b| b.tree.file.as_str());
        ui.strong(format!("{file}:{path}"));
        let Some((tf, tpath, node)) = self.target() else {
            let message = match self.node(*f, path).map(|n| &n.kind) {
                Some(NodeKind::ExternalLink { file, .. }) if self.files.iter().any(|b| b.pending && b.tree.file == *file) => format!("reading {file} …"),
                Some(NodeKind::ExternalLink { file, .. }) => format!("the link's target file is not open: {file} (open it together with the master)"),
                _ => "the link's target file is not open".to_owned(),
            };
            ui.colored_label(ui.visuals().error_fg_color, message);
            return;
        };
        if (tf, tpath.as_str()) != (*f, path.as_str()) {
            ui.label(format!("external link to {}:{tpath}", self.files.get(tf).map_or("", |b| b.tree.file.as_str())));
        }
        egui::Grid::new("stem browse inspector").num_columns(2).striped(true).show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.label(k);
                ui.label(v);
                ui.end_row();
            };
            match &node.kind {
                NodeKind::Dataset(d) => {
                    row("shape", dims(&d.shape));
                    if let Some(m) = &d.max_shape {
                        row("max shape", m.iter().map(|&v| if v == u64::MAX { "∞".to_owned() } else { v.to_string() }).collect::<Vec<_>>().join(" × "));
                    }
                    if let Some(v) = &self.value {
                        row("value", v.clone().unwrap_or_else(|e| format!("cannot read: {e}")));
                    }
                    row("dtype", format!("{} ({} bytes)", d.dtype, d.element_size));
                    row("layout", layout(&d.layout));
                    let filters = d.filters.iter().map(|f| format!("{} {} {:?}{}", f.id, f.name, f.client_data, if f.supported { "" } else { " (unsupported)" }));
                    row("filters", if d.filters.is_empty() { "none".to_owned() } else { filters.collect::<Vec<_>>().join("; ") });
                    if let Some(u) = &d.unsupported {
                        row("cannot read", u.clone());
                    }
                }
                NodeKind::Group { storage } => row("group", format!("{storage:?} links")),
                NodeKind::Error { message } => row("error", message.clone()),
                _ => row("link", summary(node)),
            }
        });
        if !node.attrs.is_empty() {
            ui.strong("attributes");
            egui::Grid::new("stem browse attrs").num_columns(3).striped(true).show(ui, |ui| {
                for a in &node.attrs {
                    ui.label(&a.name);
                    ui.weak(format!("{} {}", a.dtype, if a.shape.is_empty() { String::new() } else { dims(&a.shape) }));
                    ui.add(egui::Label::new(&a.value).truncate());
                    ui.end_row();
                }
            });
        }
    }

    fn quick_view_ui(&mut self, ui: &mut egui::Ui, data: Option<&Resident>) {
        let Some(mut mapping) = self.mapping.clone() else { return };
        ui.strong("Quick view");
        mapper_ui(ui, &mut mapping);
        if self.mapping.as_ref() != Some(&mapping) {
            self.mapping = Some(mapping.clone());
        }
        let line = mapping.y.is_none();
        let ctx = ui.ctx().clone();
        let mut display = self.display.clone();
        let slice = match self.view(data) {
            Some(Ok(s)) => s.clone(),
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
                return;
            }
            None => return,
        };
        if slice.step != [1, 1] {
            ui.weak(format!("every {}th row, {}th column (long axes are strided)", slice.step[0], slice.step[1]));
        }
        if line {
            let points: PlotPoints = slice.values.iter().enumerate().map(|(i, &v)| [(i as u64 * slice.step[1]) as f64, v]).collect();
            let response = Plot::new("stem quick line").width(VIEW).height(240.0).show(ui, |p| p.line(Line::new("values", points))).response;
            response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, "quick view line"));
            return;
        }
        let version = self.view.as_ref().map_or(0, |v| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(&v.0, &mut h);
            std::hash::Hasher::finish(&h)
        });
        self.image.set_scalar(&ctx, "stem quick view", &slice.values, [slice.rows, slice.cols], version, &mut display);
        self.image.shape = [slice.rows, slice.cols];
        let response = ui
            .horizontal_top(|ui| {
                let response = self.image.show(ui, VIEW, "quick view");
                let height = self.image.height(VIEW);
                colour_bar(ui, &display, self.image.limits, "", height, "quick view");
                response
            })
            .inner;
        // Strided views would read out the slice's indices, not the dataset's: no read-out there.
        if slice.step == [1, 1] {
            hover(ui, &response, &self.image, "quick view", "", Place::None);
        }
        display_controls(ui, "stem quick view", &mut display);
        self.image.histogram_ui(ui, VIEW, "quick view");
        self.display = display;
    }
}

/// The storage layout in words.
fn layout(l: &StorageLayout) -> String {
    match l {
        StorageLayout::Compact { bytes } => format!("compact, {bytes} bytes"),
        StorageLayout::Contiguous { bytes } => format!("contiguous, {bytes} bytes"),
        StorageLayout::Chunked { chunks, index } => format!("chunked {} ({index:?} index)", dims(chunks)),
    }
}

/// The dimension mapper: per dimension, x / y buttons or its slider.
fn mapper_ui(ui: &mut egui::Ui, m: &mut Mapping) {
    let n = m.shape.len();
    for d in 0..n {
        ui.horizontal(|ui| {
            ui.label(format!("dim {d} ({})", m.shape[d]));
            if ui.selectable_label(m.x == d, "x").clicked() {
                m.set_x(d);
            }
            if n >= 2 && ui.selectable_label(m.y == Some(d), "y").clicked() {
                m.set_y(Some(d));
            }
            if m.x != d && m.y != Some(d) {
                let max = m.shape[d].saturating_sub(1);
                ui.add(egui::Slider::new(&mut m.index[d], 0..=max).text("index")).on_hover_text(format!("Index along dimension {d}"));
            }
        });
    }
    if n >= 2 {
        let mut line = m.y.is_none();
        if ui.checkbox(&mut line, "line (x only)").changed() {
            m.set_y(if line { None } else { (0..n).rev().find(|&d| d != m.x) });
        }
    }
}
