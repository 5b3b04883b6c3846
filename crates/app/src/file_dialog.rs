//! Native dialogs for opening a file and choosing an export folder (desktop only; `rfd`: the
//! XDG desktop portal on Linux, the system dialogs on Windows and macOS). A dialog runs on its
//! own thread so the window keeps painting (on macOS, where dialogs must run on the main thread,
//! it blocks the frame instead); its answer is picked up by the next frames. The path text
//! fields stay beside the buttons, for scripts, tests and machines without a portal.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What to ask the user for. No name filters: data files come with any extension (text columns,
/// `.ort`, `.h5`, `.nxs`, none), and a filter the user must first switch off only gets in the way.
#[derive(Clone, Debug)]
pub enum Ask {
    /// One existing file.
    OpenFile {
        /// The dialog's title.
        title: &'static str,
    },
    /// A folder.
    Folder {
        /// The dialog's title.
        title: &'static str,
    },
}

impl Ask {
    /// Shows the dialog and waits for the answer (`None`: cancelled or no dialog available).
    fn run(self) -> Option<PathBuf> {
        match self {
            Ask::OpenFile { title } => rfd::FileDialog::new().set_title(title).pick_file(),
            Ask::Folder { title } => rfd::FileDialog::new().set_title(title).pick_folder(),
        }
    }
}

/// The answer slot: `None` while the dialog is open, then `Some(answer)`.
type Slot = Arc<Mutex<Option<Option<PathBuf>>>>;

/// A dialog that may be open; cloning shares it.
#[derive(Clone, Debug, Default)]
pub struct Pending {
    slot: Option<Slot>,
}

impl Pending {
    /// Opens `ask` unless a dialog of this slot is already open; the UI is repainted when the
    /// user answers.
    pub fn start(&mut self, ask: Ask, ctx: &egui::Context) {
        if self.is_open() {
            return;
        }
        let slot: Slot = Arc::new(Mutex::new(None));
        self.slot = Some(slot.clone());
        let ctx = ctx.clone();
        let answer = move || {
            let path = ask.run();
            // A poisoned lock only means another answer panicked; the slot is ours alone.
            let mut guard = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *guard = Some(path);
            ctx.request_repaint();
        };
        if cfg!(target_os = "macos") {
            answer();
        } else if std::thread::Builder::new().name("file dialog".into()).spawn(answer).is_err() {
            // No thread for it: no dialog; the path field still works.
            self.slot = None;
        }
    }

    /// Whether a dialog is open.
    pub fn is_open(&self) -> bool {
        self.slot.as_ref().is_some_and(|s| s.lock().map_or(true, |g| g.is_none()))
    }

    /// The chosen path, once, when the dialog has closed with one (a cancel gives `None` and
    /// ends the wait too).
    pub fn take(&mut self) -> Option<PathBuf> {
        let answer = {
            let slot = self.slot.as_ref()?;
            let mut guard = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.take()?
        };
        self.slot = None;
        answer
    }
}
