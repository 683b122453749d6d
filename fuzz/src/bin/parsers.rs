//! One AFL++ target over every parser a handoff or hook input reaches: the first byte picks
//! the parser, the rest is its input. A panic, an abort or a hang is a finding.

use handoff_store::citation::{Citation, LineRef};
use handoff_store::document::Document;
use handoff_store::store::slot::{Rewrite, progress_of, rewrite_progress};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&mode, rest)) = data.split_first() else {
            return;
        };
        match mode % 3 {
            // The whole gate, against this repository as the checkout.
            0 => {
                let _ = handoff_store::report::run_gate::gate_bytes(
                    "fuzz.md",
                    rest.to_vec(),
                    Some(env!("CARGO_MANIFEST_DIR")),
                );
            }
            // The citation grammar, line by line, and the document model.
            1 => {
                let text = String::from_utf8_lossy(rest);
                for line in text.lines() {
                    if let Some(c) = Citation::parse(line)
                        && let Some(lr) = &c.lineref
                    {
                        let parsed = LineRef::parse(lr);
                        let _ = (parsed.covers(1), parsed.largest(), parsed.empty_group());
                    }
                }
                let doc = Document::parse(&text);
                let _ = doc.citation_block();
            }
            // The store's envelope: a progress rewrite reads back and is idempotent.
            _ => {
                for value in ["writing", "complete", "consumed"] {
                    match rewrite_progress(rest, value) {
                        Rewrite::Changed { bytes, .. } => {
                            assert_eq!(progress_of(&bytes).as_deref(), Some(value));
                            assert_eq!(rewrite_progress(&bytes, value), Rewrite::Same);
                        }
                        Rewrite::Same => assert_eq!(progress_of(rest).as_deref(), Some(value)),
                        Rewrite::NoField => assert_eq!(progress_of(rest), None),
                    }
                }
            }
        }
    });
}
