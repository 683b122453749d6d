//! The text renderers: a command computes its outcome as plain data (which is also its JSON),
//! and its text for people is written here, one file per command, from that data alone.
//! `status` is the first command in this shape; the others follow it (issue 34).

mod history;
mod install;
mod list;
mod orient;
mod progress;
mod prune;
mod read;
mod restore;
mod status;
mod sync;
mod uninstall;
mod write;

pub use history::history;
pub use install::installed;
pub use list::{list, list_note};
pub use orient::{orientation, slot_path};
pub use progress::progress_set;
pub use prune::pruned;
pub use read::{read_json, read_text};
pub use restore::restored;
pub use status::status;
pub use sync::synced;
pub use uninstall::{trusted, uninstalled};
pub use write::written;
