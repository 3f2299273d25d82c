//! A run's whole tree of processes, found and stopped wherever its members went: the
//! mechanism and its limits are in the documentation of [the `process` module](crate::process).

use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::{Pid, Signal};

/// How many times the processes of a run are looked for before giving up: each round kills
/// what it finds, and the last one finds nothing unless processes keep being born faster
/// than they are killed, or cannot die (stuck in the kernel).
const ROUNDS: usize = 200;

/// The processes of one live run: its agent's process group, and every process that carries
/// its mark.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use harness_agents_core::process::RunTree;
///
/// let mut tree = RunTree::new();
/// let mut command = tokio::process::Command::new("agent");
/// command.process_group(0);
/// tree.mark(&mut command);
/// let child = command.spawn()?;
/// tree.set_leader(child.id());
/// // ... the run ...
/// tree.kill(); // the agent, its group, and everything it started, wherever it went
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct RunTree {
    /// The environment variable that marks the run's processes.
    var: String,
    /// The agent: its process group is killed too, and it is not reaped here (its owner
    /// waits for it).
    leader: Option<Pid>,
}

impl Default for RunTree {
    fn default() -> Self {
        RunTree::new()
    }
}

impl RunTree {
    /// A new run's tree, with a mark no other run has.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // A pid is unique only within its pid namespace, and `/proc` shows the processes of
        // the namespaces below this one too: a random token per process keeps a harness in a
        // container from sharing a mark with this one.
        static TOKEN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let token = *TOKEN.get_or_init(|| {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        });
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        RunTree {
            var: format!("HARNESS_RUN_{}_{token:016x}_{n}", std::process::id()),
            leader: None,
        }
    }

    /// The environment variable (name, value) that marks the run's processes.
    pub fn mark_var(&self) -> (&str, &str) {
        (&self.var, "1")
    }

    /// Marks `command`, the agent's, as this run's.
    pub fn mark(&self, command: &mut tokio::process::Command) {
        let (name, value) = self.mark_var();
        command.env(name, value);
    }

    /// The agent's pid, once started (`Child::id`); it was started as the leader of its own
    /// process group.
    pub fn set_leader(&mut self, pid: Option<u32>) {
        self.leader = pid
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
    }

    /// Kills the agent's process group and every process of the run, and reaps those this
    /// process adopted ([`adopt_orphans`]); returns how many processes were signalled. Never
    /// touches another run's processes; safe to call more than once, and after the run ended.
    pub fn kill(&self) -> usize {
        // The marked processes first, while the tree of parents still leads from them to
        // their unmarked descendants; then the group, for what has no mark to find.
        let signalled = self.kill_marked();
        if let Some(leader) = self.leader {
            // ESRCH (the group is already gone) is the only expected failure.
            let _ = rustix::process::kill_process_group(leader, Signal::KILL);
        }
        signalled
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn kill_marked(&self) -> usize {
        let needle = format!("{}=1", self.var).into_bytes();
        let me = rustix::process::getpid().as_raw_nonzero().get();
        // Each process signalled (a dying one may be found and signalled again), and whether
        // this process adopted it.
        let mut signalled: Vec<(Pid, bool)> = Vec::new();
        for _ in 0..ROUNDS {
            let found = linux::members(&needle);
            let mut this_round = 0;
            for member in found {
                if !linux::kill(&member) {
                    continue;
                }
                this_round += 1;
                if !signalled.iter().any(|(pid, _)| *pid == member.pid) {
                    let adopted = member.parent == me && Some(member.pid) != self.leader;
                    signalled.push((member.pid, adopted));
                }
            }
            if this_round == 0 {
                // Nothing alive is left, or only what this process may not signal.
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let count = signalled.len();
        linux::reap(
            signalled
                .into_iter()
                .filter_map(|(pid, adopted)| adopted.then_some(pid))
                .collect(),
        );
        count
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn kill_marked(&self) -> usize {
        0
    }
}

/// Makes this process a child subreaper (Linux): the orphaned descendants of its runs are
/// re-parented to it instead of to init, and [`RunTree::kill`] reaps the run's processes it
/// adopted. Process-wide and for the life of the process: call it only in a program that may
/// adopt every orphan below it (the `harness` CLI does); other systems do nothing.
///
/// # Errors
///
/// The `prctl` failed (not expected on Linux).
pub fn adopt_orphans() -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use std::collections::{BTreeMap, BTreeSet};
    use std::time::Duration;

    use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};

    /// A live process of the run.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Member {
        pub(super) pid: Pid,
        pub(super) parent: i32,
        /// When it started (clock ticks since boot): with the pid, what names the process,
        /// since a pid may be reused once its process is gone.
        started: u64,
    }

    /// What `/proc/PID/stat` says of a process.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Stat {
        /// The parent's pid (0 for none).
        parent: i32,
        /// Whether it has exited (a zombie, or dead).
        exited: bool,
        /// When it started, in clock ticks since boot.
        started: u64,
    }

    /// What `/proc/PID/stat` says of `pid`, if it exists.
    fn stat(pid: i32) -> Option<Stat> {
        let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        // `PID (COMM) STATE PPID ...`; COMM may hold any byte, `)` included: the last one ends it.
        let close = memchr::memrchr(b')', &text)?;
        let mut fields = text[close + 1..]
            .split(|b| *b == b' ')
            .filter(|f| !f.is_empty());
        let state = fields.next()?;
        let parent = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
        // `starttime` is the 22nd field; the state was the 3rd and the parent the 4th.
        let started = std::str::from_utf8(fields.nth(17)?).ok()?.parse().ok()?;
        Some(Stat {
            parent,
            exited: state == b"Z" || state == b"X",
            started,
        })
    }

    /// Whether `pid`'s environment holds `needle` (`NAME=1`) as one of its entries.
    fn marked(pid: i32, needle: &[u8]) -> bool {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            return false;
        };
        environ.split(|b| *b == 0).any(|entry| entry == needle)
    }

    /// Every live process of the run: those marked, and their descendants by the tree.
    pub(super) fn members(needle: &[u8]) -> Vec<Member> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut stats = BTreeMap::new();
        let mut found = BTreeSet::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            match stat(pid) {
                Some(stat) if !stat.exited => {
                    stats.insert(pid, stat);
                    if marked(pid, needle) {
                        found.insert(pid);
                    }
                }
                // Gone, or a zombie: nothing left to kill.
                _ => continue,
            }
        }
        // Descendants of marked processes, to any depth, marked or not.
        let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
        for (&pid, stat) in &stats {
            children.entry(stat.parent).or_default().push(pid);
        }
        let mut todo: Vec<i32> = found.iter().copied().collect();
        while let Some(pid) = todo.pop() {
            for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
                if found.insert(child) {
                    todo.push(child);
                }
            }
        }
        found
            .into_iter()
            .filter_map(|pid| {
                let stat = stats.get(&pid)?;
                Some(Member {
                    pid: Pid::from_raw(pid)?,
                    parent: stat.parent,
                    started: stat.started,
                })
            })
            .collect()
    }

    /// Sends SIGKILL to `member` if it still is the process the scan saw (the same start
    /// time; its parent may have died since): through a pidfd opened first, so a pid reused
    /// after the check is never signalled; with `kill` where pidfds are missing (Linux before
    /// 5.3). Whether it was signalled.
    pub(super) fn kill(member: &Member) -> bool {
        let still = || {
            stat(member.pid.as_raw_nonzero().get())
                .is_some_and(|now| !now.exited && now.started == member.started)
        };
        match rustix::process::pidfd_open(member.pid, PidfdFlags::empty()) {
            Ok(fd) => still() && rustix::process::pidfd_send_signal(&fd, Signal::KILL).is_ok(),
            Err(rustix::io::Errno::NOSYS) => {
                still() && rustix::process::kill_process(member.pid, Signal::KILL).is_ok()
            }
            Err(_) => false,
        }
    }

    /// Waits for the killed children of this process (adopted orphans of the run), a second
    /// at most, so none is left a zombie; only these pids, never another child's.
    pub(super) fn reap(mut pids: Vec<Pid>) {
        for _ in 0..1000 {
            pids.retain(|&pid| {
                matches!(
                    rustix::process::waitpid(Some(pid), WaitOptions::NOHANG),
                    Ok(None)
                )
            });
            if pids.is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
