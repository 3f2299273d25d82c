//! The resource usage of a finished child process: the one place xtask reads it (`wait4`).

use std::process::Child;

use anyhow::{Result, bail};

/// What `wait4` reports about a child that ended.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Whether it exited normally with status 0.
    pub success: bool,
    /// The raw wait status, for messages.
    pub wait_status: i32,
    /// Its peak resident set size in bytes (`ru_maxrss`; an upper bound: a child's count
    /// starts from this process's size when it was spawned).
    pub peak_rss: u64,
    /// The CPU time it used, user and system.
    pub cpu: std::time::Duration,
}

/// A `timeval` as a duration (negative fields, which the kernel never reports, count as 0).
fn duration(t: libc::timeval) -> std::time::Duration {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u64::try_from(t.tv_usec).unwrap_or(0);
    std::time::Duration::from_secs(secs) + std::time::Duration::from_micros(micros)
}

/// Waits for our `child` (taken, so nothing else reaps it) and returns its usage.
pub fn wait(child: Child) -> Result<Usage> {
    wait_pid(child.id())
}

/// [`wait`] for a child known by its pid (its handle's pipes already taken by threads).
#[allow(unsafe_code)] // wait4 is the only way to read one child's resource usage.
pub fn wait_pid(pid: u32) -> Result<Usage> {
    let pid = i32::try_from(pid)?;
    let mut wstatus = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is the caller's own child, not yet reaped; both pointers are valid for the
    // call.
    let reaped = unsafe { libc::wait4(pid, &mut wstatus, 0, &mut usage) };
    if reaped != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    Ok(Usage {
        success: libc::WIFEXITED(wstatus) && libc::WEXITSTATUS(wstatus) == 0,
        wait_status: wstatus,
        // ru_maxrss is in kilobytes on Linux.
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        cpu: duration(usage.ru_utime) + duration(usage.ru_stime),
    })
}

/// What `cargo xtask measure` writes last on its standard error, before the figures.
pub const MEASURED: &str = "xtask-measured";

/// `xtask measure PROGRAM ARGS...` (hidden): runs the program with this process's standard
/// streams and environment, then writes `xtask-measured WALL_S CPU_S PEAK_RSS WAIT_STATUS` on
/// standard error. A child's peak RSS counts from the size of the process that started it
/// (`ru_maxrss` keeps the high-water mark of the memory an `exec` replaces), so a benchmark
/// that grew starts its timed programs through this small process instead.
pub fn measure(command: &[std::ffi::OsString]) -> Result<()> {
    let Some((program, args)) = command.split_first() else {
        bail!("measure: no program");
    };
    let started = std::time::Instant::now();
    let child = std::process::Command::new(program).args(args).spawn()?;
    let usage = wait(child)?;
    eprintln!(
        "{MEASURED} {} {} {} {}",
        started.elapsed().as_secs_f64(),
        usage.cpu.as_secs_f64(),
        usage.peak_rss,
        usage.wait_status
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn reports_a_childs_status_and_memory() {
        let ok = std::process::Command::new("true").spawn().unwrap();
        let usage = wait(ok).unwrap();
        assert!(usage.success);
        assert!(usage.peak_rss > 0);
        let failed = std::process::Command::new("false").spawn().unwrap();
        assert!(!wait(failed).unwrap().success);
    }
}
