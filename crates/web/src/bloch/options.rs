//! Reading the options of `blochSimulate` / `blochRefine` from the JSON value the JS call's object
//! becomes (see `crate::bloch` for the conversion). Every option is checked by name: an unknown
//! key, a wrong type or a non-finite number (JS `NaN` / `Infinity`, carried as the string
//! [`NON_FINITE`]` + "NaN"`) is an error `"{op}: options.{key} …"`, never a silent default.

use serde_json::{Map, Value};

pub use crate::h5::ssb::NON_FINITE;

/// The options object of call `op` (`null` = no options), its keys checked against `known`.
pub fn object<'a>(v: &'a Value, op: &str, known: &[&str]) -> Result<Option<&'a Map<String, Value>>, String> {
    if v.is_null() {
        return Ok(None);
    }
    let map = v.as_object().ok_or_else(|| format!("{op}: options must be an object (got {})", shown(v)))?;
    if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("{op}: unknown option options.{k} (known: {})", known.join(", ")));
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
pub fn number(map: &Map<String, Value>, key: &str, op: &str) -> Result<Option<f64>, String> {
    finite(map.get(key), op, &format!("options.{key}"))
}

/// Option `key`: a finite number > 0 (`unit` names what it counts, for the message).
pub fn positive(map: &Map<String, Value>, key: &str, op: &str, unit: &str) -> Result<Option<f64>, String> {
    match number(map, key, op)? {
        Some(x) if x <= 0.0 => Err(format!("{op}: options.{key} must be a positive number of {unit} (got {x})")),
        x => Ok(x),
    }
}

/// Option `key`: a whole number in `min..=max`.
pub fn whole(map: &Map<String, Value>, key: &str, op: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
    match number(map, key, op)? {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && x >= min as f64 && x <= max as f64 => Ok(Some(x as u64)),
        Some(x) => Err(format!("{op}: options.{key} must be a whole number from {min} to {max} (got {x})")),
    }
}

/// Option `key`: an array of finite numbers (each error names its index).
pub fn numbers(map: &Map<String, Value>, key: &str, op: &str) -> Result<Option<Vec<f64>>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, x)| finite(Some(x), op, &format!("options.{key}[{i}]"))?.ok_or_else(|| format!("{op}: options.{key}[{i}] must be a finite number (got null)")))
            .collect::<Result<Vec<f64>, String>>()
            .map(Some),
        Some(other) => Err(format!("{op}: options.{key} must be an array of numbers (got {})", shown(other))),
    }
}

/// Option `key`: exactly `N` finite numbers (`what` says what they are, for the message).
pub fn fixed<const N: usize>(map: &Map<String, Value>, key: &str, op: &str, what: &str) -> Result<Option<[f64; N]>, String> {
    match numbers(map, key, op)? {
        None => Ok(None),
        Some(v) => v.try_into().map(Some).map_err(|v: Vec<f64>| format!("{op}: options.{key} must be {N} numbers {what} (got {})", v.len())),
    }
}

/// Option `key`: three integers (Miller indices or a zone axis), not all 0 unless `allow_zero`.
pub fn indices(map: &Map<String, Value>, key: &str, op: &str, what: &str) -> Result<Option<[i32; 3]>, String> {
    let Some(v) = fixed::<3>(map, key, op, what)? else { return Ok(None) };
    if let Some(x) = v.iter().find(|x| x.fract() != 0.0 || x.abs() > 1e6) {
        return Err(format!("{op}: options.{key} must be three integers {what} (got {x})"));
    }
    if v.iter().all(|x| *x == 0.0) {
        return Err(format!("{op}: options.{key} must not be [0, 0, 0]"));
    }
    Ok(Some(v.map(|x| x as i32)))
}

/// Option `key`: one of `choices` (strings).
pub fn choice<'a>(map: &Map<String, Value>, key: &str, op: &str, choices: &[&'a str]) -> Result<Option<&'a str>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if choices.contains(&s.as_str()) => Ok(choices.iter().copied().find(|c| c == s)),
        Some(other) => Err(format!("{op}: options.{key} must be one of \"{}\" (got {})", choices.join("\", \""), shown(other))),
    }
}

/// Option `key`: a string.
pub fn string(map: &Map<String, Value>, key: &str, op: &str) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.starts_with(NON_FINITE) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{op}: options.{key} must be a string (got {})", shown(other))),
    }
}

/// Option `key`: true or false.
pub fn boolean(map: &Map<String, Value>, key: &str, op: &str) -> Result<Option<bool>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("{op}: options.{key} must be true or false (got {})", shown(other))),
    }
}

/// Option `key`: an array of strings (each error names its index).
pub fn strings(map: &Map<String, Value>, key: &str, op: &str) -> Result<Option<Vec<String>>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, x)| match x {
                Value::String(s) if !s.starts_with(NON_FINITE) => Ok(s.clone()),
                other => Err(format!("{op}: options.{key}[{i}] must be a string (got {})", shown(other))),
            })
            .collect::<Result<Vec<String>, String>>()
            .map(Some),
        Some(other) => Err(format!("{op}: options.{key} must be an array of strings (got {})", shown(other))),
    }
}
