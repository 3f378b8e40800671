//! A job's schedule: five cron fields (minute, hour, day of month, month,
//! day of week) or a macro (`@hourly`, `@daily`, `@weekly`, `@monthly`,
//! `@yearly`), read in a time zone — and when it next fires.
//!
//! Daylight saving, as Vixie cron settled it, so a change neither skips
//! nor doubles a run: a time the spring change skips runs at the change
//! (02:30 → 03:00), a time the autumn change repeats runs at its first
//! occurrence only. A schedule whose hour is `*` (or a step over every
//! hour) fires by the clock on the wall instead: a skipped hour has no
//! run, a repeated hour has two, one an hour apart.

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime};
use chrono::{TimeZone, Timelike, Utc};

/// How far ahead a schedule is looked for before it is called "never"
/// (`0 0 30 2 *`): past a leap day's weekday cycle.
const HORIZON_DAYS: i64 = 366 * 8;

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    text: String,
    minutes: u64,
    hours: u32,
    days: u32,
    months: u16,
    weekdays: u8,
    /// The day of month was `*`: the day of week alone decides.
    any_day: bool,
    /// The day of week was `*`: the day of month alone decides.
    any_weekday: bool,
    /// Every hour matches: the wall clock decides at a DST change.
    every_hour: bool,
}

/// What is wrong with a schedule, in words that name the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schedule {text:?}: {what}")]
pub struct CronError {
    text: String,
    what: String,
}

/// The fields in order, with their bounds and names.
const FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
];

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

impl Schedule {
    /// Parses five fields or a macro.
    pub fn parse(text: &str) -> Result<Schedule, CronError> {
        let error = |what: String| CronError {
            text: text.to_string(),
            what,
        };
        let expanded = match text.trim() {
            "@hourly" => "0 * * * *",
            "@daily" | "@midnight" => "0 0 * * *",
            "@weekly" => "0 0 * * 0",
            "@monthly" => "0 0 1 * *",
            "@yearly" | "@annually" => "0 0 1 1 *",
            other if other.starts_with('@') => {
                return Err(error(format!(
                "{other} is not a macro hearth knows (@hourly, @daily, @weekly, @monthly, @yearly)"
            )))
            }
            other => other,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(error(format!(
                "{} field(s); a schedule has five: minute hour day-of-month month day-of-week \
                 (e.g. \"0 7 * * *\" for 07:00 every day)",
                fields.len()
            )));
        }
        let mut sets = [0u64; 5];
        for (i, field) in fields.iter().enumerate() {
            sets[i] = field_set(field, i).map_err(error)?;
        }
        // Day of week 7 is Sunday, as 0 is.
        let weekdays = (sets[4] & 0x7f) | ((sets[4] >> 7) & 1);
        Ok(Schedule {
            text: text.trim().to_string(),
            minutes: sets[0],
            hours: sets[1] as u32,
            days: sets[2] as u32,
            months: sets[3] as u16,
            weekdays: weekdays as u8,
            any_day: fields[2] == "*",
            any_weekday: fields[4] == "*",
            every_hour: sets[1] == (1 << 24) - 1,
        })
    }

    /// The schedule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn day_matches(&self, date: NaiveDate) -> bool {
        if self.months & (1 << date.month()) == 0 {
            return false;
        }
        let day = self.days & (1 << date.day()) != 0;
        let weekday = self.weekdays & (1 << date.weekday().num_days_from_sunday()) != 0;
        // Both restricted: either one (cron's rule); one `*`: the other.
        match (self.any_day, self.any_weekday) {
            (false, false) => day || weekday,
            (true, false) => weekday,
            _ => day,
        }
    }

    fn times(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..24u32)
            .filter(|h| self.hours & (1 << h) != 0)
            .flat_map(|h| {
                (0..60u32)
                    .filter(|m| self.minutes & (1 << m) != 0)
                    .map(move |m| (h, m))
            })
    }

    /// The first time after `after` the schedule fires in `zone`, or
    /// `None` when it never does (the 30th of February).
    pub fn next_after<Tz: TimeZone>(
        &self,
        zone: &Tz,
        after: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        let start = after.with_timezone(zone).date_naive() - Duration::days(1);
        for offset in 0..HORIZON_DAYS {
            let date = start + Duration::days(offset);
            if !self.day_matches(date) {
                continue;
            }
            for (h, m) in self.times() {
                let naive = date.and_time(NaiveTime::from_hms_opt(h, m, 0)?);
                for at in self.instants(zone, naive) {
                    if at > after {
                        return Some(at);
                    }
                }
            }
        }
        None
    }

    /// The instants a local time names: one, two in an autumn repeat (the
    /// first only, unless the hour is `*`), or in a spring gap the change
    /// itself (none, when the hour is `*`).
    fn instants<Tz: TimeZone>(&self, zone: &Tz, naive: NaiveDateTime) -> Vec<DateTime<Utc>> {
        match zone.from_local_datetime(&naive) {
            LocalResult::Single(t) => vec![t.with_timezone(&Utc)],
            LocalResult::Ambiguous(first, second) if self.every_hour => {
                vec![first.with_timezone(&Utc), second.with_timezone(&Utc)]
            }
            LocalResult::Ambiguous(first, _) => vec![first.with_timezone(&Utc)],
            LocalResult::None if self.every_hour => Vec::new(),
            LocalResult::None => {
                // The first minute that exists after the gap is the change.
                (1..=180)
                    .map(|m| naive + Duration::minutes(m))
                    .find_map(|later| match zone.from_local_datetime(&later) {
                        LocalResult::Single(t) => Some(t),
                        LocalResult::Ambiguous(t, _) => Some(t),
                        LocalResult::None => None,
                    })
                    .map(|t| {
                        let t = t.with_timezone(&Utc);
                        // Whole minutes: the change is on one.
                        t - Duration::seconds(i64::from(t.second()))
                    })
                    .into_iter()
                    .collect()
            }
        }
    }

    /// The schedule in words: "every day at 07:00", "every hour at :15",
    /// "Sundays at 18:00"; the fields themselves when words would not be
    /// shorter.
    pub fn describe(&self) -> String {
        let one = |set: u64, bound: u32| {
            (0..bound)
                .filter(|i| set & (1 << i) != 0)
                .collect::<Vec<_>>()
        };
        let minutes = one(self.minutes, 60);
        let hours = one(u64::from(self.hours), 24);
        let every_day = self.any_day && self.any_weekday && self.months == 0x1ffe;
        let every_minute_step = minutes.len() > 1
            && self.every_hour
            && every_day
            && minutes
                .windows(2)
                .all(|w| w[1] - w[0] == minutes[1] - minutes[0])
            && minutes[0] == 0
            && 60 % (minutes[1] - minutes[0]) == 0;
        if every_minute_step {
            return format!("every {} minutes", minutes[1] - minutes[0]);
        }
        if minutes.len() != 1 {
            return format!("cron \"{}\"", self.text);
        }
        let minute = minutes[0];
        if self.every_hour && every_day {
            return format!("every hour at :{minute:02}");
        }
        if hours.len() != 1 {
            return format!("cron \"{}\"", self.text);
        }
        let at = format!("{:02}:{minute:02}", hours[0]);
        let days = u64::from(self.weekdays);
        if every_day {
            return format!("every day at {at}");
        }
        if self.any_day && !self.any_weekday && self.months == 0x1ffe {
            if days == 0b011_1110 {
                return format!("weekdays at {at}");
            }
            let names = [
                "Sundays",
                "Mondays",
                "Tuesdays",
                "Wednesdays",
                "Thursdays",
                "Fridays",
                "Saturdays",
            ];
            let named: Vec<&str> = (0..7)
                .filter(|d| days & (1 << d) != 0)
                .map(|d| names[d])
                .collect();
            return format!("{} at {at}", named.join(" and "));
        }
        if !self.any_day && self.any_weekday && self.months == 0x1ffe {
            let dates = one(u64::from(self.days), 32);
            if dates.len() == 1 {
                return format!("day {} of every month at {at}", dates[0]);
            }
        }
        format!("cron \"{}\"", self.text)
    }
}

/// One field's values as a bit set (bit n: value n).
fn field_set(field: &str, index: usize) -> Result<u64, String> {
    let (name, low, high) = FIELDS[index];
    let mut set = 0u64;
    for item in field.split(',') {
        let bad = |why: &str| {
            format!("the {name} field {field:?}: {why} (allowed: {low}-{high}, *, lists a,b, ranges a-b, steps */n)")
        };
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => {
                let step: u32 = step
                    .parse()
                    .map_err(|_| bad(&format!("step {step:?} is not a number")))?;
                if step == 0 {
                    return Err(bad("a step of 0"));
                }
                (range, step)
            }
            None => (item, 1),
        };
        let (from, to) = if range == "*" {
            (low, if index == 4 { 6 } else { high })
        } else if let Some((a, b)) = range.split_once('-') {
            (
                value(a, index).map_err(|w| bad(&w))?,
                value(b, index).map_err(|w| bad(&w))?,
            )
        } else {
            let v = value(range, index).map_err(|w| bad(&w))?;
            // `5/15` is from 5 to the end, every 15.
            (v, if step > 1 { high } else { v })
        };
        for v in [from, to] {
            if v < low || v > high {
                return Err(bad(&format!("{v} is out of range")));
            }
        }
        if from > to {
            return Err(bad(&format!("the range {from}-{to} runs backwards")));
        }
        let mut v = from;
        while v <= to {
            set |= 1 << v;
            v += step;
        }
    }
    Ok(set)
}

/// A number, or a month's or weekday's English abbreviation.
fn value(text: &str, index: usize) -> Result<u32, String> {
    if let Ok(n) = text.parse() {
        return Ok(n);
    }
    let lower = text.to_ascii_lowercase();
    let names: &[&str] = match index {
        3 => &MONTHS,
        4 => &WEEKDAYS,
        _ => &[],
    };
    let offset = if index == 3 { 1 } else { 0 };
    names
        .iter()
        .position(|n| *n == lower)
        .map(|p| p as u32 + offset)
        .ok_or_else(|| {
            format!(
                "{text:?} is not a number{}",
                if names.is_empty() { "" } else { " or a name" }
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono_tz::Tz;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn runs(schedule: &str, zone: &Tz, from: &str, n: usize) -> Vec<String> {
        let s = Schedule::parse(schedule).unwrap();
        let mut t = at(from);
        let mut out = Vec::new();
        for _ in 0..n {
            t = s.next_after(zone, t).unwrap();
            out.push(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        }
        out
    }

    #[test]
    fn a_daily_job_crosses_the_day_boundary_in_its_own_zone() {
        // 07:00 in Berlin is 06:00 UTC in winter.
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        assert_eq!(
            runs("0 7 * * *", &berlin, "2026-11-24T06:30:00Z", 2),
            ["2026-11-25T06:00:00Z", "2026-11-26T06:00:00Z"]
        );
        // 23:30 in New York is the next UTC day: from 00:00 UTC on the
        // 24th (19:00 on the 23rd there), the 23rd's run comes first.
        let ny: Tz = "America/New_York".parse().unwrap();
        assert_eq!(
            runs("30 23 * * *", &ny, "2026-11-24T00:00:00Z", 2),
            ["2026-11-24T04:30:00Z", "2026-11-25T04:30:00Z"]
        );
    }

    #[test]
    fn spring_forward_neither_skips_nor_doubles_a_daily_run() {
        // New York, 2026-03-08: 02:00 jumps to 03:00.
        let ny: Tz = "America/New_York".parse().unwrap();
        assert_eq!(
            runs("30 2 * * *", &ny, "2026-03-07T00:00:00Z", 3),
            // 02:30 EST the day before; at the change (03:00 EDT) on the
            // day; 02:30 EDT after.
            [
                "2026-03-07T07:30:00Z",
                "2026-03-08T07:00:00Z",
                "2026-03-09T06:30:00Z"
            ]
        );
    }

    #[test]
    fn fall_back_runs_a_repeated_time_once() {
        // New York, 2026-11-01: 01:00–02:00 happens twice.
        let ny: Tz = "America/New_York".parse().unwrap();
        assert_eq!(
            runs("30 1 * * *", &ny, "2026-10-31T12:00:00Z", 2),
            ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"]
        );
    }

    #[test]
    fn an_hourly_job_follows_the_wall_clock_through_both_changes() {
        let ny: Tz = "America/New_York".parse().unwrap();
        // Autumn: the repeated hour is an hour of its own (two runs).
        assert_eq!(
            runs("0 * * * *", &ny, "2026-11-01T04:30:00Z", 3),
            [
                "2026-11-01T05:00:00Z",
                "2026-11-01T06:00:00Z",
                "2026-11-01T07:00:00Z"
            ]
        );
        // Spring: the skipped hour has no run; the hours around it do.
        assert_eq!(
            runs("0 * * * *", &ny, "2026-03-08T06:30:00Z", 2),
            ["2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"]
        );
    }

    #[test]
    fn weekdays_months_steps_lists_and_names() {
        let utc: Tz = "UTC".parse().unwrap();
        // 2026-11-27 is a Friday.
        assert_eq!(
            runs("0 18 * * sun", &utc, "2026-11-27T00:00:00Z", 2),
            ["2026-11-29T18:00:00Z", "2026-12-06T18:00:00Z"]
        );
        assert_eq!(
            runs("*/20 9 * * 1-5", &utc, "2026-11-27T09:30:00Z", 3),
            [
                "2026-11-27T09:40:00Z",
                "2026-11-30T09:00:00Z",
                "2026-11-30T09:20:00Z"
            ]
        );
        assert_eq!(
            runs("0 0 1 jan,jul *", &utc, "2026-11-27T00:00:00Z", 2),
            ["2027-01-01T00:00:00Z", "2027-07-01T00:00:00Z"]
        );
        // Both days restricted: either matches (the 1st, or a Sunday).
        assert_eq!(
            runs("0 0 1 * 0", &utc, "2026-11-27T00:00:00Z", 2),
            ["2026-11-29T00:00:00Z", "2026-12-01T00:00:00Z"]
        );
        assert_eq!(
            runs("@weekly", &utc, "2026-11-27T00:00:00Z", 1),
            ["2026-11-29T00:00:00Z"]
        );
        assert_eq!(
            runs("0 6 * * 7", &utc, "2026-11-27T00:00:00Z", 1),
            ["2026-11-29T06:00:00Z"]
        );
    }

    #[test]
    fn a_schedule_that_never_fires_says_so() {
        let utc: Tz = "UTC".parse().unwrap();
        let never = Schedule::parse("0 0 30 2 *").unwrap();
        assert_eq!(never.next_after(&utc, at("2026-11-27T00:00:00Z")), None);
    }

    #[test]
    fn a_bad_schedule_names_the_field_and_the_fix() {
        for (text, says) in [
            ("0 7 * *", "4 field(s); a schedule has five"),
            ("61 * * * *", "the minute field \"61\": 61 is out of range"),
            ("0 25 * * *", "the hour field"),
            ("0 7 * * funday", "\"funday\" is not a number or a name"),
            ("*/0 * * * *", "a step of 0"),
            ("0 9-5 * * *", "runs backwards"),
            ("@often", "not a macro"),
        ] {
            let e = Schedule::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn schedules_in_words() {
        for (text, words) in [
            ("0 7 * * *", "every day at 07:00"),
            ("15 * * * *", "every hour at :15"),
            ("*/15 * * * *", "every 15 minutes"),
            ("0 18 * * 0", "Sundays at 18:00"),
            ("30 9 * * 1-5", "weekdays at 09:30"),
            ("0 6 1 * *", "day 1 of every month at 06:00"),
            ("0 6 1 1 *", "cron \"0 6 1 1 *\""),
        ] {
            assert_eq!(Schedule::parse(text).unwrap().describe(), words, "{text}");
        }
    }
}
