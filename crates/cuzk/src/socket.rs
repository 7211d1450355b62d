//! The daemon's unix socket: private from its first moment, and never taken from a live
//! daemon.
//!
//! The socket is bound inside a fresh directory of mode 0700 beside the final path, set to
//! mode 0600 there, and then hard-linked into place, so no process can connect to it before
//! its mode is 0600 and a path that appeared meanwhile is not replaced. A socket already at
//! the path is removed only when nothing answers on it (left by a daemon that died); when a
//! process still accepts connections there, start-up fails and names that process.

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::Path;

use crate::CliError;

/// Binds a unix listener at `path` with mode 0600 (see the module docs).
pub async fn bind_private(path: &Path) -> Result<tokio::net::UnixListener, CliError> {
    let dir = path
        .parent()
        .ok_or_else(|| CliError::input(format!("{} has no parent directory", path.display())))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::input(format!("cannot create {}: {e}", dir.display())))?;
    remove_stale(path).await?;
    let private = dir.join(format!(".cuzk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&private);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&private)
        .map_err(|e| CliError::input(format!("cannot create {}: {e}", private.display())))?;
    let result = bind_in(&private, path);
    let _ = std::fs::remove_dir_all(&private);
    result
}

fn bind_in(private: &Path, path: &Path) -> Result<tokio::net::UnixListener, CliError> {
    let tmp = private.join("s");
    let l = tokio::net::UnixListener::bind(&tmp)
        .map_err(|e| CliError::input(format!("cannot listen on {}: {e}", path.display())))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| CliError::internal(format!("chmod {}: {e}", tmp.display())))?;
    std::fs::hard_link(&tmp, path).map_err(|e| {
        CliError::input(format!(
            "cannot listen on {}: {e} (another process created it while this one started)",
            path.display()
        ))
    })?;
    Ok(l)
}

/// Removes a socket at `path` that nothing answers on; refuses one a live process serves,
/// and anything that is not a socket.
async fn remove_stale(path: &Path) -> Result<(), CliError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        return Err(CliError::input(format!(
            "{} exists and is not a socket",
            path.display()
        )));
    }
    match tokio::net::UnixStream::connect(path).await {
        Ok(s) => {
            let who = match s.peer_cred().ok().and_then(|c| c.pid()) {
                Some(pid) => format!("process {pid} ({})", command_line(pid)),
                None => "a process this user cannot identify".to_owned(),
            };
            Err(CliError::input(format!(
                "{} is in use: {who} accepts connections on it; stop that daemon or set another \
                 server.listen",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => std::fs::remove_file(path)
            .map_err(|e| {
                CliError::input(format!("cannot remove the stale {}: {e}", path.display()))
            }),
        Err(e) => Err(CliError::input(format!(
            "{} exists and cannot be checked for a live daemon: {e}",
            path.display()
        ))),
    }
}

fn command_line(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "command line unreadable".to_owned())
}
