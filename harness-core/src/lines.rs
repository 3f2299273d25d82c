//! Splitting bytes into lines as they arrive (S1), without holding more than one line.

use memchr::memchr;

/// Collects bytes fed in arbitrary chunks and hands out complete lines.
///
/// A line ends at `\n` (not included); the last line may lack it and is returned by
/// [`LineSplitter::finish`]. `\r` is left in place: the normalizer drops one trailing `\r`.
///
/// ```
/// use harness_agents_core::LineSplitter;
///
/// let mut lines = Vec::new();
/// let mut splitter = LineSplitter::new();
/// splitter.push(b"ab\ncd", |l| lines.push(l.to_vec()));
/// splitter.push(b"e\n\nf", |l| lines.push(l.to_vec()));
/// splitter.finish(|l| lines.push(l.to_vec()));
/// assert_eq!(lines, [b"ab".to_vec(), b"cde".to_vec(), b"".to_vec(), b"f".to_vec()]);
/// ```
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    /// An empty splitter.
    pub fn new() -> Self {
        LineSplitter::default()
    }

    /// Feeds a chunk; calls `line` for every line it completes, in order.
    pub fn push(&mut self, mut chunk: &[u8], mut line: impl FnMut(&[u8])) {
        while let Some(i) = memchr(b'\n', chunk) {
            if self.partial.is_empty() {
                line(&chunk[..i]);
            } else {
                self.partial.extend_from_slice(&chunk[..i]);
                line(&self.partial);
                self.partial.clear();
            }
            chunk = &chunk[i + 1..];
        }
        self.partial.extend_from_slice(chunk);
    }

    /// Ends the input: calls `line` for a last line without `\n`, if any bytes are left.
    pub fn finish(&mut self, mut line: impl FnMut(&[u8])) {
        if !self.partial.is_empty() {
            line(&self.partial);
            self.partial = Vec::new();
        }
    }
}
