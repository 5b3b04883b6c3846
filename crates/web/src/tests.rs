//! Unit tests of the CPU session (the browser tests cover the GPU and the exported handle).

use super::*;
use std::future::Future;
use std::task::{Context, Poll, Waker};

/// The CPU path never awaits anything pending: one poll completes it.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("CPU future was pending"),
    }
}

fn film() -> Stack {
    Stack::from_columns(&[0.0, 120.0, 0.0], &[0.0, 3.0, 4.0], &[0.0, 1.2e-5, 7.6e-6], &[0.0, 1.1e-6, 1.7e-7], &[0.0, 1.3e-5, 7.6e-6], &[0.0, 1.0e-6, 1.7e-7]).unwrap()
}

#[test]
fn device_names_parse() {
    assert_eq!(parse_device("cpu"), Ok(DeviceKind::Cpu));
    assert_eq!(parse_device("GPU"), Ok(DeviceKind::Gpu));
    assert!(parse_device("tpu").unwrap_err().contains("tpu"));
}

#[test]
fn cpu_session_matches_engine() {
    let session = ready(Session::new(DeviceKind::Cpu)).unwrap();
    assert_eq!(session.device(), DeviceKind::Cpu);
    assert_eq!(session.backend(), "cpu f64");
    let stack = film();
    let q = [0.02, 0.05, 0.1, 0.3];
    let got = ready(session.reflectivity(8047.8, &q, &stack)).unwrap();
    let want = scatterlab_refl::cpu::reflectivity(&CurveRequest { stack: &stack, energy_ev: 8047.8, q: &q }).unwrap();
    assert_eq!(got, want);
}

#[test]
fn bad_inputs_name_the_object() {
    let session = ready(Session::new(DeviceKind::Cpu)).unwrap();
    let mut stack = film();
    stack.layers[1].thickness = f64::NAN;
    let e = ready(session.reflectivity(8047.8, &[0.1], &stack)).unwrap_err().to_string();
    assert!(e.contains("layer 1 thickness"), "{e}");
    let e = ready(session.reflectivity(8047.8, &[0.1, 100.0], &film())).unwrap_err().to_string();
    assert!(e.contains("q[1]") && !e.contains("curve"), "{e}");
}
