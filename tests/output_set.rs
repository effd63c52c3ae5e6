//! The output folder as a set (issue 15 items 5 and 8, issue 13's manifest): faults in `--out`
//! are bad input found before any work; every run writes `manifest.json`, marks a set cut short
//! as incomplete, removes its own stale files, and SIGTERM never leaves half a file.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

fn tco() -> Command {
    let mut c = Command::cargo_bin("tco-sim").expect("binary");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Run the starter scenario (analytic: quick) into `out` with these report formats.
fn run(out: &Path, report: &str) -> std::process::Output {
    tco()
        .args([
            "run",
            "scenarios/starter.toml",
            "--analytic",
            "--quiet",
            "--report",
            report,
        ])
        .arg("--out")
        .arg(out)
        .output()
        .expect("runs")
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).expect("manifest"))
        .expect("manifest is JSON")
}

fn listed(m: &Value) -> Vec<String> {
    m["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["name"].as_str().expect("name").to_string())
        .collect()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn out_naming_an_existing_file_is_bad_input_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "keep").unwrap();
    let o = run(&file, "json");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("taken") && e.contains("is a file"), "{e}");
    assert!(e.contains("--out"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
}

#[test]
fn out_under_a_file_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let o = run(&dir.path().join("f/sub"), "json");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be created"), "{}", stderr(&o));
}

#[test]
fn out_where_nothing_can_be_written_is_bad_input() {
    let o = run(Path::new("/proc/tco-sim-out"), "json");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/proc/tco-sim-out"), "{}", stderr(&o));
}

#[test]
fn a_run_lists_its_files_and_removes_its_own_stale_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    assert!(run(&out, "json,csv,svg").status.success());
    let m = manifest(&out);
    assert_eq!(m["status"], "complete");
    let first = listed(&m);
    assert!(first.contains(&"results.json".into()) && first.iter().any(|f| f.ends_with(".svg")));
    for f in &first {
        let bytes = std::fs::metadata(out.join(f)).unwrap().len();
        let entry = m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == f.as_str());
        assert_eq!(entry.unwrap()["bytes"].as_u64(), Some(bytes), "{f}");
    }
    // A file of the user's in the same folder is never touched.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    assert!(run(&out, "json").status.success());
    let m = manifest(&out);
    assert_eq!(listed(&m), vec!["results.json".to_string()]);
    for f in first.iter().filter(|f| *f != "results.json") {
        assert!(!out.join(f).exists(), "stale {f} was left behind");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn sigterm_leaves_finished_files_and_an_incomplete_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut child = tco()
        .args([
            "run",
            "scenarios/embedding-api.toml",
            "--analytic",
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .spawn()
        .expect("spawns");
    // Wait until the set has begun (the manifest is written first), then interrupt it while the
    // charts and the PDF are being drawn.
    let begun = (0..2000).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(5));
        out.join("results.json").exists()
    });
    assert!(begun, "the run never started writing");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().expect("waits");
    let m = manifest(&out);
    if status.success() {
        // The run won the race and finished first: then its set is complete.
        assert_eq!(m["status"], "complete");
    } else {
        assert_eq!(status.code(), Some(130), "{status:?}");
        assert_eq!(m["status"], "incomplete");
    }
    // Whatever the moment: no temporary file, and every listed file is whole.
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "temporary {name} left behind");
    }
    for f in listed(&m) {
        let len = std::fs::metadata(out.join(&f)).unwrap().len();
        let want = m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == f.as_str());
        assert_eq!(want.unwrap()["bytes"].as_u64(), Some(len), "{f}");
    }
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
            .expect("results.json is whole");
    assert_eq!(json["schema_version"], 3);
}
