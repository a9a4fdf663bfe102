//! Which CPUs to sample: the online ones (`/sys/devices/system/cpu/online`), and CPU lists in
//! the kernel's notation (`0-3,6`).

use crate::error::{CpuListError, ProfileError};

/// The CPUs that are online, from `/sys/devices/system/cpu/online` (`0-3,6`).
pub fn online_cpus() -> Result<Vec<u32>, ProfileError> {
    const PATH: &str = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(PATH)
        .map_err(|source| ProfileError::ReadCpus { path: PATH, source })?;
    parse_cpu_list(text.trim()).map_err(|source| ProfileError::BadCpuList {
        path: PATH,
        text,
        source,
    })
}

/// The CPUs of a list such as `0-3,6` (in the order given, repeats kept).
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, CpuListError> {
    let mut cpus = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>()?..=b.parse::<u32>()?),
            None => cpus.push(part.parse()?),
        }
    }
    if cpus.is_empty() {
        return Err(CpuListError::Empty);
    }
    Ok(cpus)
}

/// The CPUs `--cpu list` asks to sample, in order without repeats; each must be `online`.
///
/// # Errors
/// [`ProfileError::CpuArg`] (not a list), [`ProfileError::Offline`].
pub fn chosen(list: &str, online: &[u32]) -> Result<Vec<u32>, ProfileError> {
    let mut cpus = parse_cpu_list(list).map_err(|source| ProfileError::CpuArg {
        list: list.to_owned(),
        source,
    })?;
    cpus.sort_unstable();
    cpus.dedup();
    if let Some(&cpu) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(ProfileError::Offline {
            list: list.to_owned(),
            cpu,
            online: online
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
        });
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chosen_cpus_must_be_online() {
        assert_eq!(chosen("1,0,1", &[0, 1]).expect("valid"), vec![0, 1]);
        let e = chosen("0-2", &[0, 1]).expect_err("cpu 2 offline");
        assert!(
            e.to_string().contains("CPU 2 is not online (online: 0,1)"),
            "{e}"
        );
        let e = chosen("a", &[0]).expect_err("bad");
        assert_eq!(
            e.to_string(),
            "--cpu \"a\": invalid digit found in string (a list such as 0 or 0-3,6)"
        );
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,6").expect("valid"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("0").expect("valid"), vec![0]);
        assert_eq!(
            parse_cpu_list("x").expect_err("bad").to_string(),
            "invalid digit found in string"
        );
        assert_eq!(
            parse_cpu_list("").expect_err("empty").to_string(),
            "no CPU listed"
        );
    }

    #[test]
    fn this_machine_has_an_online_cpu() {
        assert!(
            !online_cpus()
                .expect("sysfs lists the online CPUs")
                .is_empty()
        );
    }
}
