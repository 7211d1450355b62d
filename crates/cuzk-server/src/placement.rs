//! Where a circuit's parameters are, as status reports it (gRPC `SRSStatus.tier` and the
//! HTTP `/status` page), from the store's entries and the devices' resident copies.
//!
//! - HOT: where proofs run: resident in a GPU's memory, or loaded in host memory when some
//!   device proves from host memory (the CPU backend).
//! - WARM: loaded in host memory, but no device proves from there and none holds a copy.
//! - COLD: only on disk.

use cuzk_engine::DeviceStatus;
use cuzk_filecoin::{SrsEntry, Tier};

use crate::proto::srs_status::Tier as WireTier;

/// One circuit's parameters: tier and the devices holding them where they prove.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The tier.
    pub tier: WireTier,
    /// Ids of the devices that prove from this copy.
    pub devices: Vec<String>,
}

/// The placement of `entry` given the devices' status.
pub fn placement(entry: &SrsEntry, devices: &[DeviceStatus]) -> Placement {
    if entry.tier == Tier::Cold {
        return Placement {
            tier: WireTier::Cold,
            devices: Vec::new(),
        };
    }
    let on: Vec<String> = devices
        .iter()
        .filter(|d| match &d.resident_sources {
            None => true,
            Some(ids) => entry.source_id.is_some_and(|id| ids.contains(&id)),
        })
        .map(|d| d.info.id.clone())
        .collect();
    Placement {
        tier: if on.is_empty() {
            WireTier::Warm
        } else {
            WireTier::Hot
        },
        devices: on,
    }
}

/// The tier's name on the status page.
pub fn tier_name(t: WireTier) -> &'static str {
    match t {
        WireTier::Hot => "hot",
        WireTier::Warm => "warm",
        WireTier::Cold => "cold",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_engine::DeviceInfo;
    use std::time::Duration;

    fn device(id: &str, resident: Option<Vec<u64>>) -> DeviceStatus {
        DeviceStatus {
            info: DeviceInfo {
                id: id.into(),
                name: id.into(),
                memory_total: 0,
                ordinal: None,
            },
            busy: Duration::ZERO,
            busy_last_minute: 0.0,
            activity: Vec::new(),
            current_job: None,
            memory_used: 0,
            memory_budget: 0,
            memory_free: None,
            resident_sources: resident,
            health: cuzk_engine::Health::Healthy,
            faults: 0,
            fallback: false,
        }
    }

    fn entry(tier: Tier, source_id: Option<u64>) -> SrsEntry {
        SrsEntry {
            srs_id: "porep-2k".into(),
            identifier: "x".into(),
            tier,
            bytes: 1,
            refs: 0,
            source_id,
        }
    }

    #[test]
    fn resident_on_a_gpu_is_hot_loaded_only_is_warm_on_disk_is_cold() {
        let gpus = [
            device("cuda:a", Some(vec![7])),
            device("cuda:b", Some(vec![])),
        ];
        let p = placement(&entry(Tier::Hot, Some(7)), &gpus);
        assert_eq!(p.tier, WireTier::Hot);
        assert_eq!(p.devices, ["cuda:a"]);
        let p = placement(&entry(Tier::Hot, Some(8)), &gpus);
        assert_eq!(p.tier, WireTier::Warm);
        assert!(p.devices.is_empty());
        assert_eq!(
            placement(&entry(Tier::Cold, None), &gpus).tier,
            WireTier::Cold
        );
        // A device proving from host memory makes every loaded copy hot.
        let cpu = [device("cpu", None)];
        let p = placement(&entry(Tier::Hot, Some(8)), &cpu);
        assert_eq!(
            (p.tier, p.devices),
            (WireTier::Hot, vec!["cpu".to_string()])
        );
    }
}
