//! Forcing the header fields a stored handoff carries (docs/store.md §9.3): `branch:`, `checkout:`,
//! `progress:` and `head:` replaced in place or inserted where they belong, duplicates and
//! `write_session:` dropped, every other byte (CRLF included) kept — within the 20-line envelope
//! counted by `envelope::envelope_len`, or refused.

use super::envelope::{ENVELOPE_LINES, envelope_len, field_value};
use crate::error::Error;

/// The title line: `#`, one or more spaces or tabs, then `Handoff`.
fn is_title(line: &str) -> bool {
    line.strip_prefix('#').is_some_and(|rest| {
        let after = rest.trim_start_matches([' ', '\t']);
        after.len() < rest.len() && after.starts_with("Handoff")
    })
}

fn content(line: &str) -> &str {
    let l = line.strip_suffix('\n').unwrap_or(line);
    l.strip_suffix('\r').unwrap_or(l)
}

fn envelope_end(lines: &[String]) -> usize {
    envelope_len(lines.iter().map(|l| content(l)))
}

fn find_field(lines: &[String], name: &str) -> Option<usize> {
    let end = envelope_end(lines);
    lines[..end]
        .iter()
        .position(|l| field_value(content(l), name).is_some())
}

/// Force the envelope fields (docs/store.md §9.3 normalisation). `Err` when a forced line would
/// land below line 20.
pub(crate) fn normalise(text: &str, fields: &[(&str, &str)]) -> Result<String, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let end = envelope_end(&lines);
    let mut seen: Vec<&str> = Vec::new();
    let mut keep = vec![true; lines.len()];
    for (i, line) in lines.iter_mut().enumerate().take(end) {
        let c = content(line).to_string();
        if field_value(&c, "write_session").is_some() {
            keep[i] = false;
            continue;
        }
        for (name, value) in fields {
            if field_value(&c, name).is_some() {
                if seen.contains(name) {
                    keep[i] = false;
                } else {
                    seen.push(name);
                    let ending = &line[c.len()..];
                    *line = format!("{name}: {value}{ending}");
                }
            }
        }
    }
    let mut lines: Vec<String> = lines
        .into_iter()
        .zip(keep)
        .filter_map(|(l, k)| k.then_some(l))
        .collect();
    let Some(title) = lines.iter().position(|l| is_title(content(l))) else {
        return Ok(lines.concat());
    };
    let eol = if lines[title].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let insert_after = |lines: &mut Vec<String>, at: usize, name: &str, value: &str| {
        if !lines[at].ends_with('\n') {
            lines[at].push_str(eol);
        }
        lines.insert(at + 1, format!("{name}: {value}{eol}"));
    };
    for (name, value) in fields {
        if find_field(&lines, name).is_some() {
            continue;
        }
        let after = match *name {
            "branch" => Some(title),
            "checkout" => find_field(&lines, "branch"),
            "progress" => find_field(&lines, "status").or_else(|| find_field(&lines, "checkout")),
            "head" => find_field(&lines, "progress"),
            "from" => find_field(&lines, "checkout").or_else(|| find_field(&lines, "branch")),
            _ => None,
        };
        // A forced line that cannot be placed inside the envelope would be invisible.
        let at = after.ok_or_else(title_too_low)?;
        insert_after(&mut lines, at, name, value);
    }
    for (name, _) in fields {
        if find_field(&lines, name).is_none_or(|i| i >= ENVELOPE_LINES) {
            return Err(title_too_low());
        }
    }
    Ok(lines.concat())
}

/// `text` without the envelope's `name:` lines, every other byte kept.
pub(crate) fn without(text: &str, name: &str) -> String {
    let lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let end = envelope_end(&lines);
    lines
        .into_iter()
        .enumerate()
        .filter(|(i, l)| *i >= end || field_value(content(l), name).is_none())
        .map(|(_, l)| l)
        .collect()
}

/// For each line of `normalised` (made from `draft` by [`normalise`] and [`without`], which
/// change only envelope lines), the 1-based number of the draft line it came from: a person
/// fixing their draft reads the gate's line numbers in their own file. Lines past the envelope
/// are the draft's own, in order (the common tail); an envelope line is matched to the next
/// draft line of the same text; an inserted field takes the number of the line before it.
pub(crate) fn draft_numbers(draft: &str, normalised: &str) -> Vec<usize> {
    let draft = draft.strip_prefix('\u{feff}').unwrap_or(draft);
    let ours: Vec<&str> = normalised.split_inclusive('\n').map(content).collect();
    let theirs: Vec<&str> = draft.split_inclusive('\n').map(content).collect();
    let tail = ours
        .iter()
        .rev()
        .zip(theirs.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (head_ours, head_theirs) = (ours.len() - tail, theirs.len() - tail);
    let mut numbers = Vec::with_capacity(ours.len());
    let mut next = 0;
    for (j, line) in ours.iter().enumerate() {
        let n = if j >= head_ours {
            j - head_ours + head_theirs + 1
        } else if let Some(k) = theirs[next..head_theirs].iter().position(|t| t == line) {
            next += k + 1;
            next
        } else {
            numbers.last().copied().unwrap_or(1)
        };
        numbers.push(n);
    }
    numbers
}

fn title_too_low() -> Error {
    Error::Input(crate::error::Input::Draft(crate::error::Draft::TitleTooLow))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: [(&str, &str); 4] = [
        ("branch", "main"),
        ("checkout", "/r"),
        ("progress", "complete"),
        ("head", "abc"),
    ];

    #[test]
    fn inserts_missing_fields_in_their_places() {
        let out = normalise("\u{feff}# Handoff — x\nstatus: s\n\n## Next\n", &FIELDS).expect("ok");
        assert_eq!(
            out,
            "# Handoff — x\nbranch: main\ncheckout: /r\nstatus: s\nprogress: complete\nhead: abc\n\n## Next\n"
        );
    }

    #[test]
    fn draft_numbers_name_the_line_of_the_draft() {
        let draft = "\u{feff}# Handoff — x\nstatus: s\nwrite_session: w\n\n## Next\n- a\n";
        let out = normalise(draft, &FIELDS).expect("ok");
        let out = without(&out, "from");
        // # Handoff, branch, checkout, status, progress, head, blank, ## Next, - a
        assert_eq!(draft_numbers(draft, &out), vec![1, 1, 1, 2, 2, 2, 4, 5, 6]);
    }

    #[test]
    fn replaces_the_first_and_deletes_the_rest() {
        let out = normalise(
            "# Handoff\r\nbranch: old\r\nbranch: older\r\ncheckout: /x\r\nstatus: s\r\nwrite_session: w\r\n## N\r\nbranch: body\r\n",
            &FIELDS,
        )
        .expect("ok");
        assert_eq!(
            out,
            "# Handoff\r\nbranch: main\r\ncheckout: /r\r\nstatus: s\r\nprogress: complete\r\nhead: abc\r\n## N\r\nbranch: body\r\n"
        );
    }

    #[test]
    fn the_title_needs_a_blank_after_the_hash() {
        assert!(is_title("# Handoff — x") && is_title("#\t Handoff"));
        assert!(!is_title("#Handoff") && !is_title("## Handoff") && !is_title(" # Handoff"));
    }

    #[test]
    fn a_title_too_low_is_refused() {
        let text = format!("{}# Handoff\nstatus: s\n", "\n".repeat(18));
        assert!(normalise(&text, &FIELDS).is_err());
        assert_eq!(
            normalise("no title\n", &FIELDS).expect("unchanged"),
            "no title\n"
        );
    }
}
