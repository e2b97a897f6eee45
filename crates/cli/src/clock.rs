//! The local wall-clock time as `YYYYMMDD_HHMMSS`, for report directory names.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn local_stamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (y, mo, d, h, mi, s) = local_fields(secs).unwrap_or_else(|| utc_fields(secs));
    format!("{y:04}{mo:02}{d:02}_{h:02}{mi:02}{s:02}")
}

#[cfg(unix)]
fn local_fields(secs: i64) -> Option<(i64, u32, u32, u32, u32, u32)> {
    let t: libc::time_t = secs as libc::time_t;
    // SAFETY: `localtime_r` writes only into the `tm` we hand it and reads `t`; both outlive the call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    ok.then(|| {
        (
            i64::from(tm.tm_year) + 1900,
            (tm.tm_mon + 1) as u32,
            tm.tm_mday as u32,
            tm.tm_hour as u32,
            tm.tm_min as u32,
            tm.tm_sec as u32,
        )
    })
}

#[cfg(not(unix))]
fn local_fields(_secs: i64) -> Option<(i64, u32, u32, u32, u32, u32)> {
    None
}

/// UTC fields from seconds since the epoch (days to civil date: Howard Hinnant's algorithm).
fn utc_fields(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_fields_of_known_instants() {
        assert_eq!(super::utc_fields(0), (1970, 1, 1, 0, 0, 0));
        // 2026-11-22 10:18:48 UTC
        assert_eq!(super::utc_fields(1_795_342_728), (2026, 11, 22, 10, 18, 48));
        assert_eq!(super::utc_fields(951_782_400), (2000, 2, 29, 0, 0, 0));
    }
}
