//! Every shipped hardware profile (issue 10 item 6): read from `hardware-profiles/` on disk (not
//! only the copies embedded at build time), it validates under its file name, is embedded in the
//! binary, and every number in it carries a source title and a date; an estimate or a derived
//! number also carries a note (why it is an estimate, or its arithmetic). `tco-sim validate`
//! accepts each file.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;
use tco_sim::cite::Basis;
use tco_sim::hardware::{Profile, embedded_names};
use tco_sim::input::SourceFile;

fn shipped_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("hardware-profiles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("hardware-profiles/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_profile_validates_and_sources_dates_and_explains_every_number() {
    let files = shipped_files();
    // The 13 profiles before issue 10 plus the 9 it added; a file lost in a merge fails here.
    assert!(files.len() >= 22, "only {} shipped profiles", files.len());
    let embedded = embedded_names();
    for path in &files {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap();
        assert!(embedded.contains(&stem), "{stem} is not embedded");
        let text = std::fs::read_to_string(path).unwrap();
        let src = SourceFile::from_text(path.display().to_string(), text);
        let p = Profile::from_source(&src, Some(stem)).unwrap_or_else(|e| panic!("{e}"));
        let numbers = p.cited_numbers();
        assert!(numbers.len() >= 9, "{stem}: {} numbers", numbers.len());
        for (field, c) in numbers {
            assert!(
                !c.source.title.trim().is_empty(),
                "{stem}: {field} has no source"
            );
            assert!(
                tco_sim::cite::is_date(&c.source.date),
                "{stem}: {field} has no date (`{}`)",
                c.source.date
            );
            assert!(c.value.is_finite(), "{stem}: {field} = {}", c.value);
            if matches!(c.basis, Basis::Estimate | Basis::Derived) {
                assert!(
                    c.note.as_deref().is_some_and(|n| n.trim().len() >= 10),
                    "{stem}: {field} is {:?} without a note saying why",
                    c.basis
                );
            }
        }
        assert!(!p.options().is_empty(), "{stem} has no deployment option");
    }
}

#[test]
fn validate_accepts_every_shipped_profile_file() {
    let files = shipped_files();
    let mut cmd = Command::cargo_bin("tco-sim").unwrap();
    cmd.arg("validate").args(&files);
    let mut a = cmd.assert().success();
    for path in &files {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap();
        a = a.stdout(predicate::str::contains(format!("profile `{stem}`")));
    }
}
