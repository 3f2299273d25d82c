//! A stored session's file read a chunk at a time, from the page cache when the file is in it
//! and past the cache when it is not.
//!
//! `harness sessions list` reads each byte of a history once. Read cold through the page cache,
//! the kernel's work of bringing a gigabyte in (allocating, filling and indexing its pages, then
//! copying each one out) costs about as much CPU time as the listing itself
//! (`docs/performance.md`, "Stored sessions"), and the history evicts what the user's other
//! programs had cached. So a file whose first bytes are not cached is read with `O_DIRECT`:
//! the disk writes straight into the reader's buffer. A file in the cache (the agent is writing
//! it, or a listing just read it) is read from there, which is faster still. The price: a
//! history read past the cache is read from the disk again the next time.
//!
//! Direct reads need a buffer, offsets and lengths aligned to the device's block; the buffer is
//! aligned to [`ALIGN`] (4 KiB, a multiple of every block size Linux supports for direct I/O
//! on the filesystems that hold home folders) and every direct read is a whole chunk at a
//! chunk's offset. A short read ends the direct reading (the file's end, or a file that grew):
//! what follows, if anything, is read through the cache, as is everything when the filesystem
//! refuses direct I/O.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The bytes read at a time: a line longer than this is assembled from several chunks.
pub(super) const CHUNK: usize = 1 << 19;

/// The alignment of the chunk buffer and of each direct read.
const ALIGN: usize = 4096;

/// A file read front to back in chunks.
pub(super) struct Chunks<'b> {
    /// The file, read through the page cache: the reading when the file is cached or direct
    /// reading stops, and [`Chunks::file`] for the caller's reading back.
    file: File,
    /// The same file opened for direct reading, while that goes on.
    direct: Option<File>,
    /// Where the next chunk starts in the file.
    pos: u64,
    /// The chunk buffer: [`CHUNK`] bytes aligned to [`ALIGN`].
    buf: &'b mut [u8],
}

impl<'b> Chunks<'b> {
    /// Opens `path`, with `store` (reused from file to file) holding the chunk buffer.
    pub(super) fn open(path: &Path, store: &'b mut Vec<u8>) -> io::Result<Chunks<'b>> {
        let file = File::open(path)?;
        if store.len() < CHUNK + ALIGN {
            store.resize(CHUNK + ALIGN, 0);
        }
        let offset = store.as_ptr().align_offset(ALIGN);
        let buf = &mut store[offset..offset + CHUNK];
        let direct = if cached(&file, buf) {
            None
        } else {
            open_direct(path)
        };
        Ok(Chunks {
            file,
            direct,
            pos: 0,
            buf,
        })
    }

    /// The next chunk; empty at the end of the file.
    pub(super) fn next(&mut self) -> io::Result<&[u8]> {
        if let Some(direct) = &self.direct {
            match read_at(direct, self.buf, self.pos) {
                Ok(n) => {
                    if n < CHUNK {
                        // The next offset is no longer aligned.
                        self.direct = None;
                    }
                    self.pos += n as u64;
                    return Ok(&self.buf[..n]);
                }
                // The filesystem took the `open` but not the read: read through the cache.
                Err(e) if e.kind() == io::ErrorKind::InvalidInput => self.direct = None,
                Err(e) => return Err(e),
            }
        }
        let n = read_at(&self.file, self.buf, self.pos)?;
        self.pos += n as u64;
        Ok(&self.buf[..n])
    }

    /// Once [`Chunks::next`] has given the end: the file, read through the page cache, for
    /// reading back what was passed over, and the last chunk, `len` bytes long.
    pub(super) fn last(&mut self, len: usize) -> (&mut File, &[u8]) {
        (&mut self.file, &self.buf[..len])
    }
}

/// `read_at` until it gives bytes, the end, or an error other than an interruption.
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    loop {
        match file.read_at(buf, pos) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Whether the file's first bytes are in the page cache (or it is empty, or the system cannot
/// tell): a read that may not wait (`RWF_NOWAIT`) gets them only from the cache.
#[cfg(target_os = "linux")]
fn cached(file: &File, buf: &mut [u8]) -> bool {
    let probe = &mut [io::IoSliceMut::new(&mut buf[..1])];
    !matches!(
        rustix::io::preadv2(file, probe, 0, rustix::io::ReadWriteFlags::NOWAIT),
        Err(rustix::io::Errno::AGAIN)
    )
}

#[cfg(not(target_os = "linux"))]
fn cached(_: &File, _: &mut [u8]) -> bool {
    true
}

/// `path` opened for direct reading, or `None` where the filesystem has no direct I/O.
#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(path)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> Option<File> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte comes back once, in order, whichever way the chunks are read, for files
    /// shorter than, equal to and longer than a chunk.
    #[test]
    fn chunks_give_the_whole_file_in_order() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        for len in [0, 1, ALIGN - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let path = dir.path().join(format!("f{len}"));
            std::fs::write(&path, &bytes)?;
            for direct in [false, true] {
                let mut store = Vec::new();
                let mut chunks = Chunks::open(&path, &mut store)?;
                chunks.direct = if direct { open_direct(&path) } else { None };
                let mut read = Vec::new();
                loop {
                    let chunk = chunks.next()?;
                    if chunk.is_empty() {
                        break;
                    }
                    read.extend_from_slice(chunk);
                }
                assert_eq!(read, bytes, "{len} bytes, direct {direct}");
            }
        }
        Ok(())
    }
}
