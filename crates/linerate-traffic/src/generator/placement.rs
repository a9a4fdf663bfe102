//! Which CPU each sending thread is pinned to.

use super::config::Placement;
use super::error::GenError;

/// The CPU of each of `threads` threads (`None`: not pinned), CPUs taken in turn. Pinning to
/// the allowed CPUs pins nothing where the system does not say which those are.
pub(super) fn cpus(placement: &Placement, threads: usize) -> Result<Vec<Option<usize>>, GenError> {
    let allowed = || linerate_sys::affinity::allowed_cpus();
    let list = match placement {
        Placement::Unpinned => return Ok(vec![None; threads]),
        Placement::Cpus(list) => {
            let allowed = allowed();
            if let Some(&cpu) = list
                .iter()
                .find(|c| !allowed.is_empty() && !allowed.contains(c))
            {
                return Err(GenError::CpuNotAllowed { cpu, allowed });
            }
            list.clone()
        }
        Placement::Allowed => allowed(),
    };
    if list.is_empty() {
        return Ok(vec![None; threads]);
    }
    Ok((0..threads).map(|t| Some(list[t % list.len()])).collect())
}
