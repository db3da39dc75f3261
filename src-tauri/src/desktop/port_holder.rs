//! Which process listens on a TCP port, from `/proc` (the kernel's socket tables, then each
//! process's open files): the desktop app names it when the proxy's port is taken. Processes
//! of other users cannot be looked into; they come back as unknown.

use std::path::Path;

/// A process listening on the port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`).
    pub name: String,
}

/// The process listening on `port` (IPv4 or IPv6), when it can be found.
pub fn holder(port: u16) -> Option<Holder> {
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| listening_inodes(&text, port))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if holds(&entry.path(), &wanted) {
            let name = std::fs::read_to_string(entry.path().join("comm"))
                .map(|n| n.trim().to_owned())
                .unwrap_or_default();
            return Some(Holder { pid, name });
        }
    }
    None
}

/// The socket inodes listening on `port` in one `/proc/net/tcp*` table.
fn listening_inodes(table: &str, port: u16) -> Vec<String> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local = cols.get(1)?;
            let state = cols.get(3)?;
            let inode = cols.get(9)?;
            let (_, hex_port) = local.rsplit_once(':')?;
            let listening = *state == LISTEN && u16::from_str_radix(hex_port, 16).ok()? == port;
            (listening && *inode != "0").then(|| (*inode).to_owned())
        })
        .collect()
}

/// Whether the process at `proc_dir` has one of `sockets` open.
fn holds(proc_dir: &Path, sockets: &[String]) -> bool {
    let Ok(fds) = std::fs::read_dir(proc_dir.join("fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| sockets.iter().any(|s| target.as_os_str() == s.as_str()))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn finds_this_process_listening() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let found = holder(port).unwrap();
        assert_eq!(found.pid, std::process::id());
        assert!(!found.name.is_empty());
        drop(listener);
        assert_eq!(holder(port), None);
    }

    #[test]
    fn reads_the_listening_rows_of_a_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:7530 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0\n   1: 0100007F:7530 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0\n";
        assert_eq!(listening_inodes(table, 30000), vec!["4242".to_owned()]);
        assert!(listening_inodes(table, 30001).is_empty());
    }
}
