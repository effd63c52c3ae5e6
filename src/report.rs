//! Reports: the terminal summary, `results.json`, `results.csv` (and the charts and PDF), all
//! rendered from one [`RunResults`](crate::results::RunResults). Every number is printed by
//! [`crate::format`], so a figure reads the same in each; `app` writes the files with
//! [`crate::output::write_atomic`].

pub mod charts;
pub mod data;
pub mod fonts;
pub mod pdf;
pub mod profiles;
pub mod simulate;
pub mod table;
pub mod xlsx;
