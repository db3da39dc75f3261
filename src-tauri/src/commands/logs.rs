//! `metaclaw logs [-f] [-n N]`: the newest log file under `$METACLAW_HOME/logs/`.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::time::Duration;

use metaclaw_engine::paths::Paths;

use crate::exit::{Failure, Outcome};

pub fn run(paths: &Paths, follow: bool, lines: usize) -> Outcome {
    let Some(file) = metaclaw_engine::logging::newest_log(&paths.logs) else {
        return Err(Failure::error(format!(
            "no log file yet in {}",
            paths.logs.display()
        )));
    };
    let mut f = std::fs::File::open(&file)?;
    let all: Vec<String> = BufReader::new(&f).lines().collect::<Result<_, _>>()?;
    let mut out = std::io::stdout().lock();
    for l in all.iter().skip(all.len().saturating_sub(lines)) {
        writeln!(out, "{l}")?;
    }
    if !follow {
        return Ok(());
    }
    let mut pos = f.seek(SeekFrom::End(0))?;
    let mut buf = Vec::new();
    loop {
        out.flush()?;
        // tail -f: the log writer gives no notification to wait on, so look again shortly.
        std::thread::sleep(Duration::from_millis(250));
        let len = std::fs::metadata(&file)?.len();
        if len < pos {
            pos = 0;
        }
        f.seek(SeekFrom::Start(pos))?;
        buf.clear();
        f.read_to_end(&mut buf)?;
        pos += buf.len() as u64;
        out.write_all(&buf)?;
    }
}
