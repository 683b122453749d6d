//! `new` for people: the document itself, ready to fill in.

use super::super::new::Skeleton;

pub(crate) fn skeleton(s: &Skeleton) -> String {
    s.document.clone()
}
