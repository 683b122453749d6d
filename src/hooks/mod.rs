//! The hooks (docs/hooks.md): SessionStart / UserPromptSubmit / PreCompact / PostCompact /
//! SessionEnd, whichever client fires them, and git post-checkout. Every hook exits 0 on every
//! input, reads its input typed (`input.rs`), computes what to print and returns it to the
//! client's renderer (`harness`), treats stdin strings as data (never a shell word, never a path
//! without the safe-id rule), and changes the store only through `store`'s changes.

pub mod claims;
pub mod claude;
pub mod delivered;
pub mod delivery;
pub mod dispatch;
pub mod git_hook;
pub mod input;
pub mod marker;
pub mod post_checkout;
pub mod post_compact;
pub mod pre_compact;
pub mod session_end;
pub mod session_start;
pub mod supervisor;
pub mod texts;
pub mod user_prompt;
pub mod writer;

pub use dispatch::{Event, guard};
