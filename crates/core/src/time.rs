//! Clock readings (milliseconds since the Unix epoch, UTC) as text: the `yyyymmdd-HHMMss` stamp
//! that starts a pipeline session id, and an ISO 8601 instant for what a person or model reads.

/// Calendar fields of an instant in UTC.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
}

fn civil(epoch_ms: i64) -> Civil {
    let secs = epoch_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400) as u32;
    // Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's civil_from_days).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: rem / 3600,
        minute: rem % 3600 / 60,
        second: rem % 60,
    }
}

/// `yyyymmdd-HHMMss` in UTC.
pub fn session_stamp(epoch_ms: i64) -> String {
    let c = civil(epoch_ms);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// `yyyy-mm-ddTHH:MM:SSZ` in UTC.
pub fn iso_utc(epoch_ms: i64) -> String {
    let c = civil(epoch_ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_a_leap_day_format() {
        assert_eq!(session_stamp(0), "19700101-000000");
        // 2024-02-29T13:45:07Z
        assert_eq!(session_stamp(1_709_214_307_000), "20240229-134507");
        assert_eq!(iso_utc(1_709_214_307_999), "2024-02-29T13:45:07Z");
    }
}
