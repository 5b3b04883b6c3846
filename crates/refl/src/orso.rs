//! ORSO reflectivity text files (`.ort`, ORSO standard 1.x): a YAML header behind `# `, then
//! whitespace-separated columns; further datasets start with a header block (beginning with
//! `# data_set:`) whose YAML is merged over the first dataset's header.
//!
//! We read Qz, R, its uncertainty and the Qz resolution by the header's `columns` list (Qz in
//! `1/angstrom` or `1/nm`, converted to Å⁻¹), keep the whole merged header as JSON metadata, and
//! name the file and line for anything malformed. Why `yaml-rust2`: `serde_yaml` is archived.

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

use crate::data::Dataset;
use crate::ReflError;

/// One dataset of an ORSO file.
#[derive(Clone, Debug, PartialEq)]
pub struct OrsoDataset {
    /// The merged header (the first dataset's header with this dataset's overrides), as JSON.
    pub header: Value,
    /// The columns (q in Å⁻¹; dQ is the FWHM when the header says so, converted otherwise).
    pub data: Dataset,
}

impl OrsoDataset {
    /// `data_set` name from the header (empty when absent).
    pub fn name(&self) -> &str {
        self.header.get("data_set").and_then(Value::as_str).unwrap_or("")
    }
}

/// A block of header lines and the data lines after it, with their 1-based line numbers.
struct Block {
    header: Vec<String>,
    header_line: usize,
    rows: Vec<(usize, String)>,
}

fn split_blocks(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if let Some(rest) = line.strip_prefix('#') {
            let starts_new = blocks.last().is_none_or(|b| !b.rows.is_empty());
            if starts_new {
                blocks.push(Block { header: Vec::new(), header_line: i + 1, rows: Vec::new() });
            }
            if let Some(block) = blocks.last_mut() {
                // `# # ...` lines are comments, not YAML.
                if !rest.trim_start().starts_with('#') {
                    block.header.push(rest.strip_prefix(' ').unwrap_or(rest).to_owned());
                }
            }
        } else if !line.trim().is_empty() {
            match blocks.last_mut() {
                Some(block) => block.rows.push((i + 1, line.to_owned())),
                None => blocks.push(Block { header: Vec::new(), header_line: i + 1, rows: vec![(i + 1, line.to_owned())] }),
            }
        }
    }
    blocks
}

fn yaml_to_json(y: &Yaml) -> Value {
    match y {
        Yaml::Real(s) => s.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Value::String(s.clone()), Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => {
            let map: Map<String, Value> = h.iter().map(|(k, v)| (k.as_str().map_or_else(|| format!("{k:?}"), str::to_owned), yaml_to_json(v))).collect();
            Value::Object(map)
        }
        Yaml::Null | Yaml::Alias(_) | Yaml::BadValue => Value::Null,
    }
}

/// Deep merge: maps merge key by key, anything else in `over` replaces `base`.
fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// Where the columns are and how to convert them.
struct Layout {
    /// Column indices of Qz, R, sR, sQz.
    idx: [Option<usize>; 4],
    /// Factor from the file's Qz unit to Å⁻¹.
    q_scale: f64,
    /// Factor from the file's sQz to a FWHM in Å⁻¹.
    dq_scale: f64,
}

fn column_layout(header: &Value, object: &str) -> Result<Layout, ReflError> {
    let columns = header.get("columns").and_then(Value::as_array).ok_or_else(|| ReflError::input(object, "header has no `columns` list"))?;
    let mut idx = [None; 4];
    for (i, c) in columns.iter().enumerate() {
        let name = c.get("name").and_then(Value::as_str);
        let error_of = c.get("error_of").and_then(Value::as_str);
        let slot = match (name, error_of) {
            (Some("Qz"), _) => 0,
            (Some("R"), _) => 1,
            (_, Some("R")) => 2,
            (_, Some("Qz")) => 3,
            _ => continue,
        };
        idx[slot].get_or_insert(i);
    }
    if idx[0].is_none() || idx[1].is_none() {
        return Err(ReflError::input(object, "`columns` must name Qz and R"));
    }
    let unit = columns[idx[0].unwrap_or(0)].get("unit").and_then(Value::as_str).unwrap_or("1/angstrom");
    let scale = match unit {
        "1/angstrom" | "1/A" | "1/Angstrom" => 1.0,
        "1/nm" => 0.1,
        other => return Err(ReflError::input(object, format!("unsupported Qz unit {other:?} (expected 1/angstrom or 1/nm)"))),
    };
    // ORSO allows sigma or FWHM for the resolution; we store FWHM.
    let dq_is_sigma = idx[3].is_some_and(|i| columns[i].get("value_is").and_then(Value::as_str) == Some("sigma"));
    let dq_scale = if dq_is_sigma { scale * crate::resolution::FWHM_PER_SIGMA } else { scale };
    Ok(Layout { idx, q_scale: scale, dq_scale })
}

/// Reads every dataset of an ORSO text file; `name` labels errors.
pub fn parse_orso(text: &str, name: &str) -> Result<Vec<OrsoDataset>, ReflError> {
    let mut first_header: Option<Value> = None;
    let mut out = Vec::new();
    for block in split_blocks(text) {
        let object = format!("{name} line {}", block.header_line);
        let docs = YamlLoader::load_from_str(&block.header.join("\n")).map_err(|e| ReflError::input(object.clone(), format!("header is not YAML: {e}")))?;
        let own = docs.first().map_or(Value::Null, yaml_to_json);
        let header = match &first_header {
            None => own,
            Some(base) => {
                let mut merged = base.clone();
                merge(&mut merged, &own);
                merged
            }
        };
        first_header.get_or_insert_with(|| header.clone());
        let Layout { idx, q_scale, dq_scale } = column_layout(&header, &object)?;
        let mut data = Dataset { name: format!("{name}: {}", header.get("data_set").and_then(Value::as_str).unwrap_or("")), ..Default::default() };
        let (mut dr, mut dq) = (Vec::new(), Vec::new());
        for (line_no, row) in &block.rows {
            let values: Vec<f64> = row
                .split_whitespace()
                .map(|f| f.parse::<f64>().map_err(|_| ReflError::input(format!("{name} line {line_no}"), format!("{f:?} is not a number"))))
                .collect::<Result<_, _>>()?;
            let get = |slot: usize| -> Result<Option<f64>, ReflError> {
                match idx[slot] {
                    None => Ok(None),
                    Some(i) => values
                        .get(i)
                        .copied()
                        .map(Some)
                        .ok_or_else(|| ReflError::input(format!("{name} line {line_no}"), format!("has {} columns, the header lists more", values.len()))),
                }
            };
            let (q, r) = (get(0)?.unwrap_or(f64::NAN) * q_scale, get(1)?.unwrap_or(f64::NAN));
            if !(q.is_finite() && q > 0.0 && r.is_finite()) {
                return Err(ReflError::input(format!("{name} line {line_no}"), format!("Qz = {q}, R = {r}: need finite values with Qz > 0")));
            }
            data.q.push(q);
            data.r.push(r);
            if let Some(v) = get(2)? {
                dr.push(v);
            }
            if let Some(v) = get(3)? {
                dq.push(v * dq_scale);
            }
        }
        data.dr = (!dr.is_empty()).then_some(dr);
        data.dq = (!dq.is_empty()).then_some(dq);
        out.push(OrsoDataset { header, data });
    }
    if out.is_empty() {
        return Err(ReflError::input(name, "contains no ORSO dataset"));
    }
    Ok(out)
}

fn json_to_yaml(v: &Value) -> Yaml {
    match v {
        Value::Null => Yaml::Null,
        Value::Bool(b) => Yaml::Boolean(*b),
        Value::Number(n) => n.as_i64().map_or_else(|| Yaml::Real(n.to_string()), Yaml::Integer),
        Value::String(s) => Yaml::String(s.clone()),
        Value::Array(a) => Yaml::Array(a.iter().map(json_to_yaml).collect()),
        Value::Object(o) => Yaml::Hash(o.iter().map(|(k, v)| (Yaml::String(k.clone()), json_to_yaml(v))).collect()),
    }
}

/// Writes datasets as an ORSO text file: each with its full header (readers merge, so repeating
/// it is valid) and columns Qz (1/angstrom), R, sR, sQz (FWHM) as present. Headers must list
/// these columns in this order (as [`parse_orso`] output and orsopy files do).
pub fn write_orso(datasets: &[OrsoDataset]) -> Result<String, ReflError> {
    let mut out = String::from("# # ORSO reflectivity data file | 1.2 standard | YAML encoding | https://www.reflectometry.org/\n");
    for set in datasets {
        let mut yaml = String::new();
        yaml_rust2::YamlEmitter::new(&mut yaml).dump(&json_to_yaml(&set.header)).map_err(|e| ReflError::input(format!("dataset {:?} header", set.name()), e.to_string()))?;
        // The emitter starts with a `---` document marker, which ORSO headers do not carry.
        for line in yaml.lines().filter(|l| *l != "---") {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        let d = &set.data;
        for i in 0..d.q.len() {
            out.push_str(&format!("{:.17e} {:.17e}", d.q[i], d.r[i]));
            for column in [&d.dr, &d.dq].into_iter().flatten() {
                out.push_str(&format!(" {:.17e}", column.get(i).copied().unwrap_or(f64::NAN)));
            }
            out.push('\n');
        }
    }
    Ok(out)
}
