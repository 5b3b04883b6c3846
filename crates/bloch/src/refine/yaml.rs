//! A walker over a `yaml-rust2` tree that names every problem by its dotted key path and rejects
//! keys no reader asked for (diffBloch's pydantic `extra="forbid"`), for [`super::experiment`].

use yaml_rust2::Yaml;

use super::RefineError;

/// One mapping of the YAML tree being read: remembers which keys were consumed so that
/// [`Node::finish`] can name the first one nobody asked for (diffBloch's `extra="forbid"`).
pub(super) struct Node<'a> {
    pub(super) file: &'a str,
    pub(super) path: String,
    pub(super) entries: Vec<(String, &'a Yaml)>,
    used: Vec<bool>,
}

impl<'a> Node<'a> {
    pub(super) fn new(file: &'a str, path: String, yaml: &'a Yaml) -> Result<Self, RefineError> {
        let err = |message: String| RefineError::Yaml { file: file.to_owned(), key: display_path(&path), message };
        let hash = match yaml {
            Yaml::Hash(hash) => hash,
            // An empty block (`sample:` with nothing under it) is null in YAML; pydantic rejects it.
            other => return Err(err(format!("must be a mapping (got {})", kind(other)))),
        };
        let mut entries = Vec::with_capacity(hash.len());
        for (key, value) in hash {
            match key {
                Yaml::String(k) => entries.push((k.clone(), value)),
                other => return Err(err(format!("has a non-string key ({})", kind(other)))),
            }
        }
        let used = vec![false; entries.len()];
        Ok(Self { file, path, entries, used })
    }

    pub(super) fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub(super) fn error(&self, key: &str, message: impl Into<String>) -> RefineError {
        RefineError::Yaml { file: self.file.to_owned(), key: self.key_path(key), message: message.into() }
    }

    pub(super) fn take(&mut self, key: &str) -> Option<&'a Yaml> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        self.used[i] = true;
        Some(self.entries[i].1)
    }

    pub(super) fn child(&mut self, key: &str) -> Result<Option<Node<'a>>, RefineError> {
        let path = self.key_path(key);
        self.take(key).map(|y| Node::new(self.file, path, y)).transpose()
    }

    pub(super) fn f64_or(&mut self, key: &str, default: f64) -> Result<f64, RefineError> {
        match self.take(key) {
            None => Ok(default),
            Some(y) => as_f64(y).ok_or_else(|| self.error(key, format!("must be a number (got {})", kind(y)))),
        }
    }

    /// A finite positive number, `default` when absent.
    pub(super) fn positive_or(&mut self, key: &str, default: f64) -> Result<f64, RefineError> {
        let value = self.f64_or(key, default)?;
        positive(self, key, value)
    }

    pub(super) fn usize_or(&mut self, key: &str, default: usize) -> Result<usize, RefineError> {
        match self.take(key) {
            None => Ok(default),
            Some(Yaml::Integer(i)) => usize::try_from(*i).map_err(|_| self.error(key, format!("must be a non-negative integer (got {i})"))),
            Some(y) => Err(self.error(key, format!("must be an integer (got {})", kind(y)))),
        }
    }

    pub(super) fn i64_or(&mut self, key: &str, default: i64) -> Result<i64, RefineError> {
        match self.take(key) {
            None => Ok(default),
            Some(Yaml::Integer(i)) => Ok(*i),
            Some(y) => Err(self.error(key, format!("must be an integer (got {})", kind(y)))),
        }
    }

    pub(super) fn bool_or(&mut self, key: &str, default: bool) -> Result<bool, RefineError> {
        match self.take(key) {
            None => Ok(default),
            Some(Yaml::Boolean(b)) => Ok(*b),
            Some(y) => Err(self.error(key, format!("must be true or false (got {})", kind(y)))),
        }
    }

    pub(super) fn string(&mut self, key: &str) -> Result<Option<String>, RefineError> {
        match self.take(key) {
            None => Ok(None),
            Some(Yaml::String(s)) => Ok(Some(s.clone())),
            Some(y) => Err(self.error(key, format!("must be a string (got {})", kind(y)))),
        }
    }

    pub(super) fn required_string(&mut self, key: &str) -> Result<String, RefineError> {
        self.string(key)?.ok_or_else(|| self.error(key, "is required"))
    }

    /// A string restricted to `choices`, mapped to its value; `default` when absent.
    pub(super) fn choice<T: Copy>(&mut self, key: &str, choices: &[(&str, T)], default: T) -> Result<T, RefineError> {
        let Some(s) = self.string(key)? else { return Ok(default) };
        choices.iter().find(|(name, _)| *name == s).map(|(_, v)| *v).ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            self.error(key, format!("must be one of {} (got {s:?})", names.join(", ")))
        })
    }

    pub(super) fn f64_list_or(&mut self, key: &str, default: &[f64]) -> Result<Vec<f64>, RefineError> {
        match self.take(key) {
            None => Ok(default.to_vec()),
            Some(Yaml::Array(items)) => {
                items.iter().enumerate().map(|(i, y)| as_f64(y).ok_or_else(|| self.error(&format!("{key}[{i}]"), format!("must be a number (got {})", kind(y))))).collect()
            }
            Some(y) => Err(self.error(key, format!("must be a list of numbers (got {})", kind(y)))),
        }
    }

    pub(super) fn usize_list_or(&mut self, key: &str) -> Result<Vec<usize>, RefineError> {
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Yaml::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, y)| match y {
                    Yaml::Integer(v) if *v >= 0 => Ok(*v as usize),
                    other => Err(self.error(&format!("{key}[{i}]"), format!("must be a non-negative integer (got {})", kind(other)))),
                })
                .collect(),
            Some(y) => Err(self.error(key, format!("must be a list of integers (got {})", kind(y)))),
        }
    }

    /// Errors on the first key no reader consumed.
    pub(super) fn finish(self) -> Result<(), RefineError> {
        match self.entries.iter().zip(&self.used).find(|(_, used)| !**used) {
            None => Ok(()),
            Some(((key, _), _)) => Err(self.error(key, "unknown key (diffBloch 0.2.0rc1's schema has no such field)")),
        }
    }
}

pub(super) fn display_path(path: &str) -> String {
    if path.is_empty() {
        "(document)".to_owned()
    } else {
        path.to_owned()
    }
}

/// Integers count as numbers (pydantic's float fields accept them too).
pub(super) fn as_f64(y: &Yaml) -> Option<f64> {
    match y {
        Yaml::Integer(i) => Some(*i as f64),
        Yaml::Real(_) => y.as_f64(),
        _ => None,
    }
}

pub(super) fn kind(y: &Yaml) -> &'static str {
    match y {
        Yaml::Real(_) => "a float",
        Yaml::Integer(_) => "an integer",
        Yaml::String(_) => "a string",
        Yaml::Boolean(_) => "a boolean",
        Yaml::Array(_) => "a list",
        Yaml::Hash(_) => "a mapping",
        Yaml::Alias(_) => "an alias",
        Yaml::Null => "null",
        Yaml::BadValue => "an invalid value",
    }
}

/// diffBloch's `_relative_path_only`: no absolute path, no `..`.
pub(super) fn relative_path(node: &Node<'_>, key: &str, value: String) -> Result<String, RefineError> {
    let path = std::path::Path::new(&value);
    if path.is_absolute() || value.starts_with('/') || path.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(node.error(key, format!("must be a relative path inside the experiment directory (got {value:?})")));
    }
    Ok(value)
}

pub(super) fn positive(node: &Node<'_>, key: &str, value: f64) -> Result<f64, RefineError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(node.error(key, format!("must be finite and positive (got {value})")))
    }
}
