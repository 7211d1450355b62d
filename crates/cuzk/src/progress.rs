//! Progress display for long steps: a spinner per step on a terminal, plain lines otherwise.

use std::sync::Mutex;
use std::time::Duration;

use cuzk_filecoin::fixtures::Progress;
use indicatif::{ProgressBar, ProgressStyle};

/// Spinners on stderr.
#[derive(Debug, Default)]
pub struct Spinner {
    bar: Mutex<Option<(ProgressBar, String)>>,
}

impl Progress for Spinner {
    fn step(&self, msg: &str) {
        let bar = ProgressBar::new_spinner();
        if bar.is_hidden() {
            eprintln!("{msg} ...");
        } else {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .expect("valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(msg.to_owned());
        }
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some((bar, msg.to_owned()));
    }

    fn done(&self, took: Duration) {
        if let Some((bar, msg)) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
            eprintln!("{msg}: done in {:.1} s", took.as_secs_f64());
        }
    }

    fn note(&self, msg: &str) {
        eprintln!("  {msg}");
    }
}
