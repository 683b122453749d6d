//! `prune` for people: a line per item, then what it comes to.

use super::super::prune::Pruned;

pub(crate) fn pruned(p: &Pruned) -> String {
    let mut text = String::new();
    for it in &p.items {
        let line = if it.skipped {
            format!("skipped       {}  (locked)\n", it.path)
        } else {
            let verb = if !p.apply {
                "would delete"
            } else if it.deleted {
                "deleted     "
            } else {
                "not deleted "
            };
            format!(
                "{verb}  {}  ({}, {} old)\n",
                it.path,
                it.reason,
                crate::store::gap(it.age_seconds)
            )
        };
        text.push_str(&line);
    }
    let deleted = p.items.iter().filter(|i| i.deleted).count();
    text.push_str(&if p.items.is_empty() {
        "nothing to prune.\n".to_string()
    } else if p.apply {
        format!("{deleted} item(s) deleted.\n")
    } else {
        format!(
            "{} item(s) would be deleted; run with --apply to delete them.\n",
            p.items.len()
        )
    });
    text
}
