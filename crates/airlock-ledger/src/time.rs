//! Receipt time stamps: RFC 3339 in UTC with exactly three fractional digits
//! (`2026-11-22T14:18:30.123Z`). The fixed width makes them sort as text, which the trust
//! registry relies on when it asks whether a key was valid at a receipt's time.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::LedgerError;

/// The current time in the ledger's format.
pub fn now() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    format_millis(ms)
}

/// Formats milliseconds since the Unix epoch.
pub fn format_millis(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Checks the exact shape `YYYY-MM-DDTHH:MM:SS.mmmZ` with plausible field ranges.
pub fn check(what: &'static str, s: &str) -> Result<(), LedgerError> {
    let b = s.as_bytes();
    let shape = b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        });
    let num =
        |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<u32>().ok()).unwrap_or(99);
    if !shape
        || !(1..=12).contains(&num(5..7))
        || !(1..=31).contains(&num(8..10))
        || num(11..13) > 23
        || num(14..16) > 59
        || num(17..19) > 60
    {
        return Err(LedgerError::malformed(
            what,
            format!("time {s:?} is not YYYY-MM-DDTHH:MM:SS.mmmZ"),
        ));
    }
    Ok(())
}

// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_millis(1_795_357_110_999), "2026-11-22T14:18:30.999Z");
        assert!(check("t", &now()).is_ok());
        assert!(check("t", "2026-11-22T14:18:30Z").is_err());
        assert!(check("t", "2026-13-22T14:18:30.000Z").is_err());
    }
}
