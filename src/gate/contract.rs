//! The structural contract (docs/gate.md §2.3 steps 2–8): title, header fields, required sections,
//! the Pointers fence, unclosed fences, late fields and the path:symbol guard. Each rule is a
//! pure function of the parsed document and yields findings in output order.

use super::HeaderCheckout;
use crate::citation::CitationLine;
use crate::document::Document;
use crate::document::envelope::{ENVELOPE_LINES, Progress};
use crate::finding::Severity;
use crate::finding::{Code, Finding};

const CHECKOUT_HINT: &str = "checkout: (absolute path of the tree the citations resolve against)";

fn error(code: Code, text: String, line: Option<usize>, subject: Option<&str>) -> Finding {
    Finding::new(
        Severity::Error,
        code,
        text,
        line,
        subject.map(str::to_string),
    )
}

/// Step 1b: a handoff carries no control character but tab and line endings, and no character
/// a reader does not see (a model reads it all the same) — one line each.
fn control_characters(doc: &Document) -> impl Iterator<Item = Finding> + '_ {
    doc.lines.iter().enumerate().filter_map(|(i, line)| {
        let c = crate::text::first_unseen(line)?;
        let u = c as u32;
        let (code, why) = if c.is_control() {
            (
                Code::ControlCharacter,
                format!("a control character (U+{u:04X}) — a handoff carries none but tab and line endings (one would reach a terminal as a command)"),
            )
        } else {
            (
                Code::InvisibleCharacter,
                format!("an invisible character (U+{u:04X}) — a handoff carries no text a person cannot see and a model reads (bidi controls, zero-width and tag characters)"),
            )
        };
        Some(error(
            code,
            format!("line {}: {why}; remove it", doc.number(i + 1)),
            Some(doc.number(i + 1)),
            None,
        ))
    })
}

/// Steps 1–7, in order: each rule a function of the document (and the checkout the header's
/// `checkout:` resolves to) that adds its findings.
type Rule = fn(&Document, &HeaderCheckout, &mut Vec<Finding>);

/// The contract, rule by rule, in the order its findings are reported (docs/gate.md §2).
const RULES: [Rule; 8] = [
    secrets,
    |doc, _, out| out.extend(control_characters(doc)),
    title,
    fields,
    progress,
    sections,
    pointers_and_fences,
    late_fields,
];

/// Steps 1–7: secrets, control characters, title, fields, sections, Pointers, unclosed
/// fences, late fields.
pub(crate) fn check(doc: &Document, checkout: &HeaderCheckout) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in RULES {
        rule(doc, checkout, &mut out);
    }
    out
}

/// A credential on a line: an ERROR that never shows its value.
fn secrets(doc: &Document, _: &HeaderCheckout, out: &mut Vec<Finding>) {
    out.extend(doc.secrets.iter().map(|s| {
        error(
            Code::Secret,
            format!(
                "line {}: looks like a credential ({}) — a handoff must never carry one; remove it (the value is not shown)",
                doc.number(s.line),
                s.kind
            ),
            Some(doc.number(s.line)),
            Some(s.kind),
        )
    }));
}

/// The first heading is `# Handoff — <task>`.
fn title(doc: &Document, _: &HeaderCheckout, out: &mut Vec<Finding>) {
    let first = doc.headings.first();
    if !first.is_some_and(|h| h.level == 1 && h.is_named("Handoff")) {
        out.push(error(
            Code::TitleMissing,
            "first heading is not \"# Handoff — <task>\"".into(),
            first.map(|h| doc.number(h.index + 1)),
            None,
        ));
    }
}

/// The envelope's fields: `status:` present; `checkout:` usable when present.
fn fields(doc: &Document, checkout: &HeaderCheckout, out: &mut Vec<Finding>) {
    // `branch:` and `checkout:` may be left out of a draft: the checkout it is gated against
    // (the argument, else the working directory) gives them, as `write` fills them in.
    for name in ["branch", "status", "checkout"] {
        let Some(field) = doc.field(name) else {
            if name != "status" {
                continue;
            }
            let shown = if name == "checkout" {
                CHECKOUT_HINT.to_string()
            } else {
                format!("{name}:")
            };
            let mut text = format!("header field missing: {shown}");
            if let Some(n) = doc.field_below_envelope(name) {
                let n = doc.number(n);
                text.push_str(&format!(
                    " — line {n} has one, but below the first ## heading it does not count"
                ));
            }
            out.push(error(Code::FieldMissing, text, None, Some(name)));
            continue;
        };
        if name != "checkout" {
            continue;
        }
        let line = Some(doc.number(field.line));
        match checkout {
            HeaderCheckout::Empty => out.push(error(
                Code::FieldEmpty,
                format!("header field is empty: {CHECKOUT_HINT}"),
                line,
                Some("checkout"),
            )),
            HeaderCheckout::NotAbsolute => out.push(error(
                Code::CheckoutNotAbsolute,
                format!(
                    "checkout: cannot be resolved: {} — write the absolute path of the tree the citations resolve against",
                    field.value
                ),
                line,
                Some("checkout"),
            )),
            HeaderCheckout::HomeUnknown => out.push(error(
                Code::CheckoutHomeUnknown,
                "checkout: starts with ~ but no home directory is known".into(),
                line,
                Some("checkout"),
            )),
            HeaderCheckout::Absent | HeaderCheckout::Usable(_) => {}
        }
    }
}

/// `progress:`, when present, is a lifecycle word.
fn progress(doc: &Document, _: &HeaderCheckout, out: &mut Vec<Finding>) {
    if let Some(p) = doc.field("progress")
        && Progress::parse(&p.value).is_none()
    {
        out.push(error(
            Code::ProgressInvalid,
            format!(
                "progress: must be writing, complete or consumed, not \"{}\" (leave the field out to mean complete)",
                p.value
            ),
            Some(doc.number(p.line)),
            Some("progress"),
        ));
    }
}

/// The required sections, each with content.
fn sections(doc: &Document, _: &HeaderCheckout, out: &mut Vec<Finding>) {
    if doc.headings_named(2, "Do not re-derive").next().is_none() {
        out.push(section_missing("Do not re-derive"));
    }
    for (level, label) in [
        (3, "Decisions"),
        (3, "Dead ends"),
        (3, "Traps"),
        (2, "Next"),
    ] {
        match doc.headings_named(level, label).next() {
            None => out.push(section_missing(label)),
            Some(h) if !doc.section_has_content(level, label) => out.push(error(
                Code::SectionEmpty,
                format!(
                    "section is empty: {label} — write \"None.\" if that is the answer, so a reader can tell it was considered"
                ),
                Some(doc.number(h.index + 1)),
                Some(label),
            )),
            Some(_) => {}
        }
    }
}

/// `## Pointers` holds a closed fence; every other fence is closed too.
fn pointers_and_fences(doc: &Document, _: &HeaderCheckout, out: &mut Vec<Finding>) {
    let pointers_fence = pointers(doc, out);
    for fence in doc
        .fences
        .iter()
        .filter(|f| f.close.is_none() && Some(f.open) != pointers_fence)
    {
        let n = doc.number(fence.open + 1);
        out.push(Finding::new(
            Severity::Warn,
            Code::FenceUnclosed,
            format!("fence opened on line {n} is never closed — a markdown reader treats everything after it as code"),
            Some(n),
            None,
        ));
    }
}

/// The fence of `## Pointers` (its opening line), saying what is wrong with it.
fn pointers(doc: &Document, out: &mut Vec<Finding>) -> Option<usize> {
    match doc.pointers {
        None => {
            out.push(section_missing("Pointers"));
            None
        }
        Some(p) => match p.fence {
            None => {
                out.push(error(
                    Code::PointersNoFence,
                    "Pointers section has no ``` fence — an unfenced list is prose to every tool that reads it".into(),
                    Some(doc.number(p.heading + 1)),
                    Some("Pointers"),
                ));
                None
            }
            Some(f) => {
                if f.close.is_none() {
                    out.push(error(
                        Code::PointersUnclosed,
                        "Pointers fence is never closed".into(),
                        Some(doc.number(f.open + 1)),
                        Some("Pointers"),
                    ));
                }
                Some(f.open)
            }
        },
    }
}

/// An envelope field below the lines the store and the hooks read.
fn late_fields(doc: &Document, _: &HeaderCheckout, out: &mut Vec<Finding>) {
    let mut late: Vec<(usize, &str)> = ["branch", "status", "checkout", "progress"]
        .into_iter()
        .filter_map(|name| {
            doc.field(name)
                .filter(|f| f.line > ENVELOPE_LINES)
                .map(|f| (f.line, name))
        })
        .collect();
    late.sort();
    for (n, name) in late {
        let n = doc.number(n);
        out.push(Finding::new(
            Severity::Warn,
            Code::FieldLate,
            format!(
                "header field {name}: is on line {n}; the store and hooks read only the first 20 lines — move it up"
            ),
            Some(n),
            Some(name.to_string()),
        ));
    }
}

fn section_missing(label: &str) -> Finding {
    error(
        Code::SectionMissing,
        format!("required section missing: {label}"),
        None,
        Some(label),
    )
}

/// Step 8: `path:symbol` anchors in the citation block (docs/gate.md §2.6).
pub(crate) fn path_symbols(block: &[CitationLine]) -> Vec<Finding> {
    block
        .iter()
        .filter_map(|l| {
            let c = &l.citation;
            let cit = &c.citation;
            if crate::text::has_ws(cit) {
                return None;
            }
            let (before, ident) = cit.rsplit_once(':')?;
            if !crate::text::is_identifier(ident) || !crate::text::is_path_shaped(before) {
                return None;
            }
            let display = c.display();
            Some(error(
                Code::PathSymbol,
                format!(
                    "path:symbol anchor is a known false MISSING (O7): {display} — cite the line instead, as `path:line | {ident}`"
                ),
                Some(l.line),
                Some(&display),
            ))
        })
        .collect()
}
