//! The hooks (docs/hooks.md): SessionStart / UserPromptSubmit / PreCompact / PostCompact /
//! SessionEnd and the tool hooks, whichever client fires them, and git post-checkout. Every hook exits 0 on every
//! input, reads its input typed (`input.rs`), computes what to print and returns it to the
//! client's renderer (`harness`), treats stdin strings as data (never a shell word, never a path
//! without the safe-id rule), and changes the store only through `store`'s changes.

pub(crate) mod claims;
pub(crate) mod dispatch;
pub(crate) mod input;
pub(crate) mod post_checkout;
pub(crate) mod post_compact;
pub(crate) mod pre_compact;
pub(crate) mod promise;
pub(crate) mod resets;
pub(crate) mod session_end;
pub(crate) mod session_start;
pub(crate) mod supervisor;
pub(crate) mod texts;
pub(crate) mod tool_use;
pub(crate) mod user_prompt;
pub(crate) mod writer;

pub(crate) use dispatch::{Event, HookReply, guard};
