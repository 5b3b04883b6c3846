//! Async job plumbing shared by native and web.
//!
//! The GPU path of `scatterlab_refl::compute` is a future whose readback completes through
//! `Device::poll` natively and through the browser's event loop on the web. The UI thread must
//! never block on it (on the web blocking would deadlock: the mapping callback runs on the very
//! thread that waits), so a job runs elsewhere and hands its result back through a channel:
//!
//! - natively on a short-lived worker thread that drives the future with `pollster::block_on`;
//! - on the web with `wasm_bindgen_futures::spawn_local`, i.e. on the browser's microtask queue.
//!
//! Either way the job asks egui for a repaint when it finishes, so the result shows at once.

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};

/// A running background job whose result arrives once.
#[derive(Debug)]
pub struct Job<T> {
    rx: mpsc::Receiver<T>,
}

/// What [`Job::poll`] found.
#[derive(Debug, PartialEq)]
pub enum JobPoll<T> {
    /// Still running.
    Pending,
    /// Finished with this result.
    Done(T),
    /// The job ended without a result (its worker panicked or could not start).
    Lost,
}

impl<T> Job<T> {
    /// Takes the result if the job has finished; never blocks.
    pub fn poll(&self) -> JobPoll<T> {
        match self.rx.try_recv() {
            Ok(value) => JobPoll::Done(value),
            Err(mpsc::TryRecvError::Empty) => JobPoll::Pending,
            Err(mpsc::TryRecvError::Disconnected) => JobPoll::Lost,
        }
    }
}

impl<T> Job<Result<T, String>> {
    /// The outcome of a job that reports failures as text, once it has finished (`None` while it
    /// runs); a job that ended without a result gives `lost` as its error.
    pub fn outcome(&self, lost: &str) -> Option<Result<T, String>> {
        match self.poll() {
            JobPoll::Pending => None,
            JobPoll::Done(result) => Some(result),
            JobPoll::Lost => Some(Err(lost.to_owned())),
        }
    }
}

/// Starts `make()`'s future in the background and requests a repaint of `repaint` when done.
///
/// The future is created inside the worker (not passed in) so that it need not be `Send`:
/// wgpu futures borrow data the closure owns.
#[cfg(not(target_arch = "wasm32"))]
pub fn spawn<T, F, Fut>(repaint: egui::Context, make: F) -> Job<T>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
{
    let (tx, rx) = mpsc::channel();
    let started = std::thread::Builder::new().name("scatterlab-job".into()).spawn(move || {
        let value = pollster::block_on(make());
        // The receiver is gone only if the panel dropped the job as stale: nothing to deliver.
        let _ = tx.send(value);
        repaint.request_repaint();
    });
    if let Err(e) = started {
        // The sender was moved into the failed closure and dropped, so the job reads as Lost.
        log::error!("cannot start a worker thread: {e}");
    }
    Job { rx }
}

/// Starts `make()`'s future on the browser's event loop and requests a repaint when done.
#[cfg(target_arch = "wasm32")]
pub fn spawn<T, F, Fut>(repaint: egui::Context, make: F) -> Job<T>
where
    T: 'static,
    F: FnOnce() -> Fut + 'static,
    Fut: Future<Output = T> + 'static,
{
    let (tx, rx) = mpsc::channel();
    wasm_bindgen_futures::spawn_local(async move {
        let value = make().await;
        let _ = tx.send(value);
        repaint.request_repaint();
    });
    Job { rx }
}

/// Polls a future once with a no-op waker and returns its output if it is already complete.
///
/// The CPU engine's future does all its work in its first poll, so the UI can run it inline
/// without an executor; `None` means the future unexpectedly wanted to wait.
pub fn run_if_ready<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(value) => Some(value),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_future_runs_inline() {
        assert_eq!(run_if_ready(async { 7 }), Some(7));
        assert_eq!(run_if_ready(std::future::pending::<u8>()), None);
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn spawned_job_delivers_its_result() {
        let job = spawn(egui::Context::default(), || async { 41 + 1 });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match job.poll() {
                JobPoll::Done(v) => return assert_eq!(v, 42),
                JobPoll::Lost => panic!("job lost"),
                JobPoll::Pending if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(1)),
                JobPoll::Pending => panic!("job timed out"),
            }
        }
    }
}
