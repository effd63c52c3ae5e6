//! The one file writer: every file tco-sim writes (the report's JSON, CSV, charts and PDF, a
//! calibrated profile, a starter scenario) goes through [`write_atomic`], so a reader — a
//! dashboard polling `results.json`, a second run reading a profile — never sees half a file.
//!
//! Foundation stage: it knows nothing of what it writes. [`finite`] checks a value holds no inf
//! or NaN before it is written.

pub mod finite;

use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` so that a reader never sees half of it: write a temporary file in
/// the same folder (a rename is atomic only within one file system), flush it to disk, then
/// rename it over the target (atomic on POSIX file systems). Missing parent folders are
/// created. On failure the temporary file is removed and the target is left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // Held for the whole write and rename: an interrupted run waits for it (see
    // [`hold_writes`]), so the file being written is finished, never left half-done.
    let _writing = WRITING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    std::fs::create_dir_all(dir)?;
    let tmp = temporary(dir, &name.to_string_lossy());
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Best effort: the write already failed, and that error is the one to report.
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Write `text` to standard output and flush it. A reader that closed the pipe early
/// (`tco-sim accuracy | head`) comes back as an [`std::io::ErrorKind::BrokenPipe`] error, which
/// the binary ends on quietly ([`is_broken_pipe`]) — never the panic `print!` gives.
pub fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// `value` as pretty JSON and a newline on standard output, through [`print()`].
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(print(&text)?)
}

/// Whether `e` (or anything it wraps) is a write to a pipe whose reader has gone: the program
/// has nobody left to tell, so it stops without an error.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Taken by every write; [`hold_writes`] takes it to stop the writes.
static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Wait for the file being written (if any) to be finished and renamed into place, then keep
/// every later write from starting for as long as the guard lives. A signal handler takes it
/// before it exits the process, so SIGINT or SIGTERM never leaves half a file or a temporary.
pub fn hold_writes() -> std::sync::MutexGuard<'static, ()> {
    WRITING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A hidden name beside the target, unique per process so two runs writing into one folder do
/// not share a temporary file.
fn temporary(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(".{name}.{}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<std::ffi::OsString> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect()
    }

    #[test]
    fn replaces_the_target_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/results.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(names(p.parent().unwrap()).len(), 1);
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_and_keeps_the_target() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory cannot be replaced by a file: the rename fails after the
        // temporary file was written.
        let target = dir.path().join("busy");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), b"keep").unwrap();
        assert!(write_atomic(&target, b"new").is_err());
        assert_eq!(names(dir.path()), vec![std::ffi::OsString::from("busy")]);
        assert_eq!(std::fs::read(target.join("inside")).unwrap(), b"keep");
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let err = write_atomic(Path::new("/"), b"x").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    }
}
