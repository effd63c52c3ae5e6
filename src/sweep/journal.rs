//! The record of finished points that makes a sweep resumable.
//!
//! A Parquet file is readable only once its footer is written, so a shard cannot append to it as
//! points finish. Instead each finished point is appended to a journal beside the output, one
//! JSON line per point, and the Parquet file is written from the journal at the end. A sweep
//! killed part-way (a preempted Slurm task, a Ctrl-C) and run again reads the journal and skips
//! what it holds. A torn last line — the process died mid-write — is cut off and that point runs
//! again. The first line names the sweep's fingerprint and shard, so a journal is never resumed
//! by a different sweep.
//!
//! Numbers go through serde_json with `float_roundtrip`, so a value read back is bit-for-bit the
//! value written, and a resumed sweep's rows equal an uninterrupted one's.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::pipeline::TierRow;
use crate::input::InputError;

/// The journal's first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub sweep_file: String,
    pub fingerprint: String,
    pub shard: String,
}

/// One finished point.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    point: u32,
    rows: Vec<TierRow>,
}

/// An open journal, appended to from the worker threads.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
}

/// Open the journal at `path` for `header`'s sweep, creating it if absent; returns it with the
/// points it already holds.
pub fn open(path: &Path, header: &Header) -> Result<(Journal, BTreeMap<u32, Vec<TierRow>>)> {
    let (done, valid_len) = if path.exists() {
        read_valid(path, header)?
    } else {
        (BTreeMap::new(), 0)
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    // Cut a torn tail (or a torn header) so appends start on a clean line.
    file.set_len(valid_len)
        .with_context(|| format!("truncating {}", path.display()))?;
    use std::io::Seek;
    file.seek(std::io::SeekFrom::End(0))?;
    if valid_len == 0 {
        let mut line = serde_json::to_string(header)?;
        line.push('\n');
        file.write_all(line.as_bytes())?;
        file.flush()?;
    }
    Ok((
        Journal {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        },
        done,
    ))
}

/// Read every whole, parseable entry; return them and the length of the file they fill.
fn read_valid(path: &Path, header: &Header) -> Result<(BTreeMap<u32, Vec<TierRow>>, u64)> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut valid_len = 0u64;
    let mut done = BTreeMap::new();
    let mut first = true;
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        if n == 0 || !line.ends_with('\n') {
            break;
        }
        if first {
            first = false;
            let Ok(found) = serde_json::from_str::<Header>(&line) else {
                break;
            };
            // The file's spelling may differ between runs (`./s.toml`, an absolute path); the
            // fingerprint and the shard decide.
            if (&found.fingerprint, &found.shard) != (&header.fingerprint, &header.shard) {
                return Err(InputError::new(format!(
                    "{} is the journal of another sweep ({} shard {}, fingerprint {}), not of this one ({} shard {}, fingerprint {})",
                    path.display(),
                    found.sweep_file,
                    found.shard,
                    found.fingerprint,
                    header.sweep_file,
                    header.shard,
                    header.fingerprint
                ))
                .with_help("the sweep file, a scenario or the tool changed since it ran: choose another --out, or delete the folder to start over")
                .into());
            }
        } else {
            let Ok(entry) = serde_json::from_str::<Entry>(&line) else {
                break;
            };
            done.entry(entry.point).or_insert(entry.rows);
        }
        valid_len += n as u64;
    }
    Ok((done, valid_len))
}

impl Journal {
    /// Record a finished point: one line, written and flushed whole, so it survives the process
    /// being killed right after.
    pub fn append(&self, point: u32, rows: &[TierRow]) -> Result<()> {
        #[derive(Serialize)]
        struct EntryRef<'a> {
            point: u32,
            rows: &'a [TierRow],
        }
        let mut line = serde_json::to_string(&EntryRef { point, rows })?;
        line.push('\n');
        let mut f = self
            .file
            .lock()
            .map_err(|_| anyhow::anyhow!("a worker panicked while writing the journal"))?;
        f.write_all(line.as_bytes())
            .and_then(|()| f.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }

    /// Everything the journal holds now, read back from disk.
    pub fn entries(&self, header: &Header) -> Result<BTreeMap<u32, Vec<TierRow>>> {
        Ok(read_valid(&self.path, header)?.0)
    }
}
