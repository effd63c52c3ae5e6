//! What the machine says about itself: CPU model, logical CPUs, SIMD features, clock, cache and
//! memory sizes, read from `/proc/cpuinfo`, `/proc/meminfo` and sysfs (Linux). Every field is
//! optional where the OS may hide it (containers, VMs, other systems); the parsers take text,
//! so they are tested without the files.

use std::path::Path;

use super::kernels::Isa;

/// Where a clock figure came from; a VM usually shows the nominal (TSC) clock, not the clock a
/// busy core runs at, which is why the summary names the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Clock {
    pub ghz: f64,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CpuInfo {
    /// `model name` on x86; the implementer and part decoded from the MIDR on aarch64.
    pub model: String,
    pub arch: &'static str,
    /// Logical CPUs this process may run on (its affinity mask).
    pub logical_cpus: usize,
    /// Distinct `physical id` values (sockets); 1 when not shown.
    pub sockets: usize,
    /// SIMD features the calibration cares about, as the OS names them.
    pub simd: Vec<String>,
    pub clock: Option<Clock>,
    /// Size of the largest cache level, in bytes.
    pub llc_bytes: Option<u64>,
    /// The level-2 (data or unified) cache of cpu0 and the last level above it, as sysfs
    /// shows them: size and how many logical CPUs share each.
    pub l2: Option<Cache>,
    pub llc: Option<Cache>,
    /// The `hypervisor` flag is set (a VM): sysfs then lists only this VM's CPUs as sharing a
    /// cache that neighbours on the host share too.
    pub virtualized: bool,
    pub mem_total_bytes: Option<u64>,
    pub mem_available_bytes: Option<u64>,
}

/// One cache level of cpu0 as sysfs shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cache {
    pub level: u32,
    pub bytes: u64,
    /// Logical CPUs sharing it (`shared_cpu_list`), at least 1.
    pub shared_by: usize,
}

/// The SIMD flags worth reporting, in the OS's spelling (x86 `flags`, aarch64 `Features`).
const SIMD_FLAGS: &[&str] = &[
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "asimd",
    "asimddp",
    "asimdhp",
    "sve",
    "sve2",
    "i8mm",
    "bf16",
];

impl CpuInfo {
    /// Read everything available on this machine.
    pub fn detect() -> CpuInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let parsed = parse_cpuinfo(&cpuinfo);
        let sysfs_max =
            std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .map(|khz| Clock {
                    ghz: khz / 1e6,
                    source: "sysfs cpufreq/cpuinfo_max_freq (highest clock the OS may set)".into(),
                });
        let clock = sysfs_max.or_else(|| {
            parsed.mhz.map(|mhz| Clock {
                ghz: mhz / 1e3,
                source:
                    "/proc/cpuinfo `cpu MHz` (in a VM often the nominal clock, not the turbo clock)"
                        .into(),
            })
        });
        let logical = core_affinity::get_core_ids()
            .map(|v| v.len())
            .filter(|&n| n > 0)
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1);
        let mut simd: Vec<String> = SIMD_FLAGS
            .iter()
            .filter(|f| parsed.flags.iter().any(|g| g == *f))
            .map(|f| f.to_string())
            .collect();
        if simd.is_empty() {
            // No flags line (not Linux): report what the run-time detection found.
            simd = [Isa::Avx512Vnni, Isa::Avx512, Isa::Avx2Fma, Isa::Neon]
                .iter()
                .filter(|i| i.available())
                .map(|i| i.label().to_string())
                .collect();
        }
        CpuInfo {
            model: parsed.model.unwrap_or_else(|| "unknown CPU".into()),
            arch: std::env::consts::ARCH,
            logical_cpus: logical,
            sockets: parsed.sockets.max(1),
            simd,
            clock,
            llc_bytes: largest_cache(Path::new("/sys/devices/system/cpu/cpu0/cache")),
            l2: cache_levels(Path::new("/sys/devices/system/cpu/cpu0/cache"))
                .into_iter()
                .find(|c| c.level == 2),
            llc: cache_levels(Path::new("/sys/devices/system/cpu/cpu0/cache"))
                .into_iter()
                .filter(|c| c.level >= 3)
                .max_by_key(|c| (c.level, c.bytes)),
            virtualized: parsed.flags.iter().any(|f| f == "hypervisor"),
            mem_total_bytes: meminfo_field(&meminfo, "MemTotal"),
            mem_available_bytes: meminfo_field(&meminfo, "MemAvailable"),
        }
    }

    pub fn has(&self, flag: &str) -> bool {
        self.simd.iter().any(|f| f == flag)
    }
}

/// What `/proc/cpuinfo` tells, from the first processor block (they agree on one-socket
/// machines; `physical id` is counted over all blocks).
#[derive(Debug, Default, PartialEq)]
pub struct ParsedCpuinfo {
    pub model: Option<String>,
    pub mhz: Option<f64>,
    pub flags: Vec<String>,
    pub sockets: usize,
}

pub fn parse_cpuinfo(text: &str) -> ParsedCpuinfo {
    let mut out = ParsedCpuinfo::default();
    let mut sockets = std::collections::BTreeSet::new();
    let (mut implementer, mut part) = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "model name" if out.model.is_none() => out.model = Some(value.to_string()),
            "cpu MHz" if out.mhz.is_none() => out.mhz = value.parse().ok(),
            "flags" | "Features" if out.flags.is_empty() => {
                out.flags = value.split_whitespace().map(String::from).collect();
            }
            "physical id" => {
                sockets.insert(value.to_string());
            }
            "CPU implementer" if implementer.is_none() => implementer = parse_hex(value),
            "CPU part" if part.is_none() => part = parse_hex(value),
            _ => {}
        }
    }
    if out.model.is_none()
        && let (Some(i), Some(p)) = (implementer, part)
    {
        out.model = Some(midr_name(i, p));
    }
    out.sockets = sockets.len().max(1);
    out
}

fn parse_hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// Name an aarch64 core from the MIDR implementer and part numbers (Arm's TRMs; Ampere's
/// documentation for its own cores). Unknown pairs are shown as numbers.
pub fn midr_name(implementer: u32, part: u32) -> String {
    let name = match (implementer, part) {
        (0x41, 0xd0c) => Some("Arm Neoverse N1 (e.g. Ampere Altra, AWS Graviton2)"),
        (0x41, 0xd40) => Some("Arm Neoverse V1 (e.g. AWS Graviton3)"),
        (0x41, 0xd49) => Some("Arm Neoverse N2"),
        (0x41, 0xd4f) => Some("Arm Neoverse V2 (e.g. AWS Graviton4, NVIDIA Grace)"),
        (0x41, 0xd8e) => Some("Arm Neoverse N3"),
        (0xc0, 0xac3) => Some("Ampere AmpereOne"),
        (0x61, _) => Some("Apple silicon"),
        _ => None,
    };
    match name {
        Some(n) => format!("{n} [MIDR implementer 0x{implementer:02x}, part 0x{part:03x}]"),
        None => format!("aarch64 CPU [MIDR implementer 0x{implementer:02x}, part 0x{part:03x}]"),
    }
}

/// `MemTotal:  24252784 kB` → bytes.
pub fn meminfo_field(text: &str, field: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    })
}

/// sysfs cache sizes: `491520K`, `2048K`, `32M` → bytes.
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1024 * 1024),
        'G' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The size of the highest-level cache under `dir` (`index*/level`, `index*/size`).
fn largest_cache(dir: &Path) -> Option<u64> {
    let mut best: Option<(u32, u64)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        let level = std::fs::read_to_string(p.join("level"))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        let size = std::fs::read_to_string(p.join("size"))
            .ok()
            .and_then(|s| parse_cache_size(&s));
        if let (Some(l), Some(sz)) = (level, size)
            && best.is_none_or(|(bl, bs)| (l, sz) > (bl, bs))
        {
            best = Some((l, sz));
        }
    }
    best.map(|(_, s)| s)
}

/// The data and unified cache levels under `dir` (`index*/level`, `type`, `size`,
/// `shared_cpu_list`), instruction caches left out, lowest level first.
fn cache_levels(dir: &Path) -> Vec<Cache> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let read = |p: &Path, f: &str| std::fs::read_to_string(p.join(f)).ok();
    let mut v: Vec<Cache> = entries
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            if read(&p, "type")?.trim() == "Instruction" {
                return None;
            }
            Some(Cache {
                level: read(&p, "level")?.trim().parse().ok()?,
                bytes: parse_cache_size(&read(&p, "size")?)?,
                shared_by: read(&p, "shared_cpu_list")
                    .map_or(1, |l| cpu_list_len(&l))
                    .max(1),
            })
        })
        .collect();
    v.sort_by_key(|c| (c.level, c.bytes));
    v
}

/// How many CPUs a sysfs CPU list names ("0-3,8-11" → 8).
pub fn cpu_list_len(list: &str) -> usize {
    list.trim()
        .split(',')
        .filter(|r| !r.is_empty())
        .map(|r| match r.split_once('-') {
            Some((a, b)) => match (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => usize::from(r.trim().parse::<usize>().is_ok()),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_count_their_cpus() {
        assert_eq!(cpu_list_len("0-3,8-11\n"), 8);
        assert_eq!(cpu_list_len("0"), 1);
        assert_eq!(cpu_list_len("0,2,4"), 3);
        assert_eq!(cpu_list_len(""), 0);
        assert_eq!(cpu_list_len("garbage"), 0);
    }

    #[test]
    fn cache_levels_read_a_sysfs_tree() {
        let d = tempfile::tempdir().unwrap();
        for (i, level, ty, size, shared) in [
            (0, "1", "Data", "48K", "0-1"),
            (1, "1", "Instruction", "32K", "0-1"),
            (2, "2", "Unified", "2048K", "0-1"),
            (3, "3", "Unified", "105M", "0-111"),
        ] {
            let p = d.path().join(format!("index{i}"));
            std::fs::create_dir(&p).unwrap();
            for (f, v) in [
                ("level", level),
                ("type", ty),
                ("size", size),
                ("shared_cpu_list", shared),
            ] {
                std::fs::write(p.join(f), format!("{v}\n")).unwrap();
            }
        }
        let c = cache_levels(d.path());
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(
            c[1],
            Cache {
                level: 2,
                bytes: 2048 * 1024,
                shared_by: 2
            }
        );
        assert_eq!(c[2].shared_by, 112);
        assert_eq!(c[2].bytes, 105 * 1024 * 1024);
    }

    #[test]
    fn x86_cpuinfo() {
        let t = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2600.000\nphysical id\t: 0\nflags\t\t: fpu avx2 fma avx512f avx512_vnni amx_int8\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\nphysical id\t: 0\n";
        let p = parse_cpuinfo(t);
        assert_eq!(p.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert_eq!(p.mhz, Some(2600.0));
        assert!(p.flags.iter().any(|f| f == "avx512_vnni"));
        assert_eq!(p.sockets, 1);
    }

    #[test]
    fn altra_cpuinfo_names_the_core_from_the_midr() {
        let t = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n";
        let p = parse_cpuinfo(t);
        assert!(p.model.unwrap().starts_with("Arm Neoverse N1"));
        assert!(p.flags.iter().any(|f| f == "asimddp"));
        assert_eq!(p.mhz, None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_cache_size("491520K\n"), Some(480 * 1024 * 1024));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(
            meminfo_field("MemTotal:       24252784 kB\n", "MemTotal"),
            Some(24252784 * 1024)
        );
        assert_eq!(meminfo_field("MemTotal: x kB\n", "MemTotal"), None);
    }
}
