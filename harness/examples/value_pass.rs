//! The floors of `cargo xtask sessions-bench`. By default every line of every `.jsonl` file
//! under the given folders is parsed into a `serde_json::Value` and dropped, files spread over
//! one thread per core, each streamed line by line as `harness sessions` reads them. With
//! `--read-only` nothing is parsed: each file is read into a 1 MiB buffer on 8 threads,
//! biggest first, as `harness sessions list` reads (with `--direct`, past the page cache, as
//! it reads a file not in the cache), which is what the disk and the page cache allow before
//! any work on the bytes. Prints files, lines (none counted with `--read-only`) and bytes.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// Counts of what was read.
#[derive(Default)]
struct Counts {
    lines: AtomicU64,
    bytes: AtomicU64,
    bad: AtomicU64,
}

/// Every line of `file` parsed into a `Value`.
fn parse(file: File, line: &mut Vec<u8>, counts: &Counts) {
    let mut reader = BufReader::with_capacity(1 << 16, file);
    loop {
        line.clear();
        match reader.read_until(b'\n', line) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                counts.bytes.fetch_add(n as u64, Ordering::Relaxed);
                counts.lines.fetch_add(1, Ordering::Relaxed);
                if serde_json::from_slice::<serde_json::Value>(line).is_err() {
                    counts.bad.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The read size, and the alignment direct reads need.
const CHUNK: usize = 1 << 20;
const ALIGN: usize = 4096;

/// `path` read whole in chunks, nothing looked at (its lines are not counted).
fn read(path: &Path, direct: bool, store: &mut [u8], counts: &Counts) {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    if direct {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
    }
    let Ok(mut file) = options.open(path) else {
        return;
    };
    let offset = store.as_ptr().align_offset(ALIGN);
    let buf = &mut store[offset..offset + CHUNK];
    loop {
        match file.read(buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                counts.bytes.fetch_add(n as u64, Ordering::Relaxed);
                // A short direct read is the file's end.
                if direct && n < CHUNK {
                    break;
                }
            }
        }
    }
}

fn main() -> std::io::Result<()> {
    let (mut read_only, mut direct, mut files) = (false, false, Vec::new());
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("--read-only") => read_only = true,
            Some("--direct") => direct = true,
            _ => walk(Path::new(&arg), &mut files),
        }
    }
    let threads = if read_only {
        files.sort_by_cached_key(|p| std::cmp::Reverse(p.metadata().map_or(0, |m| m.len())));
        8
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    let next = AtomicUsize::new(0);
    let counts = Counts::default();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let (mut line, mut store) = (Vec::new(), Vec::new());
                if read_only {
                    store.resize(CHUNK + ALIGN, 0);
                }
                while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if read_only {
                        read(path, direct, &mut store, &counts);
                    } else if let Ok(file) = File::open(path) {
                        parse(file, &mut line, &counts);
                    }
                }
            });
        }
    });
    println!(
        "{} files, {} lines ({} not JSON), {} bytes",
        files.len(),
        counts.lines.into_inner(),
        counts.bad.into_inner(),
        counts.bytes.into_inner()
    );
    Ok(())
}
