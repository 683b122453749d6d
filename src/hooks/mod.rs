//! The hooks (hooks.md, issue 9): Claude Code SessionStart / UserPromptSubmit / PreCompact /
//! PostCompact / SessionEnd and git post-checkout. Every hook exits 0 on every input, never prints except where its contract
//! says, treats stdin strings as data (never a shell word, never a path without the safe-id
//! rule), and changes the store only through `store::slot`.

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

pub use dispatch::{Event, guard, run};
