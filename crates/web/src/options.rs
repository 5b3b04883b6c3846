//! The options objects of the JS calls (`blochSimulate`, `blochRefine`, `files.reduce`,
//! `files.ssb`, …), read by name: the JS value becomes JSON ([`to_json`]), then each option is
//! checked by name. An unknown key, a wrong type or a non-finite number (JS `NaN` / `Infinity`,
//! carried as the string [`NON_FINITE`]` + "NaN"`) is an error `"{op}: {path}.{key} …"`, never a
//! silent default. One module for every call, so that the calls word their errors alike.

use js_sys::{Array, Object};
use serde_json::{Map, Value};
use wasm_bindgen::{JsCast, JsError, JsValue};

/// Prefix of the string a non-finite JS number becomes on its way into JSON.
pub const NON_FINITE: &str = "\u{0}nonfinite:";

/// Where options are read, for the messages: the call `op` (first word of every message) and the
/// path of the object holding them (`"options"`, or a nested `"options.fit"`). A bare `&str` is
/// the call's top-level `options`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At<'a> {
    /// The JS call, e.g. `"ssb"`.
    pub op: &'a str,
    /// The object's path, e.g. `"options.aberrations"`.
    pub path: &'a str,
}

impl<'a> From<&'a str> for At<'a> {
    fn from(op: &'a str) -> Self {
        At { op, path: "options" }
    }
}

/// A JS value as JSON for the option parsers: a non-finite number becomes the string
/// [`NON_FINITE`]` + "NaN"` (so the parser names it), `undefined` is `null`; a function or symbol
/// is an error naming its place (`{op}: options.x`).
pub fn to_json(v: &JsValue, name: &str, op: &str) -> Result<Value, JsError> {
    if v.is_undefined() || v.is_null() {
        return Ok(Value::Null);
    }
    if let Some(x) = v.as_f64() {
        return Ok(serde_json::Number::from_f64(x).map_or_else(|| Value::String(format!("{NON_FINITE}{x}")), Value::Number));
    }
    if let Some(b) = v.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(s) = v.as_string() {
        return Ok(Value::String(s));
    }
    // Arrays and typed arrays (`thicknesses: new Float64Array(…)`) alike.
    if Array::is_array(v) || v.is_instance_of::<js_sys::Float64Array>() || v.is_instance_of::<js_sys::Int32Array>() || v.is_instance_of::<js_sys::Float32Array>() {
        return Array::from(v).iter().enumerate().map(|(i, x)| to_json(&x, &format!("{name}[{i}]"), op)).collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    if v.is_object() && !v.is_function() {
        let mut map = Map::new();
        for entry in Object::entries(v.unchecked_ref()).iter() {
            let pair: Array = entry.unchecked_into();
            let key = pair.get(0).as_string().unwrap_or_default();
            map.insert(key.clone(), to_json(&pair.get(1), &format!("{name}.{key}"), op)?);
        }
        return Ok(Value::Object(map));
    }
    Err(JsError::new(&format!("{op}: {name} is not a JSON value (a function or symbol)")))
}

/// The options object at `at` (`null` = no options), its keys checked against `known`.
pub fn object<'v, 'a>(v: &'v Value, at: impl Into<At<'a>>, known: &[&str]) -> Result<Option<&'v Map<String, Value>>, String> {
    let At { op, path } = at.into();
    if v.is_null() {
        return Ok(None);
    }
    let map = v.as_object().ok_or_else(|| format!("{op}: {path} must be an object (got {})", shown(v)))?;
    if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("{op}: unknown option {path}.{k} (known: {})", known.join(", ")));
    }
    Ok(Some(map))
}

/// A value as the error shows it: non-finite numbers as JS wrote them.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) if s.starts_with(NON_FINITE) => s[NON_FINITE.len()..].to_owned(),
        other => other.to_string(),
    }
}

/// A finite number named `name` (`null`/absent = `None`).
fn finite(v: Option<&Value>, op: &str, name: &str) -> Result<Option<f64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| format!("{op}: {name} is not a number")),
        Some(other) => Err(format!("{op}: {name} must be a finite number (got {})", shown(other))),
    }
}

/// Option `key`: a finite number.
pub fn number<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>) -> Result<Option<f64>, String> {
    let At { op, path } = at.into();
    finite(map.get(key), op, &format!("{path}.{key}"))
}

/// Option `key`: a finite number > 0 (`unit` names what it counts, for the message).
pub fn positive<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>, unit: &str) -> Result<Option<f64>, String> {
    let At { op, path } = at.into();
    match number(map, key, At { op, path })? {
        Some(x) if x <= 0.0 => Err(format!("{op}: {path}.{key} must be a positive number of {unit} (got {x})")),
        x => Ok(x),
    }
}

/// Option `key`: a whole number in `min..=max`.
pub fn whole<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>, min: u64, max: u64) -> Result<Option<u64>, String> {
    let At { op, path } = at.into();
    match number(map, key, At { op, path })? {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && x >= min as f64 && x <= max as f64 => Ok(Some(x as u64)),
        Some(x) => Err(format!("{op}: {path}.{key} must be a whole number from {min} to {max} (got {x})")),
    }
}

/// Option `key`: an array whose items `item` reads (given each item's name, `options.key[i]`, for
/// its errors); `kind` names the items for the message of a value that is not an array.
fn array<T>(map: &Map<String, Value>, key: &str, at: At<'_>, kind: &str, item: impl Fn(&Value, &str) -> Result<T, String>) -> Result<Option<Vec<T>>, String> {
    let At { op, path } = at;
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items.iter().enumerate().map(|(i, x)| item(x, &format!("{path}.{key}[{i}]"))).collect::<Result<Vec<T>, String>>().map(Some),
        Some(other) => Err(format!("{op}: {path}.{key} must be an array of {kind} (got {})", shown(other))),
    }
}

/// Option `key`: an array of finite numbers (each error names its index).
pub fn numbers<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>) -> Result<Option<Vec<f64>>, String> {
    let at = at.into();
    array(map, key, at, "numbers", |x, name| finite(Some(x), at.op, name)?.ok_or_else(|| format!("{}: {name} must be a finite number (got null)", at.op)))
}

/// Option `key`: exactly `N` finite numbers (`what` says what they are, for the message).
pub fn fixed<'a, const N: usize>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>, what: &str) -> Result<Option<[f64; N]>, String> {
    let At { op, path } = at.into();
    match numbers(map, key, At { op, path })? {
        None => Ok(None),
        Some(v) => v.try_into().map(Some).map_err(|v: Vec<f64>| format!("{op}: {path}.{key} must be {N} numbers {what} (got {})", v.len())),
    }
}

/// Option `key`: three integers (Miller indices or a zone axis), not all 0 unless `allow_zero`.
pub fn indices<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>, what: &str) -> Result<Option<[i32; 3]>, String> {
    let At { op, path } = at.into();
    let Some(v) = fixed::<3>(map, key, At { op, path }, what)? else { return Ok(None) };
    if let Some(x) = v.iter().find(|x| x.fract() != 0.0 || x.abs() > 1e6) {
        return Err(format!("{op}: {path}.{key} must be three integers {what} (got {x})"));
    }
    if v.iter().all(|x| *x == 0.0) {
        return Err(format!("{op}: {path}.{key} must not be [0, 0, 0]"));
    }
    Ok(Some(v.map(|x| x as i32)))
}

/// Option `key`: one of `choices` (strings).
pub fn choice<'a, 'c>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>, choices: &[&'c str]) -> Result<Option<&'c str>, String> {
    let At { op, path } = at.into();
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if choices.contains(&s.as_str()) => Ok(choices.iter().copied().find(|c| c == s)),
        Some(other) => Err(format!("{op}: {path}.{key} must be one of \"{}\" (got {})", choices.join("\", \""), shown(other))),
    }
}

/// Option `key`: a string.
pub fn string<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>) -> Result<Option<String>, String> {
    let At { op, path } = at.into();
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.starts_with(NON_FINITE) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{op}: {path}.{key} must be a string (got {})", shown(other))),
    }
}

/// Option `key`: true or false.
pub fn boolean<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>) -> Result<Option<bool>, String> {
    let At { op, path } = at.into();
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("{op}: {path}.{key} must be true or false (got {})", shown(other))),
    }
}

/// Option `key`: an array of strings (each error names its index).
pub fn strings<'a>(map: &Map<String, Value>, key: &str, at: impl Into<At<'a>>) -> Result<Option<Vec<String>>, String> {
    let at = at.into();
    array(map, key, at, "strings", |x, name| match x {
        Value::String(s) if !s.starts_with(NON_FINITE) => Ok(s.clone()),
        other => Err(format!("{}: {name} must be a string (got {})", at.op, shown(other))),
    })
}
