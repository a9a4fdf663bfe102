//! Headless Chromium for tests that render what linerate draws (reports, flame graphs), kept
//! off every network, and a look at the screenshot it takes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

/// Chromium, kept off every network: all traffic goes to a proxy on a closed loopback port,
/// so even the browser's own background fetches stay on this machine.
pub fn chromium(page: &Path, work: &Path, shot: &Path) -> Option<(Output, serde_json::Value)> {
    let browser = ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })?;
    let profile = work.join("profile");
    let netlog = work.join("netlog.json");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-domain-reliability",
            "--no-pings",
            "--proxy-server=127.0.0.1:1",
            "--proxy-bypass-list=<-loopback>",
            "--hide-scrollbars",
            "--window-size=1100,1800",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let log = std::fs::read_to_string(&netlog).unwrap_or_default();
    // A netlog cut short by the browser's exit lacks its closing brackets.
    let log: serde_json::Value = serde_json::from_str(&log)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", log.trim_end().trim_end_matches(','))))
        .unwrap_or(serde_json::Value::Null);
    Some((out, log))
}

pub struct Picture {
    pub width: u32,
    pub height: u32,
    /// Share of pixels that are not (near) white.
    pub inked: f64,
    pub colours: usize,
}

pub fn picture(bytes: &[u8]) -> Picture {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let mut inked = 0usize;
    let mut colours = std::collections::HashSet::new();
    let mut total = 0usize;
    for px in pixels.chunks(channels) {
        total += 1;
        if px.iter().take(3).any(|&c| c < 235) {
            inked += 1;
        }
        if colours.len() < 10_000 {
            colours.insert(px.iter().take(3).copied().collect::<Vec<u8>>());
        }
    }
    #[allow(clippy::cast_precision_loss)]
    Picture {
        width: info.width,
        height: info.height,
        inked: inked as f64 / total as f64,
        colours: colours.len(),
    }
}
