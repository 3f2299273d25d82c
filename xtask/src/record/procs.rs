//! The processes of a recorded session, read from `/proc`: finding the agent's process to kill
//! it from outside, and checking that none of the session's processes outlives it (I6).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a session's processes may take to go once the session has ended.
pub const GONE_LIMIT: Duration = Duration::from_secs(10);

/// Sends SIGKILL to `pid`.
pub fn kill(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// One process as `/proc/PID/stat` shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Proc {
    /// Its id.
    pub pid: i32,
    /// Its parent's id.
    pub ppid: i32,
    /// When it started (clock ticks since boot): tells a process from a later one with its pid.
    pub start: u64,
    /// Whether it has exited and waits to be reaped.
    pub zombie: bool,
}

/// Every process of the machine.
pub fn table() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The command may hold spaces and parentheses: the fields follow the last `)`.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
            Some(Proc {
                pid,
                ppid: fields.get(1)?.parse().ok()?,
                start: fields.get(19)?.parse().ok()?,
                zombie: fields.first() == Some(&"Z"),
            })
        })
        .collect()
}

/// `root` and every descendant of it running now.
pub fn family(root: i32) -> Vec<Proc> {
    let table = table();
    let mut family = vec![root];
    let mut at = 0;
    while at < family.len() {
        let parent = family[at];
        family.extend(table.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
        at += 1;
    }
    table
        .into_iter()
        .filter(|p| family.contains(&p.pid))
        .collect()
}

/// The first descendant of this process running `binary` (a wrapper's `exec` of it).
pub fn descendant_running(binary: &Path) -> Option<i32> {
    let ours = std::process::id() as i32;
    family(ours)
        .into_iter()
        .find(|p| {
            p.pid != ours
                && !p.zombie
                && std::fs::read_link(format!("/proc/{}/exe", p.pid)).is_ok_and(|e| e == binary)
        })
        .map(|p| p.pid)
}

/// The processes seen during a session.
#[derive(Debug, Default)]
pub struct Processes {
    seen: BTreeSet<(i32, u64)>,
}

impl Processes {
    /// Adds `root` and its descendants running now.
    pub fn snapshot(&mut self, root: Option<i32>) {
        let Some(root) = root else {
            return;
        };
        for p in family(root) {
            self.seen.insert((p.pid, p.start));
        }
    }

    /// How many processes were seen.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// The processes seen that are still running [`GONE_LIMIT`] after the session ended.
    pub fn outlived(&self) -> Vec<String> {
        let started = Instant::now();
        loop {
            let alive: Vec<(i32, u64)> = table()
                .into_iter()
                .filter(|p| !p.zombie && self.seen.contains(&(p.pid, p.start)))
                .map(|p| (p.pid, p.start))
                .collect();
            if alive.is_empty() {
                return Vec::new();
            }
            if started.elapsed() > GONE_LIMIT {
                return alive
                    .into_iter()
                    .map(|(pid, _)| {
                        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                        format!("I6: process {pid} ({}) outlived the session", cmd.trim())
                    })
                    .collect();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
