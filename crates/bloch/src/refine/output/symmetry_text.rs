//! The space-group part of a source CIF, copied verbatim into the refined CIF so that the space
//! group, its setting and the operator list (their order and spelling included) are exactly the
//! source's: the scalar `_symmetry_*` / `_space_group_*` items and the operator loop
//! (`_symmetry_equiv_pos_*` / `_space_group_symop_*`).
//!
//! Copying is by source lines. When an item shares a line with something that is not copied
//! (`_cell_length_a 5 _symmetry_cell_setting cubic`), the copied lines are re-tokenised and, if
//! they are not exactly the item's tokens, the item is written out again from its tokens instead
//! (same values and quoting, tags in their conventional spelling).

use crate::crystal::cif::lexer::{tokenize, Token, TokenKind};

use super::numbers::quoted;

/// Whether a scalar or loop tag (normalised: lower case, `.` → `_`) belongs to the space group.
fn is_symmetry_tag(tag: &str) -> bool {
    tag.starts_with("_symmetry_") || tag.starts_with("_space_group_")
}

/// Conventional spellings for re-written tags: readers such as diffBloch look tags up by their
/// exact (case-sensitive) names.
const CANONICAL: [&str; 10] = [
    "_symmetry_space_group_name_H-M",
    "_symmetry_space_group_name_Hall",
    "_symmetry_Int_Tables_number",
    "_symmetry_cell_setting",
    "_space_group_name_H-M_alt",
    "_space_group_name_H-M_full",
    "_space_group_name_Hall",
    "_space_group_IT_number",
    "_space_group_crystal_system",
    "_space_group_symop_operation_xyz",
];

fn canonical_tag(tag: &str) -> String {
    CANONICAL.iter().find(|c| c.eq_ignore_ascii_case(tag)).map_or_else(|| tag.to_string(), |c| (*c).to_string())
}

/// Token range [start, end) of one block in the token stream.
type Range = (usize, usize);

/// The block the CIF reader picks (`crystal::cif::select_block`): the only one, else the only one
/// with an atom-site loop, else the one named `name` among those. `None` when none matches (the
/// reader then fails on the source first).
fn select_block(tokens: &[Token], name: &str) -> Option<Range> {
    let starts: Vec<usize> = tokens.iter().enumerate().filter(|(_, t)| matches!(t.kind, TokenKind::Data(_))).map(|(i, _)| i).collect();
    let ranges: Vec<Range> = starts.iter().enumerate().map(|(k, &s)| (s, starts.get(k + 1).copied().unwrap_or(tokens.len()))).collect();
    if let [only] = ranges.as_slice() {
        return Some(*only);
    }
    let with_sites: Vec<Range> = ranges.iter().copied().filter(|&(s, e)| tokens[s..e].iter().any(|t| t.kind == TokenKind::Tag("_atom_site_fract_x".into()))).collect();
    match with_sites.as_slice() {
        [only] => Some(*only),
        many => many.iter().copied().find(|&(s, _)| matches!(&tokens[s].kind, TokenKind::Data(n) if n == name)),
    }
}

/// Token ranges of the symmetry items and loops within `block`.
fn symmetry_items(tokens: &[Token], (start, end): Range) -> Vec<Range> {
    let mut items = Vec::new();
    let mut i = start + 1;
    while i < end {
        match &tokens[i].kind {
            TokenKind::Tag(tag) => {
                let has_value = matches!(tokens.get(i + 1).map(|t| &t.kind), Some(TokenKind::Value { .. })) && i + 1 < end;
                let stop = if has_value { i + 2 } else { i + 1 };
                if is_symmetry_tag(tag) {
                    items.push((i, stop));
                }
                i = stop;
            }
            TokenKind::Loop => {
                let mut j = i + 1;
                let mut symmetry = false;
                while j < end {
                    match &tokens[j].kind {
                        TokenKind::Tag(tag) => symmetry |= is_symmetry_tag(tag),
                        _ => break,
                    }
                    j += 1;
                }
                while j < end && matches!(tokens[j].kind, TokenKind::Value { .. }) {
                    j += 1;
                }
                if symmetry {
                    items.push((i, j));
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    items
}

/// The source lines of tokens [start, end) when they hold exactly those tokens.
fn verbatim(lines: &[&str], tokens: &[Token], (start, end): Range) -> Option<String> {
    let mut first = tokens[start].line;
    let previous = if start > 0 { tokens[start - 1].line } else { 0 };
    if previous >= first {
        return None;
    }
    // Comment lines directly above an item describe it: they come along.
    while first > previous + 1 && lines.get(first - 2).is_some_and(|l| l.trim_start().starts_with('#')) {
        first -= 1;
    }
    let last = match tokens.get(end) {
        Some(next) if next.line > tokens[end - 1].line => next.line - 1,
        Some(_) => return None,
        None => lines.len(),
    };
    let mut chunk: Vec<&str> = lines.get(first - 1..last)?.to_vec();
    // Blank and comment lines before the next item belong to it (or to nothing), not to this one.
    while chunk.last().is_some_and(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        chunk.pop();
    }
    let text = chunk.join("\n");
    let again = tokenize(&text).ok()?;
    let same = again.len() == end - start && again.iter().zip(&tokens[start..end]).all(|(a, b)| a.kind == b.kind);
    same.then_some(text)
}

/// Tokens [start, end) written out again: a scalar item on one line, a loop one token a line.
fn rewrite(tokens: &[Token], (start, end): Range) -> String {
    let scalar = matches!(tokens[start].kind, TokenKind::Tag(_));
    let parts: Vec<String> = tokens[start..end]
        .iter()
        .filter_map(|token| match &token.kind {
            TokenKind::Loop => Some("loop_".to_string()),
            TokenKind::Tag(tag) => Some(canonical_tag(tag)),
            TokenKind::Value { text, quoted: true } => Some(quoted(text)),
            TokenKind::Value { text, quoted: false } => Some(text.clone()),
            TokenKind::Data(_) | TokenKind::Unsupported(_) => None,
        })
        .collect();
    parts.join(if scalar { " " } else { "\n" }).trim_end().to_string()
}

/// The space-group text of the block of `source` that the CIF reader picks for `name`: each
/// symmetry item or loop verbatim (or re-written, see the module doc), in source order, one
/// after the other. Empty when the source states no symmetry (the reader then refuses it).
pub fn symmetry_text(source: &str, name: &str) -> String {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let Ok(tokens) = tokenize(source) else { return String::new() };
    let Some(block) = select_block(&tokens, name) else { return String::new() };
    let lines: Vec<&str> = source.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let parts: Vec<String> = symmetry_items(&tokens, block).into_iter().map(|range| verbatim(&lines, &tokens, range).unwrap_or_else(|| rewrite(&tokens, range))).collect();
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUARTZ: &str = "data_q\n_cell_length_a 4.9\n_symmetry_space_group_name_H-M 'P 32 2 1'\n# ops\nloop_\n_symmetry_equiv_pos_as_xyz\n'x,y,z'\n'-y,x-y,z+2/3'\n\nloop_\n_atom_site_label\nSi1\n";

    #[test]
    fn items_are_copied_verbatim() {
        let text = symmetry_text(QUARTZ, "");
        assert_eq!(text, "_symmetry_space_group_name_H-M 'P 32 2 1'\n# ops\nloop_\n_symmetry_equiv_pos_as_xyz\n'x,y,z'\n'-y,x-y,z+2/3'");
    }

    #[test]
    fn the_block_with_atom_sites_is_used() {
        let source = "data_global\n_symmetry_space_group_name_H-M 'P 1'\ndata_phase\n_symmetry_space_group_name_H-M 'P -1'\nloop_\n_atom_site_label\n_atom_site_fract_x\nSi1 0.1\n";
        assert_eq!(symmetry_text(source, "phase"), "_symmetry_space_group_name_H-M 'P -1'");
    }

    #[test]
    fn shared_lines_are_rewritten() {
        let source = "data_q\n_cell_length_a 4.9 _symmetry_space_group_name_h-m 'P 1' _cell_length_b 3\nloop_ _space_group_symop.operation_xyz x,y,z\n_atom_site_label Si1\n";
        // The H-M item shares its line with cell items: re-written; the loop has its own line: verbatim.
        assert_eq!(symmetry_text(source, ""), "_symmetry_space_group_name_H-M 'P 1'\nloop_ _space_group_symop.operation_xyz x,y,z");
    }
}
