//! The docs' tables of knobs are the declarations' tables: the cost assumptions in
//! `docs/scenario-format.md` come from `cost::inputs`, the cited profile numbers in
//! `docs/profile-format.md` from `hardware::numbers`. A declaration added, removed or changed
//! without its docs fails here, and the failure prints the table to paste; `BLESS=1 cargo test
//! --test knobs_docs` writes it into the docs instead.

use std::path::Path;

/// The text between `<!-- {name}:start -->` and `<!-- {name}:end -->` in a docs file.
fn between_markers(file: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let start = format!("<!-- {name}:start -->\n");
    let end = format!("<!-- {name}:end -->");
    let from = text
        .find(&start)
        .unwrap_or_else(|| panic!("{file} has no `{}` line", start.trim()))
        + start.len();
    let to = text[from..]
        .find(&end)
        .unwrap_or_else(|| panic!("{file} has no `{end}` line after the start marker"))
        + from;
    text[from..to].to_string()
}

fn assert_docs(file: &str, name: &str, expected: &str) {
    let actual = between_markers(file, name);
    if actual != expected && std::env::var_os("BLESS").is_some() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen(&actual, expected, 1)).unwrap();
        return;
    }
    assert!(
        actual == expected,
        "the `{name}` table in {file} disagrees with the declarations; replace it with:\n\n{expected}"
    );
}

#[test]
fn cost_assumptions_table_matches_the_declarations() {
    let table = tco_sim::cost::inputs::docs_table();
    assert_docs("docs/scenario-format.md", "cost-inputs", &table);
    for c in tco_sim::cost::inputs::COST_INPUTS {
        assert!(table.contains(&format!("| `{}` |", c.key)), "{}", c.key);
    }
}

#[test]
fn profile_numbers_table_matches_the_declarations() {
    let table = tco_sim::hardware::numbers::docs_table();
    assert_docs("docs/profile-format.md", "profile-numbers", &table);
    for n in tco_sim::hardware::numbers::PROFILE_NUMBERS {
        assert!(table.contains(&format!("| `{}` |", n.key)), "{}", n.key);
    }
}
