//! Chemical formulas: "SiO2", "C8H8", "Ca(OH)2", "[C22H10N2O5]", "Si0.5Ge0.5", "CuSO4·5H2O".
//!
//! Grammar: parts joined by '·' (U+00B7, hydrates/adducts), each with an optional leading
//! multiplier; a part is a run of element symbols (an upper-case letter plus an optional
//! lower-case one, case-sensitive: "Co" is cobalt, "CO" carbon monoxide) and ( )/[ ] groups,
//! each optionally followed by a count (digits with an optional decimal fraction). '.' is always a
//! decimal point, never a hydrate dot ("CuSO4.5H2O" would mean O4.5), so it is only accepted
//! between digits. Groups are parsed with an explicit stack, so deep nesting cannot overflow.

use super::henke;
use crate::ReflError;
use std::fmt;
use std::iter::Peekable;
use std::str::CharIndices;

/// One element of a formula with its total count.
#[derive(Clone, Debug, PartialEq)]
struct Atom {
    z: usize,
    symbol: String,
    mass: f64,
    count: f64,
}

/// A parsed chemical formula, e.g. "SiO2", "C8H8", "Ca(OH)2", "H2O", "Fe2O3", "C10H8O4"; counts may
/// be decimal ("Si0.5Ge0.5"). Elements are H..U (Z = 1..92, the range of the Henke tables).
#[derive(Clone, Debug, PartialEq)]
pub struct Formula {
    text: String,
    atoms: Vec<Atom>,
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Formula {
    /// Parses `text`; errors name the formula and, for an unknown symbol, the element.
    pub fn parse(text: &str) -> Result<Formula, ReflError> {
        let object = || format!("formula '{text}'");
        if text.trim().is_empty() {
            return Err(ReflError::input(object(), "contains no elements"));
        }
        let data = henke::data()?;
        let mut parser = Parser { chars: text.char_indices().peekable(), data, text };
        let counts = parser.formula()?;
        if counts.is_empty() {
            return Err(ReflError::input(object(), "contains no elements"));
        }
        let mut atoms: Vec<Atom> = Vec::new();
        for (z, count) in counts {
            match atoms.iter_mut().find(|a| a.z == z) {
                Some(atom) => atom.count += count,
                None => {
                    let element = &data.elements[z - 1];
                    atoms.push(Atom { z, symbol: element.symbol.clone(), mass: element.mass, count });
                }
            }
        }
        if let Some(bad) = atoms.iter().find(|a| !(a.count.is_finite() && a.count > 0.0)) {
            return Err(ReflError::input(format!("{} element '{}'", object(), bad.symbol), format!("count {} must be finite and > 0", bad.count)));
        }
        Ok(Formula { text: text.to_string(), atoms })
    }

    /// Molar mass Σ cᵢ Mᵢ in g/mol, from standard atomic weights.
    pub fn molar_mass(&self) -> f64 {
        self.atoms.iter().map(|a| a.count * a.mass).sum()
    }

    /// The formula as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// (element symbol, total count) per element, in order of first appearance.
    pub fn atoms(&self) -> impl Iterator<Item = (&str, f64)> + '_ {
        self.atoms.iter().map(|a| (a.symbol.as_str(), a.count))
    }

    /// (Z, count) per element, for the scattering-factor lookup.
    pub(crate) fn atomic_numbers(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.atoms.iter().map(|a| (a.z, a.count))
    }
}

/// (Z, count) pairs in order of appearance, not yet merged.
type Counts = Vec<(usize, f64)>;

struct Parser<'a> {
    chars: Peekable<CharIndices<'a>>,
    data: &'a henke::HenkeData,
    text: &'a str,
}

impl Parser<'_> {
    fn error(&self, problem: String) -> ReflError {
        ReflError::input(format!("formula '{}'", self.text), problem)
    }

    /// (Z, count) in order of appearance, not yet merged.
    fn formula(&mut self) -> Result<Counts, ReflError> {
        let mut total = Vec::new();
        loop {
            self.skip_space();
            let multiplier = self.count()?.unwrap_or(1.0);
            let part = self.part()?;
            if part.is_empty() {
                return Err(self.error("has an empty part (before or after '·')".into()));
            }
            total.extend(part.into_iter().map(|(z, c)| (z, c * multiplier)));
            match self.chars.next() {
                None => return Ok(total),
                Some((_, '·')) => continue,
                Some((at, c)) => return Err(self.error(format!("unexpected {c:?} at character {}", self.char_number(at)))),
            }
        }
    }

    /// One part, up to '·' or the end (left unconsumed), with ( ) and [ ] groups.
    fn part(&mut self) -> Result<Counts, ReflError> {
        // Open groups: (atoms before the group, opening position, expected closer).
        let mut open: Vec<(Counts, usize, char)> = Vec::new();
        let mut current: Counts = Vec::new();
        loop {
            self.skip_space();
            let Some(&(at, c)) = self.chars.peek() else { break };
            match c {
                '(' | '[' => {
                    self.chars.next();
                    open.push((std::mem::take(&mut current), at, if c == '(' { ')' } else { ']' }));
                }
                ')' | ']' => {
                    self.chars.next();
                    let Some((outer, _, closer)) = open.pop() else {
                        return Err(self.error(format!("{c:?} at character {} closes nothing", self.char_number(at))));
                    };
                    if c != closer || current.is_empty() {
                        return Err(self.error(format!("{c:?} at character {} does not close a non-empty {closer:?} group", self.char_number(at))));
                    }
                    let count = self.count()?.unwrap_or(1.0);
                    let group = std::mem::replace(&mut current, outer);
                    current.extend(group.into_iter().map(|(z, n)| (z, n * count)));
                }
                'A'..='Z' => {
                    self.chars.next();
                    let mut symbol = c.to_string();
                    if let Some(&(_, lower)) = self.chars.peek().filter(|(_, l)| l.is_ascii_lowercase()) {
                        self.chars.next();
                        symbol.push(lower);
                    }
                    let z = self.data.atomic_number(&symbol).ok_or_else(|| {
                        ReflError::input(
                            format!("formula '{}' element '{symbol}'", self.text),
                            "unknown element symbol (symbols are case-sensitive; Henke data covers H..U, Z = 1..92)",
                        )
                    })?;
                    let count = self.count()?.unwrap_or(1.0);
                    current.push((z, count));
                }
                '·' => break,
                _ => {
                    let hint = if c == '.' { " ('.' is a decimal point; write hydrates with '·')" } else { "" };
                    return Err(self.error(format!("unexpected {c:?} at character {}{hint}", self.char_number(at))));
                }
            }
        }
        if let Some((_, at, closer)) = open.pop() {
            return Err(self.error(format!("group opened at character {} is never closed with {closer:?}", self.char_number(at))));
        }
        Ok(current)
    }

    /// An optional count: digits with an optional '.' + digits fraction.
    fn count(&mut self) -> Result<Option<f64>, ReflError> {
        let Some(&(start, c)) = self.chars.peek() else { return Ok(None) };
        if !c.is_ascii_digit() {
            return Ok(None);
        }
        let mut end = start;
        let mut seen_dot = false;
        while let Some(&(at, c)) = self.chars.peek() {
            let fraction_follows = c == '.' && !seen_dot && self.text[at + 1..].starts_with(|d: char| d.is_ascii_digit());
            if !(c.is_ascii_digit() || fraction_follows) {
                break;
            }
            seen_dot |= c == '.';
            self.chars.next();
            end = at + 1;
        }
        let digits = &self.text[start..end];
        match digits.parse::<f64>() {
            Ok(v) if v > 0.0 && v.is_finite() => Ok(Some(v)),
            _ => Err(self.error(format!("count {digits:?} at character {} must be a number > 0", self.char_number(start)))),
        }
    }

    fn skip_space(&mut self) {
        while self.chars.peek().is_some_and(|(_, c)| c.is_whitespace()) {
            self.chars.next();
        }
    }

    /// 1-based character (not byte) position, for messages.
    fn char_number(&self, byte: usize) -> usize {
        self.text[..byte].chars().count() + 1
    }
}
