//! `BlobStorage` and `H5Session` in a dedicated Web Worker (the only place `FileReaderSync`
//! exists), run by `scripts/test-browser.sh`: the dev_small (bitshuffle+LZ4) and dev_oddtail
//! (raw tail) fixtures as `Blob`s / `File`s, read range by range, give exactly the reference
//! sums of `<prefix>_reference.h5` (read with our reader in the same wasm); the stream's batches
//! arrive as typed arrays; a missing data file is named; wasm memory stays < 64 MiB after
//! streaming (the fixture bytes compiled into this test are ~1 MB of it).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::ops::ControlFlow;
use std::sync::Arc;

use js_sys::{Array, Reflect, Uint8Array};
use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::{bytes, DynStorage};
use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::{tree, H5File, NodeKind, TreeOptions};
use scatterlab_stem::load::{Acquisition, Hints, MapFileSet, MaskPolicy, StreamOptions};
use scatterlab_web::h5::{BlobStorage, H5Session};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;
use web_sys::{Blob, File};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

macro_rules! fixture {
    ($name:literal) => {
        ($name, include_bytes!(concat!("../../../../shared/fixtures/stem/", $name)).as_slice())
    };
}

const SMALL: [(&str, &[u8]); 4] =
    [fixture!("dev_small_master.h5"), fixture!("dev_small_data_000001.h5"), fixture!("dev_small_data_000002.h5"), fixture!("dev_small_data_000003.h5")];
const ODDTAIL: [(&str, &[u8]); 4] =
    [fixture!("dev_oddtail_master.h5"), fixture!("dev_oddtail_data_000001.h5"), fixture!("dev_oddtail_data_000002.h5"), fixture!("dev_oddtail_data_000003.h5")];
const SMALL_REF: &[u8] = include_bytes!("../../../../shared/fixtures/stem/dev_small_reference.h5");
const ODDTAIL_REF: &[u8] = include_bytes!("../../../../shared/fixtures/stem/dev_oddtail_reference.h5");

fn parts(data: &[u8]) -> Array {
    Array::of1(&Uint8Array::from(data))
}

fn blob(data: &[u8]) -> Blob {
    Blob::new_with_u8_array_sequence(&parts(data)).expect("Blob")
}

/// A reference dataset by name, read with our reader from bytes in memory.
fn reference(file: &[u8], name: &str) -> Vec<u64> {
    let f = H5File::open(bytes(file.to_vec()), "reference.h5").unwrap();
    let t = tree(&f, &TreeOptions { attrs: false, ..Default::default() });
    let node = t.nodes.iter().find(|n| n.path.rsplit('/').next() == Some(name) && matches!(n.kind, NodeKind::Dataset(_))).unwrap();
    dataset_numbers(&f, &node.path).unwrap().into_iter().map(|x| x as u64).collect()
}

fn wasm_memory_bytes() -> f64 {
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    memory.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64
}

/// Streams `files` through BlobStorage and compares sum_dp, sum_dp_raw, max_dp and total.
fn check_sums(files: &[(&str, &[u8])], reference_file: &[u8]) -> u64 {
    let mut set = MapFileSet::new();
    for (name, data) in files {
        set.insert(*name, Arc::new(BlobStorage::new(&blob(data), *name).unwrap()) as DynStorage);
    }
    let master = files[0].0;
    let acq = Acquisition::open(&set, master, &Hints::default()).unwrap_or_else(|e| panic!("{master}: {e}"));
    assert!(acq.is_complete(), "{master}: {:?}", acq.missing());
    let [r, c] = acq.det_shape();
    let px = r * c;
    for mask in [MaskPolicy::Keep, MaskPolicy::ZeroMasked] {
        let (mut sum, mut max, mut total) = (vec![0u64; px], vec![0u64; px], Vec::new());
        let opts = StreamOptions { mask, batch_frames: 16 };
        let mut on = |b: scatterlab_stem::load::FrameBatch<'_>| {
            for f in b.data.to_u64().chunks_exact(px) {
                for (i, &x) in f.iter().enumerate() {
                    sum[i] += x;
                    max[i] = max[i].max(x);
                }
                total.push(f.iter().sum::<u64>());
            }
            ControlFlow::Continue(())
        };
        let s = acq.stream(&opts, &mut on, &mut |_: u64, _: u64| {}, &CancelToken::new()).unwrap();
        assert_eq!(s.frames, acq.n_frames());
        if mask == MaskPolicy::Keep {
            assert_eq!(sum, reference(reference_file, "sum_dp_raw"), "{master}: sum_dp_raw");
        } else {
            assert_eq!(sum, reference(reference_file, "sum_dp"), "{master}: sum_dp");
            assert_eq!(max, reference(reference_file, "max_dp"), "{master}: max_dp");
            assert_eq!(total, reference(reference_file, "total"), "{master}: total");
        }
    }
    console_log!("{master}: {} frames of {r}×{c} through BlobStorage equal the reference", acq.n_frames());
    acq.n_frames()
}

#[wasm_bindgen_test]
fn blob_storage_gives_the_reference_sums() {
    let live = BlobStorage::live();
    assert_eq!(check_sums(&SMALL, SMALL_REF), 256);
    assert_eq!(check_sums(&ODDTAIL, ODDTAIL_REF), 20);
    assert_eq!(BlobStorage::live(), live, "dropping the storages frees their registry slots");
    let mem = wasm_memory_bytes();
    console_log!("wasm memory after streaming: {:.1} MiB", mem / 1048576.0);
    assert!(mem < 64.0 * 1048576.0, "wasm memory {mem} bytes");
}

#[wasm_bindgen_test]
fn blob_storage_rejects_reads_past_the_end() {
    use scatterlab_hdf5::storage::Storage;
    let s = BlobStorage::new(&blob(&[1, 2, 3, 4, 5]), "five.bin").unwrap();
    assert_eq!(s.len(), 5);
    assert_eq!(&*s.read_range(1, 3).unwrap(), &[2, 3, 4]);
    let e = s.read_range(3, 3).err().unwrap().to_string();
    assert!(e.contains("five.bin") && e.contains("past the end"), "{e}");
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &key.into()).unwrap()
}

fn files(list: &[(&str, &[u8])]) -> Array {
    list.iter().map(|(name, data)| JsValue::from(File::new_with_u8_array_sequence(&parts(data), name).unwrap())).collect()
}

#[wasm_bindgen_test]
fn h5_session_streams_typed_batches_and_names_missing_files() {
    let mut s = H5Session::open(files(&SMALL)).unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
    let info = s.stem_info("dev_small_master.h5").unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
    assert_eq!(get(&info, "frames").as_f64(), Some(256.0));
    assert_eq!(get(&info, "dtype").as_string().as_deref(), Some("u16"));
    let tree = s.tree("dev_small_master.h5").unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
    assert!(Array::from(&get(&tree, "nodes")).length() > 20);
    let frames = s.read_frames(10.0, 3, None).unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
    assert_eq!(frames.dyn_ref::<js_sys::Uint16Array>().map(|a| a.length()), Some(3 * 64 * 64));
    let want_total: u64 = reference(SMALL_REF, "total").iter().sum();
    assert_eq!(s.stream_start(None).unwrap_or_else(|e| panic!("{:?}", JsValue::from(e))), 256.0);
    let (mut sum, mut steps) = (0u64, 0);
    loop {
        let step = s.stream_next(64).unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
        let data: js_sys::Uint16Array = get(&step, "data").dyn_into().unwrap();
        sum += data.to_vec().iter().map(|&x| u64::from(x)).sum::<u64>();
        steps += 1;
        if get(&step, "done").as_bool() == Some(true) {
            assert_eq!(get(&step, "framesDone").as_f64(), Some(256.0));
            break;
        }
    }
    assert_eq!(sum, want_total, "sum of every masked frame equals the reference total");
    assert_eq!(steps, 5, "64 + 36 | 64 + 36 | 56 frames");
    drop(s);

    let mut s = H5Session::open(files(&SMALL[..3])).unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
    let info = s.stem_info("dev_small_master.h5").unwrap_or_else(|e| panic!("{:?}", JsValue::from(e)));
    assert_eq!(get(&info, "complete").as_bool(), Some(false));
    let e: JsValue = s.read_frames(150.0, 100, None).err().unwrap().into();
    let msg = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default();
    assert!(msg.contains("dev_small_data_000003.h5"), "{msg}");
    console_log!("missing data file: {msg}");
}
