//! The reduced composition when the injection is over 9,500 UTF-16 units (docs/hooks.md §2.7): the
//! verdict, the truncation line, the short rules and an excerpt of `## Do not re-derive` and
//! `## Next`, cut on whole lines until it fits.

use crate::document::Document;
use crate::document::envelope::store_envelope;

/// The most an injection (`additionalContext`) may hold, in UTF-16 code units: Claude Code
/// swaps anything longer for a preview.
pub(crate) const INJECTION_LIMIT: usize = 9_500;

/// A text's length as the client counts it: UTF-16 code units.
pub(crate) fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The section of `doc` under the level-2 heading `name`, up to the next level-1/2 heading.
fn section_lines(doc: &Document, name: &str) -> Vec<String> {
    let Some(h) = doc.headings_named(2, name).next() else {
        return Vec::new();
    };
    let end = doc
        .headings
        .iter()
        .find(|o| o.index > h.index && o.level <= 2)
        .map_or(doc.lines.len(), |o| o.index);
    doc.lines[h.index..end].to_vec()
}

fn cut_line(k: usize) -> String {
    format!("[… cut: {k} more line(s) of this section are in the file]")
}

/// The opening of the line an injection carries when the handoff was cut to fit.
pub(crate) const TRUNCATED: &str = "**TRUNCATED:**";

/// The reduced composition (docs/hooks.md §2.7).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    head: &[String],
    intro: &str,
    status: &str,
    drift: Option<&str>,
    document: &str,
    parsed: Option<&Document>,
    n: usize,
    rules: &str,
) -> String {
    let truncation = format!(
        "{TRUNCATED} too long to inject whole ({n} characters): only `## Do not re-derive` and `## Next` follow — read the whole file before acting."
    );
    let clean = document.replace('\r', "");
    // The gate's parse of these very bytes, when there was one; a document the gate could not
    // read as text (shown with U+FFFD) is parsed here.
    let own;
    let doc = match parsed {
        Some(d) => d,
        None => {
            own = Document::parse(&clean);
            &own
        }
    };
    let envelope: Vec<String> = store_envelope(&clean)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let dnr = section_lines(doc, "Do not re-derive");
    let next = section_lines(doc, "Next");
    let mut top: Vec<String> = head.to_vec();
    top.push(intro.to_string());
    top.push(status.to_string());
    top.extend(drift.map(str::to_string));
    top.push(truncation.clone());
    top.push(rules.to_string());
    let build = |dnr: &[String], next: &[String]| -> String {
        let mut excerpt = vec!["---".to_string()];
        excerpt.extend(envelope.iter().cloned());
        excerpt.extend(dnr.iter().cloned());
        excerpt.extend(next.iter().cloned());
        let mut parts = top.clone();
        parts.push(excerpt.join("\n"));
        parts.join("\n\n")
    };
    let fits = |s: &String| utf16_len(s) <= INJECTION_LIMIT;
    let whole = build(&dnr, &next);
    if fits(&whole) {
        return whole;
    }
    for keep in (0..dnr.len()).rev() {
        let mut cut = dnr[..keep].to_vec();
        cut.push(cut_line(dnr.len() - keep));
        let s = build(&cut, &next);
        if fits(&s) {
            return s;
        }
    }
    let dnr_gone = vec![cut_line(dnr.len())];
    for keep in (0..next.len()).rev() {
        let mut cut = next[..keep].to_vec();
        cut.push(cut_line(next.len() - keep));
        let s = build(&dnr_gone, &cut);
        if fits(&s) {
            return s;
        }
    }
    last_resort(head.first(), intro, status, drift, truncation)
}

/// The last resort: title, intro, status and drift, cut at a line boundary so that the
/// truncation line fits as the final line.
fn last_resort(
    title: Option<&String>,
    intro: &str,
    status: &str,
    drift: Option<&str>,
    truncation: String,
) -> String {
    let mut lines: Vec<String> = Vec::new();
    for part in [
        title.cloned(),
        Some(intro.to_string()),
        Some(status.to_string()),
        drift.map(str::to_string),
    ]
    .into_iter()
    .flatten()
    {
        lines.extend(part.lines().map(str::to_string));
        lines.push(String::new());
    }
    let budget = INJECTION_LIMIT.saturating_sub(utf16_len(&truncation) + 1);
    let mut used = 0;
    let mut kept = Vec::new();
    for l in lines {
        let cost = utf16_len(&l) + 1;
        if used + cost > budget {
            break;
        }
        used += cost;
        kept.push(l);
    }
    kept.push(truncation);
    kept.join("\n")
}
