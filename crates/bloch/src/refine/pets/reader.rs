//! The CIF-syntax reader of a `.cif_pets`: tokens from the crate's CIF lexer, the data block's
//! items and loops, and typed lookups whose errors name the line.

use std::collections::HashMap;

use super::super::RefineError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `_tag`.
    Tag,
    /// `loop_`.
    Loop,
    /// `data_name`.
    Data,
    /// Any value (bare, quoted or a text field).
    Value,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) text: String,
    pub(super) line: usize,
    pub(super) kind: Kind,
}

/// The file's CIF tokens with their 1-based lines, from the crate's CIF lexer (a `.cif_pets` is
/// CIF 1.1): tags lower-cased, text fields and quoted strings as values.
pub(super) fn tokenize(file: &str, text: &str) -> Result<Vec<Token>, RefineError> {
    use crate::crystal::cif::lexer::{self, TokenKind};
    let err = |line: usize, message: String| RefineError::Pets { file: file.to_owned(), line, message };
    let tokens = lexer::tokenize(text).map_err(|(line, token, message)| err(line, format!("{message} ({token})")))?;
    tokens
        .into_iter()
        .map(|t| {
            let (text, kind) = match t.kind {
                TokenKind::Tag(tag) => (tag, Kind::Tag),
                TokenKind::Value { text, .. } => (text, Kind::Value),
                TokenKind::Loop => ("loop_".to_owned(), Kind::Loop),
                TokenKind::Data(name) => (format!("data_{name}"), Kind::Data),
                TokenKind::Unsupported(word) => return Err(err(t.line, format!("{word}: not used in PETS files"))),
            };
            Ok(Token { text, line: t.line, kind })
        })
        .collect()
}

/// A `loop_` table: lower-cased tags and rows of (value, line).
pub(super) struct Table {
    pub(super) tags: Vec<String>,
    pub(super) rows: Vec<Vec<(String, usize)>>,
    pub(super) line: usize,
}

/// The single data block: items by lower-cased tag, and loops.
pub(super) struct Block {
    pub(super) items: HashMap<String, (String, usize)>,
    pub(super) loops: Vec<Table>,
}

pub(super) fn parse_block(file: &str, tokens: &[Token]) -> Result<Block, RefineError> {
    let err = |line: usize, message: String| RefineError::Pets { file: file.to_owned(), line, message };
    let mut block = Block { items: HashMap::new(), loops: Vec::new() };
    let mut seen_data = false;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        match token.kind {
            Kind::Data => {
                // diffBloch reads the file's sole block (gemmi `sole_block`).
                if seen_data {
                    return Err(err(token.line, format!("a second data block ({}); a PETS file holds one", token.text)));
                }
                seen_data = true;
                i += 1;
            }
            Kind::Tag => {
                let Some(value) = tokens.get(i + 1).filter(|t| t.kind == Kind::Value) else {
                    return Err(err(token.line, format!("{}: has no value", token.text)));
                };
                let tag = token.text.to_ascii_lowercase();
                if block.items.contains_key(&tag) {
                    return Err(err(token.line, format!("{}: given twice", token.text)));
                }
                block.items.insert(tag, (value.text.clone(), value.line));
                i += 2;
            }
            Kind::Loop => {
                let line = token.line;
                i += 1;
                let mut tags = Vec::new();
                while let Some(t) = tokens.get(i).filter(|t| t.kind == Kind::Tag) {
                    tags.push(t.text.to_ascii_lowercase());
                    i += 1;
                }
                if tags.is_empty() {
                    return Err(err(line, "loop_ without tags".to_owned()));
                }
                let mut values = Vec::new();
                while let Some(t) = tokens.get(i).filter(|t| t.kind == Kind::Value) {
                    values.push((t.text.clone(), t.line));
                    i += 1;
                }
                if values.len() % tags.len() != 0 {
                    // Name the line of the incomplete last row.
                    let start = values.len() - values.len() % tags.len();
                    return Err(err(values[start].1, format!("loop row has {} value(s) where the loop ({}, …) has {} column(s)", values.len() % tags.len(), tags[0], tags.len())));
                }
                let rows = values.chunks(tags.len()).map(<[_]>::to_vec).collect::<Vec<_>>();
                // A row split across lines is legal CIF, but PETS writes one row per line; a row
                // spread over several lines almost always means a missing value on the line above.
                for row in &rows {
                    if row.iter().any(|(_, l)| *l != row[0].1) {
                        return Err(err(row[0].1, format!("loop row does not have the {} values of the loop ({}, …) on its line", tags.len(), tags[0])));
                    }
                }
                block.loops.push(Table { tags, rows, line });
            }
            Kind::Value => return Err(err(token.line, format!("value {:?} without a tag", token.text))),
        }
    }
    if !seen_data {
        return Err(err(1, "no data_ block".to_owned()));
    }
    Ok(block)
}

/// A CIF number: the nominal value of `1.234(5)`; `?` and `.` are missing.
pub(super) fn number(text: &str) -> Option<f64> {
    let nominal = match text.find('(') {
        Some(p) if text.ends_with(')') => &text[..p],
        _ => text,
    };
    nominal.parse::<f64>().ok()
}

pub(super) struct Reader<'a> {
    pub(super) file: &'a str,
    pub(super) block: &'a Block,
}

impl Reader<'_> {
    pub(super) fn err(&self, line: usize, message: String) -> RefineError {
        RefineError::Pets { file: self.file.to_owned(), line, message }
    }

    pub(super) fn required_number(&self, tag: &str) -> Result<f64, RefineError> {
        let (text, line) = self.block.items.get(tag).ok_or_else(|| self.err(0, format!("{tag}: required item is missing")))?;
        let value = number(text).ok_or_else(|| self.err(*line, format!("{tag}: not a number ({text:?})")))?;
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.err(*line, format!("{tag}: must be finite ({text:?})")))
        }
    }

    /// The loop holding `first_tag`, with the column index of each of `columns`.
    pub(super) fn table(&self, first_tag: &str, columns: &[&str]) -> Result<(&Table, Vec<usize>), RefineError> {
        let table = self.block.loops.iter().find(|t| t.tags.iter().any(|tag| tag == first_tag)).ok_or_else(|| self.err(0, format!("no loop with {first_tag}")))?;
        let index = columns
            .iter()
            .map(|c| table.tags.iter().position(|t| t == c).ok_or_else(|| self.err(table.line, format!("the {first_tag} loop has no {c} column"))))
            .collect::<Result<Vec<_>, _>>()?;
        if table.rows.is_empty() {
            return Err(self.err(table.line, format!("the {first_tag} loop has no rows")));
        }
        Ok((table, index))
    }

    /// The free-text summary value after `key:` in the first details field that mentions it.
    pub(super) fn summary(&self, key: &str) -> Option<(String, usize)> {
        ["_diffrn_measurement_details", "_diffrn_reflns_reduction_process"].iter().find_map(|tag| {
            let (text, line) = self.block.items.get(*tag)?;
            summary_value(text, key).map(|v| (v, *line))
        })
    }

    pub(super) fn summary_number(&self, key: &str) -> Result<Option<f64>, RefineError> {
        match self.summary(key) {
            None => Ok(None),
            Some((text, line)) => {
                let word = text.split_whitespace().next().unwrap_or("");
                let value = word.parse::<f64>().map_err(|_| self.err(line, format!("'{key}:' is not followed by a number ({word:?})")))?;
                Ok(Some(value))
            }
        }
    }
}

/// The text after `key` (one or more words separated by any whitespace, then a colon, case
/// insensitive) up to the end of its line, as diffBloch's regular expressions find it.
pub(super) fn summary_value(text: &str, key: &str) -> Option<String> {
    let words: Vec<String> = key.split_whitespace().map(str::to_ascii_lowercase).collect();
    for line in text.lines() {
        let lower = line.to_ascii_lowercase();
        let Some(colon) = lower.find(':') else { continue };
        let head: Vec<&str> = lower[..colon].split_whitespace().collect();
        if head.len() >= words.len() && head[head.len() - words.len()..].iter().zip(&words).all(|(a, b)| a == b) {
            return Some(line[colon + 1..].trim().to_owned());
        }
    }
    None
}

pub(super) fn int_in(reader: &Reader<'_>, tag: &str, (text, line): &(String, usize)) -> Result<i64, RefineError> {
    text.parse::<i64>().map_err(|_| reader.err(*line, format!("{tag}: not an integer ({text:?})")))
}

pub(super) fn float_in(reader: &Reader<'_>, tag: &str, (text, line): &(String, usize)) -> Result<f64, RefineError> {
    match number(text) {
        Some(v) if v.is_finite() => Ok(v),
        _ => Err(reader.err(*line, format!("{tag}: not a finite number ({text:?})"))),
    }
}
