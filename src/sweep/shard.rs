//! Which slice of a sweep this process runs: `--shard I/N`, or the index a cluster's scheduler
//! gives each task — a Slurm job array's `SLURM_ARRAY_TASK_*`, a Kubernetes Indexed Job's
//! `JOB_COMPLETION_INDEX` (whose count Kubernetes does not export, hence `--shard-count`).
//!
//! Points are dealt round-robin (point k to shard k mod N) rather than in contiguous blocks:
//! neighbouring points of a grid differ in one value and cost about the same, so dealing them out
//! evens the shards' run times when one axis (traffic, say) makes some points much slower.

use std::fmt;
use std::str::FromStr;

use crate::input::InputError;

/// Slice `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The whole sweep.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether point `k` belongs to this shard.
    pub fn holds(&self, point: u32) -> bool {
        point % self.count == self.index
    }

    fn new(index: u32, count: u32, from: &str) -> Result<Shard, InputError> {
        if count == 0 || index >= count {
            return Err(InputError::new(format!(
                "{from}: shard {index} of {count} does not exist"
            ))
            .with_help(format!(
                "the index runs from 0 to the count − 1 ({})",
                count.saturating_sub(1)
            )));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not I/N (e.g. 0/4)"))?;
        let parse = |x: &str| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{s}` is not I/N with whole numbers (e.g. 0/4)"))
        };
        Shard::new(parse(i)?, parse(n)?, "--shard").map_err(|e| {
            format!(
                "{}{}",
                e.message,
                e.help.as_ref().map_or(String::new(), |h| format!("; {h}"))
            )
        })
    }
}

/// The shard to run: the flag, else the scheduler's environment, else the whole sweep.
/// `env` reads a variable (a parameter so tests need not touch the process environment).
pub fn resolve(
    flag: Option<Shard>,
    count_flag: Option<u32>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard, InputError> {
    if let Some(s) = flag {
        return Ok(s);
    }
    let number = |name: &str| -> Result<Option<u32>, InputError> {
        env(name)
            .map(|v| {
                v.trim().parse::<u32>().map_err(|_| {
                    InputError::new(format!("{name}={v} is not a whole number"))
                        .with_help("it is set by the scheduler; check the job's environment")
                })
            })
            .transpose()
    };
    if let Some(i) = number("JOB_COMPLETION_INDEX")? {
        let Some(n) = count_flag else {
            return Err(InputError::new(format!(
                "JOB_COMPLETION_INDEX={i} is set but the number of shards is not"
            ))
            .with_help("pass --shard-count N with the Job's `completions`"));
        };
        return Shard::new(i, n, "JOB_COMPLETION_INDEX");
    }
    if let (Some(id), Some(n)) = (
        number("SLURM_ARRAY_TASK_ID")?,
        number("SLURM_ARRAY_TASK_COUNT")?,
    ) {
        // `--array=1-4` or `--array=0-7:2` number tasks from MIN in steps of STEP.
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        if id < min || (id - min) % step != 0 {
            return Err(InputError::new(format!(
                "SLURM_ARRAY_TASK_ID={id} is not MIN + k × STEP ({min} + k × {step})"
            ))
            .with_help("submit the array as a plain range, e.g. --array=0-3"));
        }
        if let Some(c) = count_flag.filter(|&c| c != n) {
            return Err(InputError::new(format!(
                "--shard-count {c} disagrees with SLURM_ARRAY_TASK_COUNT={n}"
            ))
            .with_help("under Slurm the array's size is the count; drop --shard-count"));
        }
        return Shard::new((id - min) / step, n, "SLURM_ARRAY_TASK_ID");
    }
    if let Some(n) = count_flag {
        return Err(
            InputError::new(format!("--shard-count {n} is given but no shard index is")).with_help(
                "run under a Kubernetes Indexed Job (JOB_COMPLETION_INDEX), or pass --shard I/N",
            ),
        );
    }
    Ok(Shard::WHOLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn flag_parses_and_rejects_out_of_range() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert!(
            "4/4"
                .parse::<Shard>()
                .unwrap_err()
                .contains("does not exist")
        );
        assert!("1/0".parse::<Shard>().is_err());
        assert!("a/4".parse::<Shard>().is_err());
        assert!("3".parse::<Shard>().is_err());
    }

    #[test]
    fn slurm_array_offsets_by_min_and_step() {
        let vars = [
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ];
        assert_eq!(
            resolve(None, None, &env(&vars)),
            Ok(Shard { index: 3, count: 4 })
        );
        let plain = [
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(
            resolve(None, None, &env(&plain)),
            Ok(Shard { index: 0, count: 4 })
        );
        assert!(resolve(None, Some(3), &env(&plain)).is_err());
    }

    #[test]
    fn kubernetes_index_needs_a_count() {
        let vars = [("JOB_COMPLETION_INDEX", "2")];
        assert_eq!(
            resolve(None, Some(5), &env(&vars)),
            Ok(Shard { index: 2, count: 5 })
        );
        let e = resolve(None, None, &env(&vars)).unwrap_err();
        assert!(e.help.as_deref().unwrap().contains("--shard-count"));
        assert!(resolve(None, Some(2), &env(&vars)).is_err());
    }

    #[test]
    fn the_flag_wins_and_nothing_means_the_whole_sweep() {
        let vars = [("JOB_COMPLETION_INDEX", "2")];
        let s = Shard { index: 1, count: 3 };
        assert_eq!(resolve(Some(s), None, &env(&vars)), Ok(s));
        assert_eq!(resolve(None, None, &env(&[])), Ok(Shard::WHOLE));
        assert!(resolve(None, Some(4), &env(&[])).is_err());
    }

    #[test]
    fn round_robin_deals_every_point_to_one_shard() {
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, count: 3 }).collect();
        for k in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.holds(k)).count(), 1);
        }
        assert!(shards[2].holds(5));
    }
}
