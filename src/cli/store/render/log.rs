//! `log` for people: a line per version, then a line per item it added, reworded or removed
//! (an item longer than a line ends in `…` at a word, never mid-word).

use super::super::log::Log;

pub(crate) fn log(l: &Log) -> String {
    let mut text = String::new();
    for v in &l.versions {
        let parent = v.parents.first().map_or_else(
            || "first".to_string(),
            |p| format!("after {}", &p[..p.len().min(12)]),
        );
        text.push_str(&format!(
            "#{:<4} {}  {}  {:<9} {} ({parent})\n",
            v.seq,
            v.written_at,
            v.host.as_deref().unwrap_or("?"),
            v.progress,
            &v.id[..v.id.len().min(12)],
        ));
        if let Some(frame) = &v.teammate {
            text.push_str(&format!("      {frame}\n"));
        }
        if v.changes.is_empty() {
            text.push_str("      no change in Decisions, Dead ends or Traps\n");
        }
        for (name, d) in v.changes.sections() {
            for item in &d.added {
                text.push_str(&format!("      + {name}: {}\n", cut(item)));
            }
            for r in &d.reworded {
                text.push_str(&format!("      ~ {name}: {}\n", cut(&r.after)));
            }
            for item in &d.removed {
                text.push_str(&format!("      − {name}: {}\n", cut(item)));
            }
        }
    }
    text
}

/// The most of an item a line shows.
const ITEM_MAX: usize = 100;

/// `item`, or its first words up to [`ITEM_MAX`] characters and `…`.
fn cut(item: &str) -> String {
    if item.chars().count() <= ITEM_MAX {
        return item.to_string();
    }
    let mut shown = String::new();
    for word in item.split(' ') {
        if shown.chars().count() + word.chars().count() + 1 > ITEM_MAX - 1 {
            break;
        }
        if !shown.is_empty() {
            shown.push(' ');
        }
        shown.push_str(word);
    }
    if shown.is_empty() {
        shown = item.chars().take(ITEM_MAX - 1).collect();
    }
    format!("{shown}…")
}
