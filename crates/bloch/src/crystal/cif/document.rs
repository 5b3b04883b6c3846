//! CIF documents as blocks of scalar items and loops, built from the token stream.

use super::lexer::{tokenize, Token, TokenKind};

/// One CIF value with its source line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    /// The text (quotes and text-field delimiters removed).
    pub text: String,
    /// Whether it was quoted or a text field (then `.`/`?` are text, not null).
    pub quoted: bool,
    /// 1-based line.
    pub line: usize,
}

impl Value {
    /// CIF's "inapplicable" (`.`) or "unknown" (`?`).
    pub fn is_null(&self) -> bool {
        !self.quoted && (self.text == "." || self.text == "?")
    }
}

/// A `loop_`: its tags and rows of values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loop {
    /// Normalised tags, in column order.
    pub tags: Vec<String>,
    /// Rows, each with one value per tag.
    pub rows: Vec<Vec<Value>>,
    /// Line of `loop_`.
    pub line: usize,
}

impl Loop {
    /// Column index of `tag`.
    pub fn column(&self, tag: &str) -> Option<usize> {
        self.tags.iter().position(|t| t == tag)
    }
}

/// A `data_` block.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Block {
    /// Block name (after `data_`).
    pub name: String,
    /// Line of `data_`.
    pub line: usize,
    /// Scalar items: tag, value (first occurrence wins, as diffBloch/gemmi readers do).
    pub items: Vec<(String, Value)>,
    /// Loops in file order.
    pub loops: Vec<Loop>,
}

impl Block {
    /// The scalar value of `tag`, or the value of a one-row loop holding it.
    pub fn value(&self, tag: &str) -> Option<&Value> {
        if let Some((_, v)) = self.items.iter().find(|(t, _)| t == tag) {
            return Some(v);
        }
        self.loops.iter().find_map(|l| match (l.column(tag), l.rows.as_slice()) {
            (Some(c), [row]) => row.get(c),
            _ => None,
        })
    }

    /// The loop that has `tag` as a column.
    pub fn find_loop(&self, tag: &str) -> Option<&Loop> {
        self.loops.iter().find(|l| l.column(tag).is_some())
    }
}

/// A parse error: line, tag or token, message.
pub(crate) type DocError = (usize, String, String);

fn token_text(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Tag(t) => t.clone(),
        TokenKind::Value { text, .. } => text.clone(),
        TokenKind::Loop => "loop_".to_string(),
        TokenKind::Data(n) => format!("data_{n}"),
        TokenKind::Unsupported(w) => w.clone(),
    }
}

/// Parses CIF text into its data blocks.
pub(crate) fn parse_document(text: &str) -> Result<Vec<Block>, DocError> {
    let tokens = tokenize(text)?;
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let Token { kind, line } = &tokens[i];
        let line = *line;
        if let TokenKind::Data(name) = kind {
            blocks.push(Block { name: name.clone(), line, ..Block::default() });
            i += 1;
            continue;
        }
        if let TokenKind::Unsupported(word) = kind {
            return Err((line, word.clone(), "save frames and global_/stop_ are not supported".into()));
        }
        let Some(block) = blocks.last_mut() else {
            return Err((line, token_text(kind), "content before the first data_ block".into()));
        };
        match kind {
            TokenKind::Tag(tag) => {
                let Some(Token { kind: TokenKind::Value { text, quoted }, line: vline }) = tokens.get(i + 1) else {
                    return Err((line, tag.clone(), "data name without a value".into()));
                };
                if !block.items.iter().any(|(t, _)| t == tag) {
                    let value = Value { text: text.clone(), quoted: *quoted, line: *vline };
                    block.items.push((tag.clone(), value));
                }
                i += 2;
            }
            TokenKind::Loop => {
                i += 1;
                let mut tags = Vec::new();
                while let Some(Token { kind: TokenKind::Tag(t), .. }) = tokens.get(i) {
                    tags.push(t.clone());
                    i += 1;
                }
                if tags.is_empty() {
                    return Err((line, "loop_".into(), "loop_ without data names".into()));
                }
                let mut values = Vec::new();
                while let Some(Token { kind: TokenKind::Value { text, quoted }, line: vline }) = tokens.get(i) {
                    values.push(Value { text: text.clone(), quoted: *quoted, line: *vline });
                    i += 1;
                }
                if values.len() % tags.len() != 0 {
                    return Err((line, tags[0].clone(), format!("loop has {} values, not a multiple of its {} data names", values.len(), tags.len())));
                }
                let rows = values.chunks(tags.len()).map(<[Value]>::to_vec).collect();
                block.loops.push(Loop { tags, rows, line });
            }
            TokenKind::Value { text, .. } => {
                return Err((line, text.clone(), "value without a data name".into()));
            }
            TokenKind::Data(_) | TokenKind::Unsupported(_) => {}
        }
    }
    Ok(blocks)
}
