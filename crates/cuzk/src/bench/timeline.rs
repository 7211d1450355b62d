//! The device timeline of proved partitions, as `bench scale` prints it: per partition and
//! device operation (H with its MSM, then the L, A and B MSMs), the intervals its copies,
//! kernels and Pippenger took on the device, from CUDA events; then how the witness's L, A
//! and B scalars split by value (ones summed apart, the tail through Pippenger).

use cuzk_filecoin::StageTimings;
use cuzk_groth16::DeviceSpan;

fn interval((start, end): (f32, f32)) -> String {
    if start == 0.0 && end == 0.0 {
        "-".into()
    } else {
        format!("{start:.0}-{end:.0}")
    }
}

/// Prints the timeline table (nothing when no partition has one) and the split of the
/// first partition's scalars; `label` ends every row.
pub(super) fn report<'a>(parts: impl Iterator<Item = &'a StageTimings>, label: &str) {
    let parts: Vec<&StageTimings> = parts.collect();
    let timed: Vec<(usize, &StageTimings)> = parts
        .iter()
        .enumerate()
        .filter(|(_, t)| t.device.is_some())
        .map(|(k, t)| (k, *t))
        .collect();
    if !timed.is_empty() {
        println!();
        println!(
            "Device timeline per partition (ms from each operation's first command, CUDA events):"
        );
        println!("| row | operation | copies | kernels | Pippenger | wall (ms) | note |");
        println!("|---|---|---|---|---|---|---|");
        for (k, t) in timed {
            let d = t.device.expect("filtered");
            for (name, s) in d.spans() {
                let DeviceSpan {
                    upload,
                    compute,
                    msm,
                    wall,
                } = *s;
                println!(
                    "| {k} | {name} | {} | {} | {} | {wall:.1} | {label} |",
                    interval(upload),
                    interval(compute),
                    interval(msm),
                );
            }
        }
    }
    if let Some(split) = parts.iter().find_map(|t| t.split) {
        println!();
        for (name, c) in ["L", "A", "B"].iter().zip(split) {
            println!("Witness split, {name}: {c} ({label})");
        }
    }
}
