//! `log` for people: a line per version, then a line per item it added or removed.

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
        if v.progress_only {
            text.push_str("      progress only\n");
            continue;
        }
        if v.changes.is_empty() {
            text.push_str("      no change in Decisions, Dead ends or Traps\n");
        }
        for (name, d) in v.changes.sections() {
            for item in &d.added {
                text.push_str(&format!("      + {name}: {item}\n"));
            }
            for item in &d.removed {
                text.push_str(&format!("      − {name}: {item}\n"));
            }
        }
    }
    text
}
