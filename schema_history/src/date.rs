//! Calendar dates (proleptic Gregorian, no time zone): enough arithmetic for the windows.
use std::fmt;
use std::str::FromStr;

use crate::Error;

/// A calendar day, `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u32,
    day: u32,
}

/// English month names, as the fallback expiry comments spell them.
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

impl Date {
    /// A date from its parts; `None` when the day does not exist.
    pub fn new(year: i32, month: u32, day: u32) -> Option<Date> {
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// Today in UTC, from the system clock.
    pub fn today() -> Date {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Date::from_days(i64::try_from(secs / 86_400).unwrap_or(0))
    }

    /// The year in full (`2026`, not `26`).
    pub fn year(self) -> i32 {
        self.year
    }

    /// The month, 1-12.
    pub fn month(self) -> u32 {
        self.month
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    pub fn days(self) -> i64 {
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date `days` days after 1970-01-01.
    pub fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date { year, month, day }
    }

    /// This date plus `n` days (negative goes back).
    pub fn add_days(self, n: i64) -> Date {
        Date::from_days(self.days() + n)
    }

    /// Days from `earlier` to `self` (negative when `earlier` is later).
    pub fn days_since(self, earlier: Date) -> i64 {
        self.days() - earlier.days()
    }

    /// This date plus `n` calendar months, the day clamped to the target month's length
    /// (2026-08-31 + 6 months = 2027-02-28).
    pub fn add_months(self, n: i32) -> Date {
        let index = self.year * 12 + (self.month as i32 - 1) + n;
        let year = index.div_euclid(12);
        let month = (index.rem_euclid(12) + 1) as u32;
        let day = self.day.min(days_in_month(year, month));
        Date { year, month, day }
    }

    /// The first day of this date's month.
    pub fn first_of_month(self) -> Date {
        Date { day: 1, ..self }
    }

    /// `November 2026`.
    pub fn month_year(self) -> String {
        let name = MONTHS.get(self.month as usize - 1).copied().unwrap_or("?");
        format!("{name} {}", self.year)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl FromStr for Date {
    type Err = Error;

    /// Parses `YYYY-MM-DD`; a longer RFC 3339 timestamp is accepted and cut to its date.
    fn from_str(s: &str) -> Result<Date, Error> {
        let bad = || Error::BadDate(s.to_owned());
        let head = s.get(..10).ok_or_else(bad)?;
        if s.len() > 10 && !s.get(10..).unwrap_or("").starts_with(['T', 't', ' ']) {
            return Err(bad());
        }
        let mut parts = head.split('-');
        let (Some(y), Some(m), Some(d), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return Err(bad());
        }
        let year = y.parse().map_err(|_| bad())?;
        let month = m.parse().map_err(|_| bad())?;
        let day = d.parse().map_err(|_| bad())?;
        Date::new(year, month, day).ok_or_else(bad)
    }
}

impl serde::Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Date {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_arithmetic() {
        let d: Date = "2026-11-29".parse().unwrap();
        assert_eq!(Date::from_days(d.days()), d);
        assert_eq!(d.add_days(14).to_string(), "2026-12-13");
        assert_eq!(d.add_months(6).to_string(), "2027-05-29");
        let e: Date = "2026-08-31".parse().unwrap();
        assert_eq!(e.add_months(6).to_string(), "2027-02-28");
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(d.month_year(), "November 2026");
        assert!("2026-02-30".parse::<Date>().is_err());
        assert!("2026-1-01".parse::<Date>().is_err());
        assert_eq!(
            "2026-11-29T10:00:00Z".parse::<Date>().unwrap().to_string(),
            "2026-11-29"
        );
    }
}
