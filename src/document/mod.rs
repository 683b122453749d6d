//! The handoff document, parsed ONCE into a model: lines (with credential lines blanked),
//! headings, fences, the envelope, the Pointers block and the prose/referring zones.
//! Every gate check and every store reader works from this model, never from raw text.

pub(crate) mod envelope;
pub(crate) mod markdown;
pub(crate) mod normalise;

use crate::input::split_lines;
use crate::secrets::{self, Secret};
pub use envelope::Field;
pub(crate) use markdown::{Fence, Heading};

/// One line of the citation block: its 1-based line number and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLine {
    pub(crate) line: usize,
    pub(crate) text: String,
}

/// The Pointers section as found: its heading and the first fence inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pointers {
    /// 0-based index of the `## Pointers` heading line.
    pub(crate) heading: usize,
    /// The Pointers fence, if its section has an opener.
    pub(crate) fence: Option<Fence>,
}

/// The parsed document.
#[derive(Debug, Clone)]
pub struct Document {
    /// CR-free lines; a line flagged as a credential is blanked here.
    pub(crate) lines: Vec<String>,
    /// Bytes of the CR-free text with trailing newlines removed (credentials included).
    pub(crate) size_bytes: usize,
    pub(crate) secrets: Vec<Secret>,
    pub(crate) headings: Vec<Heading>,
    pub(crate) fences: Vec<Fence>,
    /// Number of envelope lines (index of the first level 2–6 heading).
    pub(crate) envelope_end: usize,
    pub(crate) pointers: Option<Pointers>,
    /// Lines in the prose zone (docs/gate.md §2.7).
    pub(crate) prose: Vec<bool>,
    /// Lines in the referring zone (docs/gate.md §2.7).
    pub(crate) referring: Vec<bool>,
    /// The number a person reads for each line, where it is not its own: a draft's line
    /// before `write` forced its envelope fields (`normalise::draft_numbers`).
    numbers: Vec<usize>,
}

impl Document {
    /// Parse CR-free text.
    pub fn parse(text: &str) -> Document {
        let raw = split_lines(text);
        let scan = secrets::scan(&raw);
        let lines: Vec<String> = raw
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if scan.blank[i] {
                    String::new()
                } else {
                    (*l).to_string()
                }
            })
            .collect();
        let markdown::Scan {
            kinds: _,
            headings,
            fences,
        } = markdown::scan(&lines);
        let envelope_end = headings
            .iter()
            .find(|h| h.level >= 2)
            .map_or(lines.len(), |h| h.index);
        let mut doc = Document {
            size_bytes: text.trim_end_matches('\n').len(),
            secrets: scan.hits,
            prose: vec![true; lines.len()],
            referring: vec![true; lines.len()],
            lines,
            headings,
            fences,
            envelope_end,
            pointers: None,
            numbers: Vec::new(),
        };
        doc.pointers = doc.find_pointers();
        doc.mark_zones();
        doc
    }

    /// This document with its lines numbered as in the draft it was made from, for every line
    /// number a finding shows.
    pub(crate) fn numbered(mut self, numbers: Vec<usize>) -> Document {
        self.numbers = numbers;
        self
    }

    /// The number a finding shows for 1-based line `line`.
    pub(crate) fn number(&self, line: usize) -> usize {
        line.checked_sub(1)
            .and_then(|i| self.numbers.get(i))
            .copied()
            .unwrap_or(line)
    }

    /// Index one past the last line of the section under heading `h` (next heading of the
    /// same or a higher level, or the end).
    pub(crate) fn section_end(&self, h: &Heading) -> usize {
        self.headings
            .iter()
            .find(|o| o.index > h.index && o.level <= h.level)
            .map_or(self.lines.len(), |o| o.index)
    }

    /// Every heading of exactly `level` named `name`.
    pub(crate) fn headings_named(
        &self,
        level: usize,
        name: &str,
    ) -> impl Iterator<Item = &Heading> {
        self.headings
            .iter()
            .filter(move |h| h.level == level && h.is_named(name))
    }

    /// Whether the (joined) sections under these headings hold a non-ws character.
    pub(crate) fn section_has_content(&self, level: usize, name: &str) -> bool {
        // A credential's line was blanked, but it was content (its own ERROR says so).
        let credential = |i: usize| self.secrets.iter().any(|s| s.line == i + 1);
        self.headings_named(level, name).any(|h| {
            (h.index + 1..self.section_end(h))
                .any(|i| !crate::text::trim(&self.lines[i]).is_empty() || credential(i))
        })
    }

    /// The lines of the sections under every heading of `level` named `name`, headings left
    /// out, in order.
    pub(crate) fn section_lines(&self, level: usize, name: &str) -> Vec<&str> {
        self.headings_named(level, name)
            .flat_map(|h| self.lines[h.index + 1..self.section_end(h)].iter())
            .map(String::as_str)
            .collect()
    }

    /// The items of a list section, each whole: its first line (marker kept) and the lines
    /// that continue it, up to the next item, a blank line or the section's end. `None.` is no
    /// item.
    pub(crate) fn item_blocks(&self, level: usize, name: &str) -> Vec<String> {
        let mut blocks: Vec<String> = Vec::new();
        let mut open = false;
        for line in self.section_lines(level, name) {
            if list_item(line).is_some() {
                blocks.push(line.to_string());
                open = true;
            } else if crate::text::trim(line).is_empty() {
                open = false;
            } else if open && let Some(last) = blocks.last_mut() {
                last.push('\n');
                last.push_str(line);
            }
        }
        blocks.retain(|b| {
            list_item(b.lines().next().unwrap_or_default()).is_some_and(|i| i != "None.")
        });
        blocks
    }

    /// The first envelope line holding field `name`.
    pub fn field(&self, name: &str) -> Option<Field> {
        envelope::find_field(&self.lines[..self.envelope_end], 0, name)
    }

    /// The first line below the envelope that starts with `name:`.
    pub(crate) fn field_below_envelope(&self, name: &str) -> Option<usize> {
        envelope::find_field(&self.lines[self.envelope_end..], self.envelope_end, name)
            .map(|f| f.line)
    }

    fn find_pointers(&self) -> Option<Pointers> {
        let heading = self.headings_named(2, "Pointers").next()?;
        // The fence must open between the heading and the next heading of any level.
        let next = self
            .headings
            .iter()
            .find(|o| o.index > heading.index)
            .map_or(self.lines.len(), |o| o.index);
        let fence = self
            .fences
            .iter()
            .find(|f| f.open > heading.index && f.open < next)
            .copied();
        Some(Pointers {
            heading: heading.index,
            fence,
        })
    }

    /// The citation block: content lines of a closed Pointers fence.
    pub fn citation_block(&self) -> Option<Vec<BlockLine>> {
        let fence = self.pointers?.fence?;
        let close = fence.close?;
        Some(
            (fence.open + 1..close)
                .map(|i| BlockLine {
                    line: i + 1,
                    text: self.lines[i].clone(),
                })
                .collect(),
        )
    }

    fn mark_zones(&mut self) {
        for h in self.headings.iter().filter(|h| h.level == 2) {
            self.prose[h.index] = false;
        }
        for h in self
            .headings
            .iter()
            .filter(|h| h.level == 2 && (h.is_named("Next") || h.is_named("Unverifiable")))
        {
            let end = self
                .headings
                .iter()
                .find(|o| o.index > h.index && o.level <= 2)
                .map_or(self.lines.len(), |o| o.index);
            self.prose[h.index..end].fill(false);
        }
        if let Some(p) = self.pointers {
            self.prose[p.heading] = false;
            self.referring[p.heading] = false;
            if let Some(f) = p.fence {
                let end = f.close.map_or(self.lines.len(), |c| c + 1);
                self.prose[f.open..end].fill(false);
                self.referring[f.open..end].fill(false);
            }
        }
    }
}

/// A handoff's task, from its text: the first `# ` line without `# Handoff — `, trimmed.
pub(crate) fn title_of(text: &str) -> Option<&str> {
    text.lines().find(|l| l.starts_with("# ")).map(|l| {
        l.trim_start_matches("# ")
            .trim_start_matches("Handoff — ")
            .trim()
    })
}

/// The text of a list item's first line (`- x`, `* x`, `+ x`, `12. x`, `3) x`, at most three
/// spaces in), or `None` for any other line.
fn list_item(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let after = if let Some(r) = rest.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || digits > 9 {
            return None;
        }
        rest[digits..].strip_prefix(['.', ')'])?
    };
    let text = after.strip_prefix([' ', '\t'])?;
    let text = crate::text::trim(text);
    (!text.is_empty()).then(|| text.to_string())
}
