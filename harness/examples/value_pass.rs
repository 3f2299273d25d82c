//! The floor of `cargo xtask sessions-bench`: every line of every `.jsonl` file under the given
//! folders parsed into a `serde_json::Value` and dropped, files spread over one thread per
//! core, each streamed line by line as `harness sessions` reads them. Prints files, lines and
//! bytes.

use std::io::{BufRead, BufReader};
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

fn main() -> std::io::Result<()> {
    let mut files = Vec::new();
    for dir in std::env::args_os().skip(1) {
        walk(Path::new(&dir), &mut files);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let (lines, bytes, bad) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut line = Vec::new();
                while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let Ok(file) = std::fs::File::open(path) else {
                        continue;
                    };
                    let mut reader = BufReader::with_capacity(1 << 16, file);
                    loop {
                        line.clear();
                        match reader.read_until(b'\n', &mut line) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                bytes.fetch_add(n as u64, Ordering::Relaxed);
                                lines.fetch_add(1, Ordering::Relaxed);
                                if serde_json::from_slice::<serde_json::Value>(&line).is_err() {
                                    bad.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                }
            });
        }
    });
    println!(
        "{} files, {} lines ({} not JSON), {} bytes",
        files.len(),
        lines.into_inner(),
        bad.into_inner(),
        bytes.into_inner()
    );
    Ok(())
}
