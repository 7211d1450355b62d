//! Lower CPU priority for ordinary synthesis, so CRITICAL work and the device workers get
//! the cores first when everything is busy.
//!
//! Linux nice values are per thread: a thread (or pool) set here keeps its value, the rest of
//! the process is untouched. Best effort: where the platform refuses, the thread runs at its
//! normal priority and [`lower_current_thread`] says why.

use thread_priority::{
    set_current_thread_priority, NormalThreadSchedulePolicy, ThreadPriority, ThreadPriorityValue,
    ThreadSchedulePolicy,
};

/// The portable priority value that maps to nice `nice` under the normal policy.
fn priority_for_nice(nice: u8) -> Option<ThreadPriority> {
    let normal = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
    (ThreadPriorityValue::MIN.into()..=u8::from(ThreadPriorityValue::MAX))
        .filter_map(|p| ThreadPriorityValue::try_from(p).ok())
        .map(ThreadPriority::Crossplatform)
        .find(|t| t.to_posix(normal).ok() == Some(i32::from(nice)))
}

/// Sets the calling thread's nice value to `nice` (0 leaves it alone).
pub(crate) fn lower_current_thread(nice: u8) -> Result<(), String> {
    if nice == 0 {
        return Ok(());
    }
    let p =
        priority_for_nice(nice).ok_or_else(|| format!("no thread priority maps to nice {nice}"))?;
    set_current_thread_priority(p).map_err(|e| format!("setting nice {nice}: {e:?}"))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Field 19 of /proc/thread-self/stat: this thread's nice value.
    fn current_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
        after_comm.split(' ').nth(16).unwrap().parse().unwrap()
    }

    #[test]
    fn a_thread_lowers_its_own_nice_and_no_other() {
        for nice in [1u8, 5, 10, 19] {
            assert!(priority_for_nice(nice).is_some(), "nice {nice}");
        }
        let before = current_nice();
        let lowered = std::thread::spawn(|| {
            lower_current_thread(10).unwrap();
            current_nice()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, 10);
        assert_eq!(current_nice(), before, "the caller's thread is unchanged");
    }
}
