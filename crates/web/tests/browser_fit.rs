//! `Scatterlab.fit` in headless Chromium (run by `scripts/test-browser.sh`): a short seeded DE on the
//! fixture's fit task through the exported handle lowers χ² within bounds measured natively, gives
//! the same result twice for one seed, awaits a Promise returned by `onProgress`; an abort set by a
//! timer (so it can only arrive through the event loop) stops a long fit with a state that resumes
//! and polishes; bad options and a throwing callback reject with named errors; a small film fit
//! gives the native generations, evaluations and χ² bit for bit (issue 17 item 20).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect, JSON};
use scatterlab_web::Scatterlab;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// `shared/fixtures` sits beside the repository (here and in CI's fresh clone).
const TASK: &str = include_str!("../../../../shared/fixtures/refl/fit_task.json");

/// Bounds for seed 11, 15 generations, popsize 5, from the native survey over seeds 0..24
/// (`fit_driver.rs`, `seed_survey_for_browser_bounds`, 2026-12-05: worst DE best 291 466, worst
/// ratio to generation 1 0.805, worst after LM 188 563; natively seed 11 gives 251 601 and 167 246).
/// wasm32 should now draw native's trajectory (indices at 64-bit width, issue 17 item 20), but this
/// test does not pin it: the bounds cover any seed.
const DE_BEST_MAX: f64 = 3.0e5;
const DE_RATIO_MAX: f64 = 0.95;
const LM_CHI2_MAX: f64 = 2.0e5;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &JsValue, ms: i32) -> JsValue;
}

fn get(v: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(v.clone(), |v, k| Reflect::get(&v, &k.into()).unwrap())
}

fn num(v: &JsValue, path: &str) -> f64 {
    get(v, path).as_f64().unwrap_or_else(|| panic!("{path} is not a number"))
}

fn options(json: &str) -> Option<Object> {
    Some(JSON::parse(json).unwrap().dyn_into().unwrap())
}

/// The `message` of the JS `Error` a rejected call produced.
fn error_message(error: JsError) -> String {
    let value: JsValue = error.into();
    value.dyn_into::<js_sys::Error>().expect("a JS Error").message().into()
}

/// One progress report: phase, iteration, bestChi2, and how many earlier callback promises had resolved.
type Report = (String, f64, f64, usize);
/// Reports shared between a callback and the test.
type Reports = Rc<RefCell<Vec<Report>>>;

/// A progress callback recording [`Report`]s; with `promise`, it returns a Promise that resolves on
/// a timer and counts resolutions into the report (the fit must await it).
fn recorder(promise: bool) -> (Closure<dyn FnMut(JsValue) -> JsValue>, Reports) {
    let reports = Rc::new(RefCell::new(Vec::new()));
    let resolved = Rc::new(RefCell::new(0usize));
    let sink = reports.clone();
    let closure = Closure::new(move |p: JsValue| {
        let method = get(&p, "method").as_string().unwrap();
        sink.borrow_mut().push((method, num(&p, "iteration"), num(&p, "bestChi2"), *resolved.borrow()));
        if !promise {
            return JsValue::UNDEFINED;
        }
        let resolved = resolved.clone();
        Promise::new(&mut |resolve, _| {
            let resolved = resolved.clone();
            let done = Closure::once_into_js(move || {
                *resolved.borrow_mut() += 1;
                let _ = resolve.call0(&JsValue::NULL);
            });
            set_timeout(&done, 1);
        })
        .into()
    });
    (closure, reports)
}

#[wasm_bindgen_test]
async fn short_seeded_de_lowers_chi2_and_repeats() {
    let lab = Scatterlab::create("cpu".into(), None).await.map_err(error_message).unwrap();
    let settings = r#"{"method": "de", "seed": 11, "maxGenerations": 15, "popsize": 5}"#;
    let (callback, reports) = recorder(false);
    let a = lab.fit(TASK.into(), options(settings), Some(callback.as_ref().unchecked_ref::<Function>().clone()), None).await.map_err(error_message).unwrap();
    let de: Vec<_> = reports.borrow().iter().filter(|r| r.0 == "de").cloned().collect();
    let (first, de_best, chi2) = (de[0].2, get_best(&a), num(&a, "chi2"));
    console_log!("wasm seed 11: DE χ² {first:.1} (generation 1) → {de_best:.1} (15); LM polish {chi2:.3}; {} evaluations in {:.2} s", num(&a, "evaluations"), num(&a, "seconds"));
    assert_eq!(de.iter().map(|r| r.1).collect::<Vec<_>>(), (1..=15).map(f64::from).collect::<Vec<_>>());
    assert!(de_best <= DE_BEST_MAX && de_best <= DE_RATIO_MAX * first, "DE χ² {first} → {de_best}");
    assert!(chi2 <= de_best && chi2 <= LM_CHI2_MAX, "after LM: {chi2}");
    assert_eq!((num(&a, "generations"), num(&a, "n_points"), get(&a, "cancelled").as_bool()), (15.0, 720.0, Some(false)));
    assert_eq!((get(&a, "device").as_string().unwrap(), get(&a, "method").as_string().unwrap()), ("cpu".into(), "de".into()));
    assert!(num(&a, "parameters.film_thick.stderr") > 0.0 && num(&a, "seconds") > 0.0);

    // Same seed, now with a callback returning a Promise: the same numbers, and each report sees
    // the previous generation's promise resolved (the fit awaited it).
    let (callback, reports) = recorder(true);
    let b = lab.fit(TASK.into(), options(settings), Some(callback.as_ref().unchecked_ref::<Function>().clone()), None).await.map_err(error_message).unwrap();
    assert_eq!(num(&b, "chi2").to_bits(), chi2.to_bits(), "same seed, different χ²");
    assert_eq!(JSON::stringify(&get(&b, "state")).unwrap(), JSON::stringify(&get(&a, "state")).unwrap());
    let de: Vec<_> = reports.borrow().iter().filter(|r| r.0 == "de").cloned().collect();
    assert!(de.iter().enumerate().all(|(k, r)| r.3 == k), "onProgress promises were not awaited: {de:?}");
}

/// The library's DE trajectory test model (a film, 3 free parameters, 40 points).
const FILM: &str = include_str!("../../refl/tests/data/models/film_de_trajectory.json");

/// Issue 17 item 20: one seed, one trajectory on wasm32 and native. Pinned from the native runs
/// (`fit_driver.rs`, `the_worker_follows_the_cli_trajectory`, which equal `scatterlab refl fit`
/// and the desktop app; seen 2026-12-05): (seed, generations, evaluations DE + LM, χ²). If the
/// objective's arithmetic changes, the native test prints the new values.
const FILM_NATIVE: [(u64, f64, f64, f64); 2] = [(3, 37.0, 1715.0, 19.006129476142814), (2026, 43.0, 1984.0, 19.00612947614328)];

#[wasm_bindgen_test]
async fn the_film_fit_follows_the_native_trajectory() {
    let lab = Scatterlab::create("cpu".into(), None).await.map_err(error_message).unwrap();
    for (seed, generations, evaluations, chi2) in FILM_NATIVE {
        let r = lab.fit(FILM.into(), options(&format!(r#"{{"method": "de", "seed": {seed}}}"#)), None, None).await.map_err(error_message).unwrap();
        console_log!(
            "wasm film seed {seed}: {} generations, {} evaluations, χ² {} (native {generations}, {evaluations}, {chi2})",
            num(&r, "generations"),
            num(&r, "evaluations"),
            num(&r, "chi2")
        );
        assert_eq!((num(&r, "generations"), num(&r, "evaluations"), get(&r, "converged").as_bool()), (generations, evaluations, Some(true)), "seed {seed}");
        assert_eq!(num(&r, "chi2").to_bits(), chi2.to_bits(), "seed {seed}: χ² {} vs native {chi2}", num(&r, "chi2"));
    }
}

/// Best χ² of the result's DE state.
fn get_best(result: &JsValue) -> f64 {
    js_sys::Array::from(&get(result, "state.energies")).iter().map(|e| e.as_f64().unwrap()).fold(f64::INFINITY, f64::min)
}

#[wasm_bindgen_test]
async fn an_abort_from_a_timer_stops_the_fit_and_its_state_resumes() {
    let lab = Scatterlab::create("cpu".into(), None).await.map_err(error_message).unwrap();
    // An AbortSignal stand-in, flipped by a timer task: only reachable if the fit yields.
    let signal = Object::new();
    Reflect::set(&signal, &"aborted".into(), &false.into()).unwrap();
    let target = signal.clone();
    set_timeout(&Closure::once_into_js(move || Reflect::set(&target, &"aborted".into(), &true.into()).unwrap()), 300);
    let (callback, reports) = recorder(false);
    let t0 = js_sys::Date::now();
    let cut = lab
        .fit(TASK.into(), options(r#"{"seed": 2, "maxGenerations": 100000, "popsize": 5}"#), Some(callback.as_ref().unchecked_ref::<Function>().clone()), Some(signal))
        .await
        .map_err(error_message)
        .unwrap();
    let (ms, generations) = (js_sys::Date::now() - t0, num(&cut, "generations"));
    console_log!("abort after 300 ms: stopped after {ms:.0} ms at generation {generations}, χ² {:.1}", num(&cut, "chi2"));
    assert_eq!(get(&cut, "cancelled").as_bool(), Some(true));
    assert!((1.0..100000.0).contains(&generations) && ms < 20_000.0);
    assert_eq!(reports.borrow().len() as f64, generations, "one report per generation, no LM after the cancel");
    assert!(num(&cut, "parameters.film_thick.stderr").is_nan());

    // Resume for 2 more generations, then polish the state with LM.
    let resumed = Object::new();
    Reflect::set(&resumed, &"resume".into(), &get(&cut, "state")).unwrap();
    Reflect::set(&resumed, &"maxGenerations".into(), &2.into()).unwrap();
    let more = lab.fit(TASK.into(), Some(resumed.clone()), None, None).await.map_err(error_message).unwrap();
    assert_eq!(num(&more, "generations"), generations + 2.0);
    assert!(get_best(&more) <= get_best(&cut));
    Reflect::set(&resumed, &"method".into(), &"lm".into()).unwrap();
    let polished = lab.fit(TASK.into(), Some(resumed), None, None).await.map_err(error_message).unwrap();
    console_log!("LM from the cancelled state: χ² {:.1} → {:.3}", get_best(&cut), num(&polished, "chi2"));
    assert!(num(&polished, "chi2") < get_best(&cut) && get(&polished, "state").is_undefined());
}

#[wasm_bindgen_test]
async fn bad_options_and_a_throwing_callback_reject_by_name() {
    let lab = Scatterlab::create("cpu".into(), None).await.map_err(error_message).unwrap();
    let fail = |settings: &'static str| {
        let lab = &lab;
        async move { error_message(lab.fit(TASK.into(), options(settings), None, None).await.expect_err(settings)) }
    };
    let e = fail(r#"{"maxGeneration": 3}"#).await;
    assert!(e.contains("unknown option \"maxGeneration\""), "{e}");
    let e = fail(r#"{"method": "nelder-mead"}"#).await;
    assert!(e.contains("fit options.method") && e.contains("nelder-mead"), "{e}");
    let e = fail(r#"{"seed": -1}"#).await;
    assert!(e.contains("fit options.seed"), "{e}");
    let e = fail(r#"{"resume": {"population": [[1, 2]], "energies": [1, 2]}}"#).await;
    assert!(e.contains("1 members but 2 energies"), "{e}");
    let e = error_message(lab.fit("{\"version\": 1}".into(), None, None, None).await.expect_err("empty model"));
    console_log!("bad model -> {e}");
    let throwing = Closure::<dyn FnMut(JsValue) -> Result<(), JsValue>>::new(|_| Err(js_sys::Error::new("boom").into()));
    let e = error_message(
        lab.fit(TASK.into(), options(r#"{"maxGenerations": 50, "popsize": 5}"#), Some(throwing.as_ref().unchecked_ref::<Function>().clone()), None)
            .await
            .expect_err("throwing callback"),
    );
    assert_eq!(e, "fit: onProgress threw: boom");
    // Still usable afterwards.
    let ok = lab.fit(TASK.into(), options(r#"{"method": "lm"}"#), None, None).await.map_err(error_message).unwrap();
    assert!(num(&ok, "chi2").is_finite());
}
