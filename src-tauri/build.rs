//! With the `desktop` feature, Tauri's build step (it reads tauri.conf.json and capabilities/).
fn main() {
    #[cfg(feature = "desktop")]
    tauri_build::build();
}
