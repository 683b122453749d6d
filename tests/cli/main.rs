//! The one integration-test binary: real repositories, real binaries.
mod bad_input;
mod citations;
mod compaction;
mod credentials;
mod durability;
mod examples;
mod fix;
mod follow;
mod gate;
mod harness;
mod hooks;
mod injection;
mod labels;
mod layers;
#[cfg(feature = "mcp")]
mod mcp;
mod newcomer;
mod output;
mod properties;
mod read;
mod settings;
mod slots;
mod store;
mod sync;
mod trust;
mod util;
mod views;
