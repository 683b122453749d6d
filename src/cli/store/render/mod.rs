//! The text renderers: a command computes its outcome as plain data (which is also its JSON),
//! and its text for people is written here, one file per command, from that data alone.
//! Every command is in this shape.

mod config;
mod fix;
mod history;
mod install;
mod list;
mod log;
mod new;
mod orient;
mod progress;
mod prune;
mod read;
mod restore;
mod split;
mod status;
mod sync;
mod uninstall;
mod write;

pub(crate) use config::{config, in_use};
pub(crate) use fix::fixed;
pub(crate) use history::history;
pub(crate) use install::installed;
pub(crate) use list::{list, list_note};
pub(crate) use log::log;
pub(crate) use new::skeleton;
pub(crate) use orient::{orientation, slot_path};
pub(crate) use progress::progress_set;
pub(crate) use prune::pruned;
pub(crate) use read::{read_json, read_text};
pub(crate) use restore::restored;
pub(crate) use split::parts;
pub(crate) use status::status;
pub(crate) use sync::synced;
pub(crate) use uninstall::{trusted, uninstalled};
pub(crate) use write::written;
