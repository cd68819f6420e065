//! The report `aot bench` prints: sections (tables), summary lines against their targets, and
//! the machine it ran on.
use std::io::Write;

/// One table of the report.
#[derive(Debug, serde::Serialize)]
pub(super) struct Section {
    pub(super) title: String,
    pub(super) note: String,
    pub(super) headers: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
}

/// One summary line: a metric, its value, its target and whether the value meets it.
#[derive(Debug, serde::Serialize)]
pub(super) struct SummaryLine {
    pub(super) metric: String,
    pub(super) value: String,
    pub(super) target: String,
    pub(super) met: Option<bool>,
}

#[derive(Debug, Default, serde::Serialize)]
pub(super) struct Report {
    pub(super) date_unix: u64,
    pub(super) machine: String,
    pub(super) quick: bool,
    pub(super) sections: Vec<Section>,
    pub(super) summary: Vec<SummaryLine>,
}

impl Report {
    pub(super) fn line(&mut self, metric: &str, value: String, target: &str, met: Option<bool>) {
        self.summary.push(SummaryLine {
            metric: metric.into(),
            value,
            target: target.into(),
            met,
        });
    }

    pub(super) fn markdown(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "# aot bench{} — {}, unix time {}\n",
            if self.quick { " --quick" } else { "" },
            self.machine,
            self.date_unix
        )?;
        for s in &self.sections {
            writeln!(out, "## {}\n", s.title)?;
            if !s.note.is_empty() {
                writeln!(out, "{}\n", s.note)?;
            }
            writeln!(out, "| {} |", s.headers.join(" | "))?;
            let align: Vec<&str> = (0..s.headers.len())
                .map(|i| if i == 0 { "---" } else { "---:" })
                .collect();
            writeln!(out, "| {} |", align.join(" | "))?;
            for r in &s.rows {
                writeln!(out, "| {} |", r.join(" | "))?;
            }
            writeln!(out)?;
        }
        writeln!(out, "## Summary\n")?;
        writeln!(out, "| metric | value | target | met |")?;
        writeln!(out, "| --- | ---: | --- | :---: |")?;
        for l in &self.summary {
            let met = match l.met {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            };
            writeln!(out, "| {} | {} | {} | {met} |", l.metric, l.value, l.target)?;
        }
        Ok(())
    }
}

pub(super) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    let profile = if cfg!(debug_assertions) {
        "debug build"
    } else {
        "release build"
    };
    format!("{cpu}, {cores} cores, load average {load} at start, {profile}")
}
