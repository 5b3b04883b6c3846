//! The Crystal page's state: the CIF text, its asymmetric unit (edited in place by the table),
//! the space-group name as the CIF writes it, and the last error (a CIF error keeps its line and
//! tag apart for display).

use std::sync::mpsc;

use scatterlab_bloch::crystal::{parse_cif_asymmetric, AsymmetricUnit};
use scatterlab_bloch::{BlochError, Crystal};

/// Why a CIF could not be opened: the message, and for a CIF syntax/content error its line and tag.
#[derive(Clone, Debug, PartialEq)]
pub struct CifProblem {
    /// The whole message.
    pub message: String,
    /// 1-based line of the offending construct, when the CIF reader named one.
    pub line: Option<usize>,
    /// The CIF tag (or token) concerned, when named.
    pub tag: Option<String>,
}

impl CifProblem {
    fn from_error(file: &str, e: &BlochError) -> Self {
        match e {
            BlochError::Cif { line, tag, .. } => Self { message: format!("{file}: {e}"), line: Some(*line), tag: Some(tag.clone()) },
            other => Self { message: format!("{file}: {other}"), line: None, tag: None },
        }
    }

    fn plain(message: String) -> Self {
        Self { message, line: None, tag: None }
    }
}

/// The crystal on the Crystal page (Simulate uses it).
#[derive(Default)]
pub struct CrystalState {
    /// The path typed on the desktop.
    pub path: String,
    /// The crystal's name (the file's stem, as the CLI names it).
    pub name: String,
    /// The CIF text as opened.
    pub text: String,
    /// The asymmetric unit (sites as written; the table edits them).
    pub asu: Option<AsymmetricUnit>,
    /// The space group as the CIF names it (H-M symbol and/or number), if it does.
    pub space_group: Option<String>,
    /// Why the last open (or edit) failed.
    pub error: Option<CifProblem>,
    /// Files picked in the browser arrive here (name, text).
    pub(crate) incoming: Option<mpsc::Receiver<super::files::PickedTexts>>,
}

/// The space-group name and number a CIF gives (first of each tag family), for display.
fn space_group(text: &str) -> Option<String> {
    let find = |tags: &[&str]| {
        text.lines().find_map(|line| {
            let trimmed = line.trim_start();
            let lower = trimmed.to_ascii_lowercase();
            tags.iter().find(|t| lower.starts_with(*t) && lower[t.len()..].starts_with(char::is_whitespace)).map(|t| trimmed[t.len()..].trim().trim_matches(['\'', '"']).to_owned())
        })
    };
    let name = find(&["_symmetry_space_group_name_h-m", "_space_group_name_h-m_alt"]);
    let number = find(&["_symmetry_int_tables_number", "_space_group_it_number"]);
    match (name, number) {
        (Some(n), Some(k)) => Some(format!("{n} (No. {k})")),
        (Some(n), None) => Some(n),
        (None, Some(k)) => Some(format!("No. {k}")),
        (None, None) => None,
    }
}

impl CrystalState {
    /// Opens CIF `text` from file `file` (its stem names the crystal, as the CLI names it). On
    /// error the previous crystal stays and the error is shown.
    pub fn open_text(&mut self, file: &str, text: &str) -> Result<(), String> {
        let stem = std::path::Path::new(file).file_stem().map_or_else(|| "crystal".to_owned(), |s| s.to_string_lossy().into_owned());
        let parsed = parse_cif_asymmetric(&stem, text).map_err(|e| CifProblem::from_error(file, &e)).and_then(|asu| {
            let (crystal, _) = asu.expand();
            crystal.validate().map_err(|e| CifProblem::from_error(file, &e)).map(|()| asu)
        });
        match parsed {
            Ok(asu) => {
                (self.name, self.text, self.space_group) = (stem, text.to_owned(), space_group(text));
                self.asu = Some(asu);
                self.error = None;
                Ok(())
            }
            Err(problem) => {
                let message = problem.message.clone();
                self.error = Some(problem);
                Err(message)
            }
        }
    }

    /// Reads and opens the CIF at `path` (desktop).
    pub fn open_path(&mut self, path: &str) -> Result<(), String> {
        self.path = path.to_owned();
        match std::fs::read_to_string(path) {
            Ok(text) => self.open_text(path, &text),
            Err(e) => {
                let message = format!("cannot read {path}: {e}");
                self.error = Some(CifProblem::plain(message.clone()));
                Err(message)
            }
        }
    }

    /// The crystal expanded to P1 from the (possibly edited) asymmetric unit, checked.
    pub fn crystal(&self) -> Result<Crystal, String> {
        let asu = self.asu.as_ref().ok_or("open a CIF on the Crystal page first")?;
        let (crystal, _) = asu.expand();
        crystal.validate().map_err(|e| e.to_string())?;
        Ok(crystal)
    }

    /// The CIF text of the (possibly edited) asymmetric unit: the opened file with its sites
    /// rewritten from the table (what the worker and the GPU path are sent).
    pub fn current_cif(&self) -> Result<String, String> {
        let asu = self.asu.as_ref().ok_or("open a CIF on the Crystal page first")?;
        // Unedited: the file itself, byte for byte.
        if parse_cif_asymmetric(&self.name, &self.text).is_ok_and(|opened| &opened == asu) {
            return Ok(self.text.clone());
        }
        scatterlab_bloch::refine::refined_cif(&self.text, asu, &[]).map_err(|e| e.to_string())
    }

    /// Whether a browser pick is on its way.
    pub fn is_waiting(&self) -> bool {
        self.incoming.is_some()
    }

    /// Opens a file the browser delivered.
    pub fn poll(&mut self) {
        let Some(rx) = &self.incoming else { return };
        match rx.try_recv() {
            Ok(files) => {
                self.incoming = None;
                self.open_files(files);
            }
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => self.incoming = None,
        }
    }

    /// Opens the first CIF of picked or dropped files.
    pub fn open_files(&mut self, files: super::files::PickedTexts) {
        let cif = files.iter().position(|(n, _)| n.to_ascii_lowercase().ends_with(".cif")).unwrap_or(0);
        match files.into_iter().nth(cif) {
            Some((name, Ok(text))) => {
                let _ = self.open_text(&name, &text);
            }
            Some((name, Err(e))) => self.error = Some(CifProblem::plain(format!("{name}: {e}"))),
            None => {}
        }
    }

    /// The crystal's part of the status JSON.
    pub fn status_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.asu.as_ref().map(|_| self.name.clone()),
            "sites": self.asu.as_ref().map(|a| a.sites.len()),
            "atomsP1": self.asu.as_ref().map(|a| a.expand().0.atoms.len()),
            "spaceGroup": self.space_group,
            "cell": self.asu.as_ref().map(|a| [a.cell.lengths, a.cell.angles_deg]),
            "error": self.error.as_ref().map(|e| serde_json::json!({"message": e.message, "line": e.line, "tag": e.tag})),
        })
    }
}
