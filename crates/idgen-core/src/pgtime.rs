//! PostgreSQL timestamps (microseconds since 2000-01-01 00:00 UTC) and unix time.

pub const PG_EPOCH_UNIX_SECONDS: i64 = 946_684_800;
const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_MILLI: i64 = 1_000;

/// The unix second holding a PostgreSQL timestamp (fractions round down, also before 1970).
pub fn unix_seconds(pg_micros: i64) -> i64 {
    pg_micros.div_euclid(MICROS_PER_SECOND) + PG_EPOCH_UNIX_SECONDS
}

/// The unix millisecond holding a PostgreSQL timestamp.
pub fn unix_millis(pg_micros: i64) -> i64 {
    pg_micros.div_euclid(MICROS_PER_MILLI) + PG_EPOCH_UNIX_SECONDS * 1_000
}

pub fn pg_micros_from_unix_seconds(unix_seconds: i64) -> Option<i64> {
    unix_seconds
        .checked_sub(PG_EPOCH_UNIX_SECONDS)?
        .checked_mul(MICROS_PER_SECOND)
}

pub fn pg_micros_from_unix_millis(unix_millis: i64) -> Option<i64> {
    unix_millis
        .checked_sub(PG_EPOCH_UNIX_SECONDS * 1_000)?
        .checked_mul(MICROS_PER_MILLI)
}

/// The one text form of a UTC moment that the registry's messages use: RFC 3339 with exactly
/// six fraction digits and `Z`, as in `2026-12-04T10:35:12.345678Z` (27 characters).
pub const UTC_MICROS_TEXT_LEN: usize = 27;

/// Days from 1970-01-01 to the proleptic Gregorian date `year-month-day` (a valid date).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Years counted from March, so that the leap day ends the year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `(year, month, day)` that is `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The unix microsecond of a UTC moment written `YYYY-MM-DDTHH:MM:SS.ffffffZ` (years
/// 0001-9999, no leap second); `None` for any other text.
pub fn parse_utc_micros(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != UTC_MICROS_TEXT_LEN {
        return None;
    }
    let separators = [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (26, b'Z'),
    ];
    if separators.iter().any(|&(at, c)| b[at] != c) {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<i64> {
        b[from..to].iter().try_fold(0i64, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    let fraction = number(20, 26)?;
    if year < 1
        || !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second;
    Some(seconds * MICROS_PER_SECOND + fraction)
}

/// The text [`parse_utc_micros`] reads, for a unix microsecond in the years 0001-9999; `None`
/// outside them.
pub fn format_utc_micros(unix_micros: i64) -> Option<String> {
    let seconds = unix_micros.div_euclid(MICROS_PER_SECOND);
    let fraction = unix_micros.rem_euclid(MICROS_PER_SECOND);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    if !(1..=9999).contains(&year) {
        return None;
    }
    let in_day = seconds.rem_euclid(86_400);
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{fraction:06}Z",
        in_day / 3_600,
        in_day / 60 % 60,
        in_day % 60
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_both_ways() {
        assert_eq!(unix_seconds(0), PG_EPOCH_UNIX_SECONDS);
        assert_eq!(unix_seconds(-1), PG_EPOCH_UNIX_SECONDS - 1);
        assert_eq!(unix_seconds(1_999_999), PG_EPOCH_UNIX_SECONDS + 1);
        assert_eq!(unix_millis(-1), PG_EPOCH_UNIX_SECONDS * 1000 - 1);
        assert_eq!(
            pg_micros_from_unix_seconds(PG_EPOCH_UNIX_SECONDS + 2),
            Some(2_000_000)
        );
        assert_eq!(
            pg_micros_from_unix_millis(PG_EPOCH_UNIX_SECONDS * 1000 + 3),
            Some(3_000)
        );
        assert_eq!(
            unix_seconds(i64::MAX),
            i64::MAX / 1_000_000 + PG_EPOCH_UNIX_SECONDS
        );
        assert_eq!(pg_micros_from_unix_seconds(i64::MAX), None);
    }

    #[test]
    fn utc_micros_text() {
        // The seconds are `date -u -d <moment> +%s`.
        for (text, unix_seconds, micros) in [
            ("1970-01-01T00:00:00.000000Z", 0, 0),
            ("1969-12-31T23:59:59.999999Z", -1, 999_999),
            ("2000-02-29T12:00:00.000000Z", 951_825_600, 0),
            ("2026-12-04T10:35:12.345678Z", 1_796_380_512, 345_678),
            ("2026-01-31T23:59:59.999999Z", 1_769_903_999, 999_999),
            ("0001-01-01T00:00:00.000000Z", -62_135_596_800, 0),
            ("9999-12-31T23:59:59.999999Z", 253_402_300_799, 999_999),
        ] {
            let expected = unix_seconds * 1_000_000 + micros;
            assert_eq!(parse_utc_micros(text), Some(expected), "{text}");
            assert_eq!(format_utc_micros(expected).as_deref(), Some(text));
        }
        for text in [
            "",
            "2026-12-04T10:35:12.345678",
            "2026-12-04T10:35:12.345678z",
            "2026-12-04 10:35:12.345678Z",
            "2026-12-04T10:35:12.34567Z",
            "2026-12-04T10:35:12.3456789Z",
            "2026-12-04T10:35:12,345678Z",
            "2026-12-04T10:35:12.345678+00",
            "2026-13-04T10:35:12.345678Z",
            "2026-00-04T10:35:12.345678Z",
            "2026-11-31T10:35:12.345678Z",
            "2023-02-29T10:35:12.345678Z",
            "2100-02-29T10:35:12.345678Z",
            "2026-12-00T10:35:12.345678Z",
            "2026-12-04T24:00:00.000000Z",
            "2026-12-04T10:60:12.345678Z",
            "2026-12-04T10:35:60.000000Z",
            "0000-12-04T10:35:12.345678Z",
            "+026-12-04T10:35:12.345678Z",
            "2026-12-04T10:35:12.34567\u{e9}Z",
        ] {
            assert_eq!(parse_utc_micros(text), None, "{text:?}");
        }
        assert_eq!(format_utc_micros(-62_135_596_800_000_001), None);
        assert_eq!(format_utc_micros(253_402_300_800_000_000), None);
        assert_eq!(format_utc_micros(i64::MIN), None);
        assert_eq!(format_utc_micros(i64::MAX), None);
    }

    proptest::proptest! {
        #[test]
        fn utc_micros_text_round_trips(
            micros in -62_135_596_800_000_000i64..=253_402_300_799_999_999,
        ) {
            let text = format_utc_micros(micros).unwrap();
            proptest::prop_assert_eq!(text.len(), UTC_MICROS_TEXT_LEN);
            proptest::prop_assert_eq!(parse_utc_micros(&text), Some(micros));
        }
    }
}
