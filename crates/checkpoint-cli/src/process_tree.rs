//! A process and every process below it, killed at once: for a command that must end now,
//! whatever it started (a git that talks to a remote past its time). Below `remote.rs` and
//! the runner, which both end processes; and whether a process is alive (`watch`'s runner, a
//! client's live sessions).

/// Kills process `pid` and every process below it (found in `/proc`; elsewhere only `pid`),
/// for a command that must end now, whatever it started.
pub(crate) fn kill(pid: u32) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal as Sig, kill_process};
        let mut doomed = vec![pid];
        let mut parents: Vec<(u32, u32)> = Vec::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(child) = entry
                    .file_name()
                    .to_str()
                    .and_then(|name| name.parse().ok())
                else {
                    continue;
                };
                // `pid (comm) state ppid …`: the name may hold spaces and parentheses.
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|ppid| ppid.parse().ok());
                if let Some(ppid) = ppid {
                    parents.push((child, ppid));
                }
            }
        }
        let mut at = 0;
        while at < doomed.len() {
            let parent = doomed[at];
            doomed.extend(
                parents
                    .iter()
                    .filter(|(_, ppid)| *ppid == parent)
                    .map(|(child, _)| *child),
            );
            at += 1;
        }
        for pid in doomed {
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = kill_process(pid, Sig::KILL);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Whether process `pid` is alive; `None` where that cannot be told.
pub(crate) fn alive(pid: u32) -> Option<bool> {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
        match rustix::process::test_kill_process(pid) {
            Ok(()) => Some(true),
            Err(rustix::io::Errno::PERM) => Some(true),
            Err(rustix::io::Errno::SRCH) => Some(false),
            Err(_) => None,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        None
    }
}
