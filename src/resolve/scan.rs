//! Cited files are searched as streams, never read whole: a 2 GiB cited file costs one chunk
//! of memory, not its size. Small files are kept in memory within a fixed budget, so many
//! citations into one file still read it once.

use crate::fs::File;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Binary files have a NUL byte in this prefix.
pub(crate) const BINARY_PROBE: usize = 8192;
/// How much is read at a time.
const CHUNK: usize = 1 << 20;
/// A file up to this size may be kept in memory …
const CACHE_FILE: u64 = 4 << 20;
/// … while all kept files together stay under this.
pub(crate) const CACHE_BUDGET: u64 = 16 << 20;

/// A cited file's facts from one pass, and where its bytes are.
pub(crate) struct FileText {
    source: Source,
    pub(crate) binary: bool,
    pub(crate) line_count: u64,
}

enum Source {
    Kept(Vec<u8>),
    OnDisk(PathBuf),
}

/// What one pass over a byte stream counts.
#[derive(Default)]
struct Facts {
    newlines: u64,
    len: u64,
    last: Option<u8>,
    binary: bool,
}

impl Facts {
    fn feed(&mut self, chunk: &[u8]) {
        if self.len < BINARY_PROBE as u64 {
            let probe = (BINARY_PROBE as u64 - self.len).min(chunk.len() as u64) as usize;
            self.binary |= memchr::memchr(0, &chunk[..probe]).is_some();
        }
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.len += chunk.len() as u64;
        self.last = chunk.last().copied().or(self.last);
    }

    fn line_count(&self) -> u64 {
        self.newlines + u64::from(self.len > 0 && self.last != Some(b'\n'))
    }
}

impl FileText {
    /// Read `path`'s facts; its bytes are kept when it fits in `budget` (which shrinks).
    pub(crate) fn read(path: &Path, budget: &mut u64) -> Option<FileText> {
        let (file, _) = File::open(path).ok()?.into_parts();
        let size = file.metadata().ok()?.len();
        FileText::read_from(path, file, size, budget)
    }

    /// How many bytes of it are held in memory (counted against the reader's budget).
    pub(crate) fn kept_bytes(&self) -> u64 {
        match &self.source {
            Source::Kept(b) => b.len() as u64,
            Source::OnDisk(_) => 0,
        }
    }

    /// [`FileText::read`] on `path` already open as `file`, whose size the caller knows (a
    /// streamed file is opened again by `path` when it is searched).
    pub(crate) fn read_from(
        path: &Path,
        mut file: crate::fs::FdFile,
        size: u64,
        budget: &mut u64,
    ) -> Option<FileText> {
        let mut facts = Facts::default();
        if size <= CACHE_FILE && size <= *budget {
            let mut bytes = Vec::with_capacity(size as usize);
            // Exactly the size the caller saw: no probe read for an end already known (one
            // system call per cited file fewer); bytes appended since are not this snapshot's.
            (&mut file).take(size).read_to_end(&mut bytes).ok()?;
            *budget = budget.saturating_sub(bytes.len() as u64);
            facts.feed(&bytes);
            return Some(FileText {
                source: Source::Kept(bytes),
                binary: facts.binary,
                line_count: facts.line_count(),
            });
        }
        for_each_chunk(file, &mut chunk_buffer(), |chunk| {
            facts.feed(chunk);
            ControlFlow::Continue(())
        })
        .ok()?;
        Some(FileText {
            source: Source::OnDisk(path.to_path_buf()),
            binary: facts.binary,
            line_count: facts.line_count(),
        })
    }

    /// Call `f` with the 1-based number of each line containing `fragment` (backticks and a
    /// line's final CR ignored), in increasing order, until it breaks.
    fn each_line_containing(&self, fragment: &str, f: impl FnMut(u64) -> ControlFlow<()>) {
        match &self.source {
            Source::Kept(bytes) => lines_containing(
                |feed| {
                    let _ = feed(bytes);
                },
                fragment.as_bytes(),
                f,
            ),
            Source::OnDisk(path) => {
                if let Ok(file) = crate::fs::FdFile::open(path) {
                    lines_containing(
                        |feed| {
                            let _ = for_each_chunk(file, &mut chunk_buffer(), feed);
                        },
                        fragment.as_bytes(),
                        f,
                    );
                }
            }
        }
    }

    /// Whether some line containing `fragment` satisfies `pred`.
    pub(crate) fn any_line(&self, fragment: &str, pred: impl Fn(u64) -> bool) -> bool {
        let mut hit = false;
        self.each_line_containing(fragment, |n| {
            hit = pred(n);
            if hit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        hit
    }

    /// The line containing `fragment` nearest to line `to` (the lower one on a tie), and how
    /// many lines contain it, counted up to 2 (2: more than one).
    pub(crate) fn nearest_line(&self, fragment: &str, to: u64) -> (Option<u64>, u32) {
        let mut best: Option<u64> = None;
        let mut count = 0;
        self.each_line_containing(fragment, |n| {
            count += 1;
            if best.is_none_or(|b| n.abs_diff(to) < b.abs_diff(to)) {
                best = Some(n);
            }
            // Lines come in order: past `to`, every later one is farther; a second line
            // settles the count.
            if n >= to && count >= 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        (best, count.min(2))
    }
}

/// The 1-based numbers of the lines of `bytes` holding `fragment` (the same matching as a cited
/// file's: backticks and a final CR ignored), the first `cap` of them.
pub(crate) fn lines_holding(bytes: &[u8], fragment: &str, cap: usize) -> Vec<u64> {
    let mut out = Vec::new();
    lines_containing(
        |feed| {
            let _ = feed(bytes);
        },
        fragment.as_bytes(),
        |n| {
            out.push(n);
            if out.len() >= cap {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    out
}

/// A buffer for [`for_each_chunk`], allocated once per reader thread, not per file.
pub(crate) fn chunk_buffer() -> Vec<u8> {
    vec![0u8; CHUNK]
}

/// Feed `reader` to `f` in chunks of at most `buf.len()` bytes.
pub(crate) fn for_each_chunk(
    mut reader: impl Read,
    buf: &mut [u8],
    mut f: impl FnMut(&[u8]) -> ControlFlow<()>,
) -> std::io::Result<()> {
    loop {
        let n = match reader.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if f(&buf[..n]).is_break() {
            return Ok(());
        }
    }
}

/// Stream the chunks `feed` produces, with every backtick deleted, through a window that
/// carries the last `fragment.len() - 1` bytes of the previous chunk, so a match across a chunk
/// border is seen once and memory stays at one chunk whatever the file's size. A chunk with no
/// backtick and nothing carried is searched in place. A fragment never holds `\n` (it is one
/// line) nor ends in CR (it is trimmed), so matching the stream is matching lines.
fn lines_containing(
    feed: impl FnOnce(&mut dyn FnMut(&[u8]) -> ControlFlow<()>),
    fragment: &[u8],
    mut f: impl FnMut(u64) -> ControlFlow<()>,
) {
    if fragment.is_empty() {
        return;
    }
    let finder = memchr::memmem::Finder::new(fragment);
    let carry = fragment.len() - 1;
    let mut window: Vec<u8> = Vec::new();
    // The line number at the start of the window.
    let mut line: u64 = 1;
    let mut last_reported = 0u64;
    feed(&mut |chunk: &[u8]| {
        let direct = window.is_empty() && memchr::memchr(b'`', chunk).is_none();
        if !direct {
            let mut rest = chunk;
            while let Some(at) = memchr::memchr(b'`', rest) {
                window.extend_from_slice(&rest[..at]);
                rest = &rest[at + 1..];
            }
            window.extend_from_slice(rest);
        }
        let hay: &[u8] = if direct { chunk } else { &window };
        let mut counted_to = 0;
        let mut at_line = line;
        for start in finder.find_iter(hay) {
            at_line += memchr::memchr_iter(b'\n', &hay[counted_to..start]).count() as u64;
            counted_to = start;
            if at_line != last_reported {
                last_reported = at_line;
                if f(at_line).is_break() {
                    return ControlFlow::Break(());
                }
            }
        }
        let keep_from = hay.len().saturating_sub(carry);
        line += memchr::memchr_iter(b'\n', &hay[..keep_from]).count() as u64;
        if direct {
            window.extend_from_slice(&chunk[keep_from..]);
        } else {
            window.drain(..keep_from);
        }
        ControlFlow::Continue(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8], fragment: &str) -> Vec<u64> {
        let mut out = Vec::new();
        let chunked = |feed: &mut dyn FnMut(&[u8]) -> ControlFlow<()>| {
            for piece in text.chunks(CHUNK) {
                if feed(piece).is_break() {
                    return;
                }
            }
        };
        lines_containing(chunked, fragment.as_bytes(), |n| {
            out.push(n);
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn reports_each_matching_line_once_ignoring_backticks_and_cr() {
        assert_eq!(lines(b"ab ab\nx\r\n`a`b\nab", "ab"), vec![1, 3, 4]);
        assert_eq!(lines(b"x\r\n", "x"), vec![1]);
        assert!(lines(b"", "a").is_empty());
    }

    #[test]
    fn finds_matches_across_chunk_borders() {
        let mut text = vec![b'x'; CHUNK - 2];
        text.extend_from_slice(b"needle\n");
        text.extend(std::iter::repeat_n(b'\n', 3));
        text.extend_from_slice(b"needle");
        assert_eq!(lines(&text, "needle"), vec![1, 5]);
    }

    #[test]
    fn facts_count_lines_like_the_contract() {
        for (text, count) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\nb", 2),
            (b"\n\n", 2),
        ] {
            let mut facts = Facts::default();
            facts.feed(text);
            assert_eq!(facts.line_count(), count, "{text:?}");
        }
    }
}
