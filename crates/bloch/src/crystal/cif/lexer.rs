//! CIF 1.1 tokenizer: tags, values (bare, quoted, `;` text fields), `loop_`, `data_`, with the
//! 1-based line of every token so errors can point at the source.

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// A data name (`_cell_length_a`), lower-cased with `.` mapped to `_` (DDLm spellings).
    Tag(String),
    /// A value; `quoted` for quoted strings and text fields (so `'.'` is text, `.` is null).
    Value { text: String, quoted: bool },
    /// `loop_`.
    Loop,
    /// `data_NAME`.
    Data(String),
    /// `save_`, `global_` or `stop_`: CIF constructs this reader does not support.
    Unsupported(String),
}

/// A token and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// 1-based line.
    pub line: usize,
}

/// A lexing error: line, offending token, message.
pub(crate) type LexError = (usize, String, String);

/// Normalises a data name: CIF names are case-insensitive, and DDLm writes `_cell.length_a`
/// for DDL1's `_cell_length_a`.
pub(crate) fn normalise_tag(tag: &str) -> String {
    tag.to_ascii_lowercase().replace('.', "_")
}

fn classify(word: &str, line: usize) -> Token {
    let lower = word.to_ascii_lowercase();
    let kind = if word.starts_with('_') {
        TokenKind::Tag(normalise_tag(word))
    } else if lower == "loop_" {
        TokenKind::Loop
    } else if lower.starts_with("data_") {
        TokenKind::Data(word[5..].to_string())
    } else if lower.starts_with("save_") || lower == "global_" || lower == "stop_" {
        TokenKind::Unsupported(word.to_string())
    } else {
        TokenKind::Value { text: word.to_string(), quoted: false }
    };
    Token { kind, line }
}

/// Splits one line (outside text fields) into tokens.
fn tokenize_line(line: &str, line_no: usize, out: &mut Vec<Token>) -> Result<(), LexError> {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' {
            break;
        }
        if c == '\'' || c == '"' {
            // A quote closes only when followed by whitespace or the end of the line (CIF 1.1),
            // so `'O'Brien'` style apostrophes inside the string survive.
            let mut j = i + 1;
            loop {
                if j >= chars.len() {
                    let token: String = chars[i..].iter().collect();
                    return Err((line_no, token, "unterminated quoted string".to_string()));
                }
                if chars[j] == c && (j + 1 == chars.len() || chars[j + 1].is_whitespace()) {
                    break;
                }
                j += 1;
            }
            let text: String = chars[i + 1..j].iter().collect();
            out.push(Token { kind: TokenKind::Value { text, quoted: true }, line: line_no });
            i = j + 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        out.push(classify(&word, line_no));
    }
    Ok(())
}

/// Tokenizes a whole CIF text.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, LexError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut tokens = Vec::new();
    // An open `;` text field: its first line and the lines collected so far.
    let mut field: Option<(usize, Vec<String>)> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some((start, mut lines)) = field.take() {
            if let Some(rest) = line.strip_prefix(';') {
                // Leading/trailing blank lines of a text field carry no meaning.
                let joined = lines.join("\n");
                tokens.push(Token { kind: TokenKind::Value { text: joined.trim().to_string(), quoted: true }, line: start });
                tokenize_line(rest, line_no, &mut tokens)?;
            } else {
                lines.push(line.to_string());
                field = Some((start, lines));
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix(';') {
            field = Some((line_no, vec![rest.to_string()]));
            continue;
        }
        tokenize_line(line, line_no, &mut tokens)?;
    }
    if let Some((start, _)) = field {
        return Err((start, ";".to_string(), "text field opened here is never closed".to_string()));
    }
    Ok(tokens)
}
