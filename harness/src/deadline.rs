//! Child processes with a time limit, for the checks that run other binaries (`aot forward` on
//! an older runtime, `aot selftest` on the gates): one way to start them and one way to stop them,
//! so a hung child never hangs the check.
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Starts `cmd` with no standard input, leading a process group of its own, so that
/// [`wait_or_kill`] can stop everything it started (cargo's children too).
pub fn spawn_group(cmd: &mut Command) -> std::io::Result<Child> {
    cmd.stdin(Stdio::null()).process_group(0).spawn()
}

/// Waits for a child started by [`spawn_group`]; past `timeout` kills its whole process group
/// and returns `None`.
pub fn wait_or_kill(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if start.elapsed() > timeout {
            // A negative pid addresses the process group the child leads.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_finishes_gives_its_status() {
        let mut child = spawn_group(&mut Command::new("true")).expect("spawn");
        let status = wait_or_kill(&mut child, Duration::from_secs(30)).expect("wait");
        assert!(status.is_some_and(|s| s.success()));
    }

    #[test]
    fn a_child_and_its_children_past_the_limit_are_killed() {
        // The shell's own child (`sleep`) is in the group too: the wait returns promptly.
        let start = Instant::now();
        let mut child =
            spawn_group(Command::new("sh").args(["-c", "sleep 30; true"])).expect("spawn");
        let status = wait_or_kill(&mut child, Duration::from_millis(100)).expect("wait");
        assert!(status.is_none());
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
    }
}
