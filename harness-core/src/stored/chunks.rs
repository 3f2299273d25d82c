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

/// The bytes read at a time: a line longer than this is assembled from several chunks. Most
/// stored sessions are under 1 MiB, so most are one direct read: cold, a history of 2,000 such
/// files reads in about nine tenths of the time 512 KiB chunks take (`docs/performance.md`).
pub(super) const CHUNK: usize = 1 << 20;

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

/// Whether the file is mostly in the page cache (or empty, or the system cannot tell). The
/// kernel says how many of its pages are cached (`cachestat`, Linux 6.5) without reading any.
/// Where it cannot, a read that may not wait (`RWF_NOWAIT`) tells whether the first byte is:
/// on a miss the kernel still starts reading ahead before it says so, so the file is marked
/// random access first (a page read ahead rather than the usual window), then marked back for
/// the reading through the cache that may follow.
#[cfg(target_os = "linux")]
fn cached(file: &File, buf: &mut [u8]) -> bool {
    use rustix::fs::{Advice, fadvise};
    let len = file.metadata().map_or(0, |m| m.len());
    if len == 0 {
        return true;
    }
    if let Some(pages) = cached_pages(file) {
        // Half or more: the cached part is read from the cache, the rest through it.
        let page = rustix::param::page_size() as u64;
        return pages.saturating_mul(page).saturating_mul(2) >= len;
    }
    let _ = fadvise(file, 0, None, Advice::Random);
    let probe = &mut [io::IoSliceMut::new(&mut buf[..1])];
    let cached = !matches!(
        rustix::io::preadv2(file, probe, 0, rustix::io::ReadWriteFlags::NOWAIT),
        Err(rustix::io::Errno::AGAIN)
    );
    let _ = fadvise(file, 0, None, Advice::Normal);
    cached
}

/// The number of the file's pages in the page cache (`cachestat`), or `None` where the kernel
/// has no such call (before 6.5) or refuses it. Cold, the probe it replaces costs a read
/// request a file: a cold listing of 2,000 files asked the disk 4,343 times with the probe,
/// 2,205 times without (`docs/performance.md`, "Stored sessions").
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn cached_pages(file: &File) -> Option<u64> {
    use std::os::fd::AsRawFd;
    /// `struct cachestat_range` of `<linux/mman.h>`: the whole file when `len` is 0.
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    /// `struct cachestat` of `<linux/mman.h>`.
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    // One number on every architecture Rust builds for (system calls from 424 on share their
    // numbers); the `libc` crate does not name it for every target.
    const SYS_CACHESTAT: libc::c_long = 451;
    let range = Range { off: 0, len: 0 };
    let mut stat = Stat::default();
    // SAFETY: `cachestat(fd, range, stat, flags)` reads one `cachestat_range` and writes one
    // `cachestat`, both `repr(C)` with the kernel's layout and alive across the call; the
    // descriptor is open for as long as `file` is borrowed.
    let done = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0 as libc::c_uint,
        )
    };
    (done == 0).then_some(stat.nr_cache)
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

    /// A file just read is cached and read through the cache; evicted, it is read past it,
    /// and `cachestat` (where the kernel has it) counts its pages either way.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_cached_file_is_read_from_the_cache_and_an_evicted_one_past_it() -> io::Result<()> {
        use rustix::fs::{Advice, fadvise};
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'x'; 5 * ALIGN + 1])?;
        let file = File::open(&path)?;
        file.sync_all()?;
        std::fs::read(&path)?;
        let mut store = vec![0; ALIGN];
        assert!(cached(&file, &mut store));
        if let Some(pages) = cached_pages(&file) {
            let page = rustix::param::page_size();
            assert_eq!(pages as usize, (5 * ALIGN + 1).div_ceil(page));
        }
        // tmpfs keeps a file's pages whatever it is told: there is no disk behind them.
        let in_memory = rustix::fs::fstatfs(&file)?.f_type == 0x0102_1994;
        fadvise(&file, 0, None, Advice::DontNeed)?;
        if !in_memory {
            assert!(!cached(&file, &mut store));
            if let Some(pages) = cached_pages(&file) {
                assert_eq!(pages, 0);
            }
        }
        Ok(())
    }
}
