//! Default locations, resolved once at start from the command line or the environment.

use std::path::PathBuf;

/// The cache folder: the given one, else `$XDG_CACHE_HOME/cuzk`, else `~/.cache/cuzk`, else
/// `./.cuzk-cache`.
pub fn cache_dir(explicit: Option<PathBuf>) -> PathBuf {
    if let Some(p) = explicit {
        return p;
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("cuzk");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(h).join(".cache").join("cuzk");
    }
    PathBuf::from(".cuzk-cache")
}
