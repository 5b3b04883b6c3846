//! The app's host script commands: arbitrary bytes as one command (`Command::parse`, what
//! `AppControl.command` hands the app) and as a desktop `--script` file (`NativeScript`, each of
//! its commands parsed as `NativeScript::load` does). A parse returns a command or a message and
//! never panics; any panic, abort, out-of-memory or timeout is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scatterlab_app::native_script::NativeScript;
use scatterlab_app::script::Command;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = Command::parse(text) {
        assert!(!e.is_empty(), "an empty error message");
    }
    if let Ok(script) = serde_json::from_str::<NativeScript>(text) {
        for c in &script.commands {
            let _ = Command::parse(&c.to_string());
        }
    }
});
