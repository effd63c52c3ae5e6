//! Calendar and unit constants, and the one civil-date routine: the foundation every later
//! stage (traffic, cost, capacity, calibrate, report) reads instead of writing 8760 or 86 400
//! again.
//!
//! The model's year has no leap day: 365 days of 24 hours. Traffic curves are 8,760 hourly
//! rates and cost formulas bill 8,760 hours a year, so both must use the same year; a leap
//! year would add 0.27 % to one side only.

/// Seconds in a minute.
pub const MINUTE_S: f64 = 60.0;
/// Seconds in an hour.
pub const HOUR_S: f64 = 3_600.0;
/// Hours in a day.
pub const DAY_HOURS: f64 = 24.0;
/// Seconds in a day.
pub const DAY_S: f64 = DAY_HOURS * HOUR_S;
/// Days in a year (no leap days), as a count.
pub const YEAR_DAYS: usize = 365;
/// Hours in a year, as a count: the length of a year of hourly rates.
pub const YEAR_HOURS: usize = YEAR_DAYS * 24;
/// Days in a year (no leap days), for rates per day.
pub const DAYS_PER_YEAR: f64 = YEAR_DAYS as f64;
/// Hours in a (non-leap) year, for prices per hour.
pub const HOURS_PER_YEAR: f64 = YEAR_HOURS as f64;
/// Seconds in a year.
pub const YEAR_S: f64 = HOURS_PER_YEAR * HOUR_S;

/// Whole seconds in a minute, for splitting Unix time into fields.
pub const MINUTE_SECONDS: u64 = 60;
/// Whole seconds in an hour.
pub const HOUR_SECONDS: u64 = 60 * MINUTE_SECONDS;
/// Whole seconds in a day.
pub const DAY_SECONDS: u64 = 24 * HOUR_SECONDS;

/// A date in the proleptic Gregorian calendar. `Display` prints it as ISO 8601, `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CivilDate {
    pub year: i64,
    /// 1–12.
    pub month: u32,
    /// 1–31.
    pub day: u32,
}

impl CivilDate {
    /// The date `days` days after 1970-01-01 (negative: before it).
    ///
    /// H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (2013), `civil_from_days`:
    /// eras of 400 years (146,097 days) starting on 1 March, so the leap day is the last day of
    /// the era's year.
    pub fn from_days(days: i64) -> CivilDate {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        CivilDate {
            year: yoe + era * 400 + i64::from(month <= 2),
            month: month as u32,
            day: day as u32,
        }
    }

    /// The date of the Unix time `secs` (UTC).
    pub fn from_unix(secs: u64) -> CivilDate {
        CivilDate::from_days((secs / DAY_SECONDS) as i64)
    }

    /// Days since 1970-01-01: the inverse of [`CivilDate::from_days`] (Hinnant's
    /// `days_from_civil`). The date need not be valid; check it with [`CivilDate::is_valid`].
    pub fn days(&self) -> i64 {
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = if m <= 2 { self.year - 1 } else { self.year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Whether the month is 1–12 and the day exists in that month.
    pub fn is_valid(&self) -> bool {
        (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
    }
}

impl std::fmt::Display for CivilDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Whether `year` has a 29 February (Gregorian rule).
pub fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1–12) of `year`; 0 for a month outside 1–12.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_year_is_365_days_of_24_hours() {
        assert_eq!(YEAR_HOURS, 8_760);
        assert_eq!(HOURS_PER_YEAR, 8_760.0);
        assert_eq!(DAY_S, 86_400.0);
        assert_eq!(DAY_SECONDS as f64, DAY_S);
        assert_eq!(HOUR_SECONDS as f64, HOUR_S);
        assert_eq!(MINUTE_SECONDS as f64, MINUTE_S);
        assert_eq!(YEAR_S, 31_536_000.0);
    }

    #[test]
    fn civil_dates_from_days() {
        assert_eq!(CivilDate::from_days(0).to_string(), "1970-01-01");
        assert_eq!(CivilDate::from_days(11_016).to_string(), "2000-02-29");
        assert_eq!(CivilDate::from_days(20_786).to_string(), "2026-11-29");
        assert_eq!(CivilDate::from_days(-1).to_string(), "1969-12-31");
        // 2023-11-16 18:15:46 UTC, checked with `date -u -d @1700158546`.
        assert_eq!(
            CivilDate::from_unix(1_700_158_546).to_string(),
            "2023-11-16"
        );
    }

    #[test]
    fn days_invert_civil_dates_across_leap_rules() {
        for days in (-800_000..800_000).step_by(997) {
            let c = CivilDate::from_days(days);
            assert!(c.is_valid(), "{c:?}");
            assert_eq!(c.days(), days, "{c}");
        }
        let feb29 = CivilDate {
            year: 2024,
            month: 2,
            day: 29,
        };
        assert_eq!(feb29.days(), 19_782);
        assert!(feb29.is_valid());
        assert!(
            !CivilDate {
                year: 2023,
                ..feb29
            }
            .is_valid()
        );
        assert!(
            !CivilDate {
                year: 1900,
                ..feb29
            }
            .is_valid()
        );
        assert!(
            CivilDate {
                year: 2000,
                ..feb29
            }
            .is_valid()
        );
        assert!(!CivilDate { month: 13, ..feb29 }.is_valid());
        assert!(!CivilDate { day: 0, ..feb29 }.is_valid());
    }
}
