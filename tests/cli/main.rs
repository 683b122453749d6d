//! The one integration-test binary: real repositories, real binaries.
mod bad_input;
mod citations;
mod compaction;
mod credentials;
mod durability;
mod gate;
mod harness;
mod hooks;
mod injection;
mod layers;
mod newcomer;
mod output;
mod properties;
mod read;
mod store;
mod sync;
mod util;
